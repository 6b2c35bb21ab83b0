// Schema endpoints: the DP RPC lookup shape (docs/protocol.md §2.6) served from what this daemon knows, the
// list of known schemas, and adding a definition (`hearth schema add`).
import type { StorageBackend } from '../../storage/types.js'
import type { Logger } from '../../log.js'
import type { SchemaResolver, ResolvedSchema } from '../../registry/types.js'
import { isLocalSchemaId } from '../../registry/types.js'
import type { SchemaRegistry } from '../../registry/resolver.js'
import { answerDpRpcRoute } from '../../registry/dp-rpc-serve.js'
import { dpRpcRoute } from '../../registry/dp-rpc-shape.js'
import { ok, type Reply } from '../http.js'
import type { Router } from '../router.js'

export interface SchemaRouteDeps {
  registry: SchemaRegistry
  /** What lookups are answered from: never a DP RPC source, so two daemons cannot bounce a miss. */
  serving: Pick<SchemaResolver, 'byScope' | 'byId'>
  storage: StorageBackend
  logger: Logger
  /** A definition was added locally: queue its on-chain registration. */
  onSchemaAdded?: (schema: ResolvedSchema) => void
  /** definitionUrls of the shipped definitions. */
  shipped?: ReadonlySet<string>
}

/** Where a known schema came from: registered on chain, shipped with Hearth, or added here. */
export function schemaSource (record: { id: string; definitionUrl: string }, shipped: ReadonlySet<string>): 'chain' | 'shipped' | 'added' {
  if (!isLocalSchemaId(record.id)) return 'chain'
  return shipped.has(record.definitionUrl) ? 'shipped' : 'added'
}

export function addSchemaRoutes (router: Router, deps: SchemaRouteDeps): void {
  const lookup = async (pathAndQuery: string): Promise<Reply> => {
    const route = dpRpcRoute(pathAndQuery)
    if (route === null) return { status: 404, body: { error: { code: 404, errorCode: 'NOT_FOUND', message: 'not a schema lookup path' } } }
    const answer = await answerDpRpcRoute(deps.serving, route, {
      proofFor: (record) => ({ source: isLocalSchemaId(record.id) ? 'hearth-cache' : 'chain' })
    })
    return { status: answer.status, body: answer.body }
  }

  router.get('/v1/schemas', async (req) => {
    if (req.url.searchParams.has('scope')) return await lookup(req.url.pathname + req.url.search)
    const schemas = await deps.registry.list()
    return ok({
      schemas: schemas.map(({ definition, ...record }) => ({ ...record, source: schemaSource(record, deps.shipped ?? new Set()), version: definition.version, description: definition.description ?? null })),
      sources: deps.registry.sourceStatus()
    })
  })

  router.get('/v1/schemas/:id', async (req) => await lookup(req.url.pathname))

  router.post('/v1/schemas', async (req) => {
    const definition = await req.json()
    const result = await deps.registry.addLocalSchema(definition, { storage: deps.storage, sticky: true })
    if (result.added && isLocalSchemaId(result.schema.id)) deps.onSchemaAdded?.(result.schema)
    return ok({ schema: result.schema, added: result.added, latest: result.latest }, result.added ? 201 : 200)
  })
}
