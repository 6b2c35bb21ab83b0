// Wires schema knowledge: the persistent cache, the configured sources (a DP RPC service, the
// chain), the validator cache, and the shipped definitions that make a fresh install work offline
// (installed on start). Its status is each source's reachability.
import type { HomeLayout } from '../home.js'
import type { Logger } from '../log.js'
import type { HearthConfig } from '../config/types.js'
import { openKv, type HearthDatabase } from '../db/database.js'
import type { StorageBackend } from '../storage/types.js'
import type { ResolvedSchema, SchemaResolver } from '../registry/types.js'
import { createSchemaCache, type SchemaCache } from '../registry/cache.js'
import { createSchemaRegistry, type SchemaRegistry } from '../registry/resolver.js'
import { createDpRpcResolver } from '../registry/dp-rpc-client.js'
import { createDefinitionFetcher, type DefinitionFetcher } from '../registry/fetch-definition.js'
import { createSchemaValidators } from '../registry/validators.js'
import { installShippedSchemas } from '../registry/shipped.js'
import { createSchemaTrust, type SchemaTrust } from '../registry/trust.js'
import type { Validate } from '../ingest/pipeline.js'
import type { Service } from '../lifecycle/service.js'

export interface SchemaSetup {
  cache: SchemaCache
  registry: SchemaRegistry
  /** Answers the daemon's own lookup endpoints: cache and chain, never a DP RPC service. */
  serving: SchemaRegistry
  validate: Validate
  fetchDefinition: DefinitionFetcher
  /** definitionUrls of the definitions shipped with Hearth (a schema list says where each came from); filled on start. */
  shipped: ReadonlySet<string>
}

/** The definition fetcher the configuration asks for (deadline, schemes, internal addresses). */
export function definitionFetcherFor (config: HearthConfig, storage: StorageBackend): DefinitionFetcher {
  return createDefinitionFetcher({
    storage,
    timeoutMs: config.schemas.timeoutMs,
    allowHttp: config.schemas.allowHttpDefinitionUrls,
    allowPrivateAddresses: config.schemas.allowPrivateDefinitionUrls
  })
}

/** Whose schemas may become a scope's schema: the owner, this daemon's tx key, the configured owners. */
export function schemaTrustFor (config: HearthConfig, ownerAddress: string, txAddress?: string): SchemaTrust {
  return createSchemaTrust([ownerAddress, txAddress, ...config.schemas.trustedOwners])
}

export interface SchemaService extends SchemaSetup, Service {
  readonly name: 'schemaSources'
}

export interface SchemaSetupDeps {
  config: HearthConfig
  home: HomeLayout
  db: HearthDatabase
  storage: StorageBackend
  logger: Logger
  /** Sources known only after the chain is up (the chain resolver). */
  extraSources?: SchemaResolver[]
  trust: SchemaTrust
}

export function schemaService (deps: SchemaSetupDeps): SchemaService {
  const cache = createSchemaCache(openKv(deps.db, 'schemas'))
  const fetchDefinition = definitionFetcherFor(deps.config, deps.storage)
  const sources: SchemaResolver[] = [...(deps.extraSources ?? [])]
  if (deps.config.schemas.dpRpcUrl !== null) {
    sources.unshift(createDpRpcResolver({ baseUrl: deps.config.schemas.dpRpcUrl, timeoutMs: deps.config.schemas.timeoutMs, fetchDefinition, trust: deps.trust }))
  }
  const registry = createSchemaRegistry({ cache, sources, logger: deps.logger, trust: deps.trust })
  const serving = registry.withSources(deps.extraSources ?? [])
  const validators = createSchemaValidators({ logger: deps.logger })
  const validate: Validate = (schema: ResolvedSchema, data: unknown) => {
    try {
      return validators.validateData(schema, data)
    } catch (err) {
      // a definition whose JSON Schema does not compile rejects every file, with the reason
      return { ok: false, reasons: [`schema ${schema.id} cannot be used: ${(err as Error).message}`] }
    }
  }
  const shipped = new Set<string>()
  return {
    name: 'schemaSources',
    cache,
    registry,
    serving,
    validate,
    fetchDefinition,
    shipped,
    async start () {
      const installed = await installShippedSchemas(registry, deps.storage, { record: openKv(deps.db, 'shipped-schemas') })
      const added = installed.filter((r) => r.added).length
      if (added > 0) deps.logger.info({ added }, 'shipped schemas installed')
      for (const r of installed) shipped.add(r.schema.definitionUrl)
    },
    async stop () {},
    async status () { return registry.sourceStatus() }
  }
}

/** Build and start in one step (benches and tools that need schema knowledge without a daemon). */
export async function buildSchemaRegistry (deps: SchemaSetupDeps): Promise<SchemaSetup> {
  const schemas = schemaService(deps)
  await schemas.start()
  return schemas
}
