// A SchemaResolver over a schema lookup service (docs/protocol.md §2.6): the hosted DP RPC, or another
// Hearth daemon serving the same endpoints. The service says which schema and where its
// definition is; the definition itself is fetched and checked here, never taken on trust: its
// scope must be the scope the service claims (and the one asked for).
import { HearthError, isHearthError } from '../errors.js'
import { assertScope } from '../protocol/scope.js'
import { JSON_DIALECT, parseSchemaDefinition } from './definition.js'
import { parseDpRpcSchema } from './dp-rpc-shape.js'
import type { DefinitionFetcher } from './fetch-definition.js'
import { BodyTooLargeError, readBodyLimited } from './http-body.js'
import { isLocalSchemaId, type ResolvedSchema, type SchemaRecord, type SchemaResolver } from './types.js'
import { TRUST_ALL, type SchemaTrust } from './trust.js'

export interface DpRpcResolverOptions {
  /** e.g. `https://dp-rpc.example.org`; a path prefix is kept (`…/api` → `…/api/v1/schemas`). */
  baseUrl: string
  /** Deadline of one lookup request (the definition fetch has its own). Default 5 s. */
  timeoutMs?: number
  fetchDefinition: DefinitionFetcher
  /** Largest lookup answer accepted. Default 256 KiB. */
  maxResponseBytes?: number
  fetch?: typeof globalThis.fetch
  /** Resolver name in logs and status. Default `dp-rpc`. */
  name?: string
  /**
   * Whose schemas byScope may answer (see trust.ts). Another owner's schema for the scope is
   * answered as "none" without fetching its definition. Default: everyone's.
   */
  trust?: SchemaTrust
}

export function createDpRpcResolver (opts: DpRpcResolverOptions): SchemaResolver {
  let base: URL
  try {
    base = new URL(opts.baseUrl.endsWith('/') ? opts.baseUrl : opts.baseUrl + '/')
  } catch {
    throw new HearthError('CONFIG_INVALID', `the DP RPC URL ${JSON.stringify(opts.baseUrl)} is not a URL`)
  }
  if (base.protocol !== 'https:' && base.protocol !== 'http:') {
    throw new HearthError('CONFIG_INVALID', `the DP RPC URL must be http(s), got ${base.protocol}`)
  }
  const timeoutMs = opts.timeoutMs ?? 5_000
  const maxResponseBytes = opts.maxResponseBytes ?? 256 * 1024
  const doFetch = opts.fetch ?? globalThis.fetch
  const name = opts.name ?? 'dp-rpc'
  const trust = opts.trust ?? TRUST_ALL

  /** The record the service returns for `path`, or null on 404. */
  async function lookup (path: string, signal: AbortSignal | undefined): Promise<SchemaRecord | null> {
    const url = new URL(path, base).toString()
    const deadline = AbortSignal.timeout(timeoutMs)
    const combined = signal === undefined ? deadline : AbortSignal.any([signal, deadline])
    let response: Response
    try {
      response = await doFetch(url, { signal: combined, headers: { accept: 'application/json' } })
    } catch (err) {
      throw unavailable(url, deadline.aborted ? `no answer within ${timeoutMs} ms` : signal?.aborted === true ? 'aborted' : `request failed: ${causeText(err)}`, err)
    }
    if (response.status === 404) {
      await response.body?.cancel().catch(() => {})
      return null
    }
    if (response.status !== 200) {
      await response.body?.cancel().catch(() => {})
      throw unavailable(url, `HTTP ${response.status}`, undefined, response.status)
    }
    let body: unknown
    try {
      body = JSON.parse(new TextDecoder().decode(await readBodyLimited(response, maxResponseBytes)))
    } catch (err) {
      const reason = err instanceof BodyTooLargeError
        ? err.message
        : err instanceof SyntaxError ? 'the answer is not JSON' : deadline.aborted ? `no complete answer within ${timeoutMs} ms` : `read failed: ${causeText(err)}`
      throw unavailable(url, reason, err)
    }
    const parsed = parseDpRpcSchema((body as { data?: unknown } | null)?.data)
    if ('problem' in parsed) throw unavailable(url, `malformed answer: ${parsed.problem}`)
    return parsed.record
  }

  async function resolve (record: SchemaRecord, signal: AbortSignal | undefined): Promise<ResolvedSchema> {
    if (record.dialect !== JSON_DIALECT) {
      throw new HearthError('INVALID_SCHEMA_DEFINITION', `schema ${record.id} has dialect ${record.dialect}; Hearth validates "json" only`,
        { id: record.id, reasons: [`dialect ${JSON.stringify(record.dialect)} is not supported`] })
    }
    const bytes = await opts.fetchDefinition(record.definitionUrl, { signal })
    let definition
    try {
      definition = parseSchemaDefinition(bytes)
    } catch (err) {
      if (isHearthError(err, 'INVALID_SCHEMA_DEFINITION')) {
        throw new HearthError('INVALID_SCHEMA_DEFINITION', `the definition of schema ${record.id} (${record.definitionUrl}) is invalid: ${err.message}`,
          { id: record.id, definitionUrl: record.definitionUrl, reasons: err.details?.reasons }, { cause: err })
      }
      throw err
    }
    if (definition.scope !== record.scope) {
      throw new HearthError('SCHEMA_SCOPE_MISMATCH',
        `schema ${record.id} is listed for scope ${record.scope} but its definition (${record.definitionUrl}) is for ${definition.scope}`,
        { id: record.id, scope: record.scope, definitionScope: definition.scope, definitionUrl: record.definitionUrl })
    }
    return { ...record, definition }
  }

  return {
    name,
    async byScope (scope, callOpts = {}) {
      assertScope(scope)
      const record = await lookup(`v1/schemas?scope=${encodeURIComponent(scope)}`, callOpts.signal)
      if (record === null) return null
      if (record.scope !== scope) {
        throw new HearthError('SCHEMA_SCOPE_MISMATCH', `asked ${name} for scope ${scope}, it answered schema ${record.id} of scope ${record.scope}`,
          { scope, answeredScope: record.scope, id: record.id })
      }
      if (!trust.trusts(record)) return null
      return await resolve(record, callOpts.signal)
    },
    async byId (id, callOpts = {}) {
      // A local id names a definition only this daemon (or its peers) has; no service knows it.
      if (id.length === 0 || isLocalSchemaId(id)) return null
      const record = await lookup(`v1/schemas/${encodeURIComponent(id)}`, callOpts.signal)
      return record === null ? null : await resolve(record, callOpts.signal)
    }
  }
}

function unavailable (url: string, reason: string, cause?: unknown, status?: number): HearthError {
  return new HearthError('DPRPC_UNAVAILABLE', `schema lookup service unavailable (${url}): ${reason}`,
    { url, reason, ...(status !== undefined ? { status } : {}) }, cause !== undefined ? { cause } : undefined)
}

function causeText (err: unknown): string {
  const cause = (err as { cause?: { code?: string; message?: string } }).cause
  return cause?.code ?? cause?.message ?? (err as Error).message
}
