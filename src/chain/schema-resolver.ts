// Schema knowledge from the chain (docs/protocol.md §3.2). The DataRefinerRegistry stores no scope, so the
// scope of a schema is the one its definition document declares:
//   byId:    schemas(id) → fetch the definition → parse → the record with the definition's scope;
//   byScope: SchemaAdded events are indexed incrementally (last scanned block and scope → ids are
//            kept in the kv), and the newest id whose definition names the scope wins — among the
//            schemas registered by trusted owners only (registry/trust.ts): the contract keeps no
//            owner, so the owner is the account that sent the addSchema transaction. A schema of
//            anyone else is not indexed by scope, and its definition is not even fetched for it.
// Resolved schemas are cached forever (definitions are content-addressed and ids immutable).
import { HearthError, isHearthError } from '../errors.js'
import type { Kv } from '../db/database.js'
import { silentLogger, type Logger } from '../log.js'
import type { ResolvedSchema, SchemaDefinition, SchemaResolver } from '../registry/types.js'
import { TRUST_ALL, type SchemaTrust } from '../registry/trust.js'
import type { ChainClient, SchemaAddedEvent } from './client.js'
import { mapLimit } from './transactions.js'

export interface ChainSchemaResolverOptions {
  chain: ChainClient
  /** The definition document at a definitionUrl (ipfs:// through storage, https:// with limits). */
  fetchDefinition: (url: string, opts?: { signal?: AbortSignal }) => Promise<Uint8Array>
  /** Throws INVALID_SCHEMA_DEFINITION for a document that is not a schema definition. */
  parseDefinition: (bytes: Uint8Array) => SchemaDefinition
  kv: Kv<unknown>
  logger?: Logger
  /** First block to scan for SchemaAdded (the registry's deployment block; default 0). */
  startBlock?: bigint
  /** byScope rescans the chain for new schemas at most this often (default 30 s). */
  refreshIntervalMs?: number
  /** Whose schemas may be a scope's schema (default: every account's). */
  trust?: SchemaTrust
}

export interface ChainSchemaResolver extends SchemaResolver {
  /** byId, throwing SCHEMA_SCOPE_MISMATCH when the definition declares another scope than expected. */
  byIdForScope (id: string, scope: string, opts?: { signal?: AbortSignal }): Promise<ResolvedSchema | null>
  /** Scans new SchemaAdded events into the scope index now; returns the last scanned block. */
  sync (opts?: { signal?: AbortSignal }): Promise<bigint>
}

const KEY_LAST_BLOCK = 'meta:lastBlock'
/** The trusted owners the scope index was built for. */
const KEY_TRUSTED = 'meta:trustedOwners'
const schemaKey = (id: bigint): string => `schema:${id.toString()}`
const scopeKey = (scope: string, id: bigint): string => `scope:${scope}:${id.toString().padStart(78, '0')}`
/** Definitions that could not be fetched while indexing; retried on the next sync. */
const retryKey = (id: bigint): string => `retry:${id.toString().padStart(78, '0')}`
/** The account that registered a schema, once its SchemaAdded event was indexed. */
const ownerKey = (id: bigint): string => `owner:${id.toString()}`
/** How many of a scope's newest schemas byScope looks through for a trusted one. */
const MAX_SCOPE_CANDIDATES = 1000
const INDEX_CONCURRENCY = 4

export function createChainSchemaResolver (opts: ChainSchemaResolverOptions): ChainSchemaResolver {
  const { chain, kv } = opts
  const logger = opts.logger ?? silentLogger()
  const refreshMs = opts.refreshIntervalMs ?? 30_000
  const trust = opts.trust ?? TRUST_ALL
  const trustsOwner = (address: string): boolean => trust.trustsOwner(address)
  // events skipped as untrusted are indexed after all when the trusted owners change: rescan
  const trustKey = trust === TRUST_ALL ? '*' : [...trust.owners].sort().join(',')
  let lastSyncAt = 0
  let syncing: Promise<bigint> | null = null

  async function resolve (schemaId: bigint, signal?: AbortSignal): Promise<ResolvedSchema | null> {
    const cached = await kv.get(schemaKey(schemaId)) as ResolvedSchema | undefined
    if (cached !== undefined) return cached.ownerAddress !== null ? cached : { ...cached, ownerAddress: await ownerOf(schemaId) }
    const record = await chain.getSchema(schemaId)
    if (record === null) return null
    const bytes = await opts.fetchDefinition(record.definitionUrl, signal !== undefined ? { signal } : {})
    const definition = opts.parseDefinition(bytes)
    const resolved: ResolvedSchema = {
      id: schemaId.toString(),
      ownerAddress: await ownerOf(schemaId),
      name: record.name,
      dialect: record.dialect,
      definitionUrl: record.definitionUrl,
      scope: definition.scope,
      addedAt: null,
      definition
    }
    await kv.put(schemaKey(schemaId), resolved)
    return resolved
  }

  async function ownerOf (schemaId: bigint): Promise<string | null> {
    return (await kv.get(ownerKey(schemaId)) as string | undefined) ?? null
  }

  /** Indexes one SchemaAdded event by the scope its definition declares, when its owner is trusted. */
  async function index (event: SchemaAddedEvent): Promise<void> {
    try {
      let owner = await ownerOf(event.schemaId)
      if (owner === null && event.txHash !== '0x') {
        owner = await chain.transactionSender(event.txHash)
        await kv.put(ownerKey(event.schemaId), owner)
      }
      if (owner === null || !trustsOwner(owner)) {
        logger.debug({ schemaId: event.schemaId.toString(), owner }, 'schema registered by an untrusted account; not indexed by scope')
        await kv.del(retryKey(event.schemaId))
        return
      }
      const resolved = await resolve(event.schemaId)
      if (resolved !== null) {
        if (resolved.ownerAddress === null) await kv.put(schemaKey(event.schemaId), { ...resolved, ownerAddress: owner })
        await kv.put(scopeKey(resolved.scope, event.schemaId), event.schemaId.toString())
      }
      await kv.del(retryKey(event.schemaId))
    } catch (err) {
      if (isHearthError(err, 'INVALID_SCHEMA_DEFINITION')) {
        logger.warn({ schemaId: event.schemaId.toString(), url: event.definitionUrl }, 'schema on chain has an invalid definition; not indexed')
        await kv.del(retryKey(event.schemaId))
        return
      }
      if (isHearthError(err, 'CHAIN_UNAVAILABLE')) throw err
      // The definition's storage is unreachable: index the others now, this one next time.
      await kv.put(retryKey(event.schemaId), { id: event.schemaId.toString(), txHash: event.txHash })
      logger.warn({ schemaId: event.schemaId.toString(), err: err instanceof Error ? err.message : String(err) }, 'schema definition not fetched; will retry')
    }
  }

  async function syncNow (): Promise<bigint> {
    if (await kv.get(KEY_TRUSTED) !== trustKey) {
      await kv.del(KEY_LAST_BLOCK)
      await kv.put(KEY_TRUSTED, trustKey)
    }
    const stored = await kv.get(KEY_LAST_BLOCK) as string | undefined
    const from = stored !== undefined ? BigInt(stored) + 1n : (opts.startBlock ?? 0n)
    const head = await chain.blockNumber()
    const retries: SchemaAddedEvent[] = []
    for await (const [, entry] of kv.entries({ prefix: 'retry:' })) {
      // entries written before owners were recorded hold the id alone
      const { id, txHash } = typeof entry === 'string' ? { id: entry, txHash: '0x' as const } : entry as { id: string; txHash: `0x${string}` }
      retries.push({ schemaId: BigInt(id), name: '', dialect: '', definitionUrl: '', blockNumber: 0n, txHash })
    }
    await mapLimit(retries, INDEX_CONCURRENCY, index)
    if (from <= head) {
      const events = await chain.schemaAddedEvents(from, head)
      await mapLimit(events, INDEX_CONCURRENCY, index)
      await kv.put(KEY_LAST_BLOCK, head.toString())
    }
    lastSyncAt = Date.now()
    return head
  }

  async function sync (): Promise<bigint> {
    syncing ??= syncNow().finally(() => { syncing = null })
    return await syncing
  }

  /** The newest schema of the scope whose owner is trusted (now: trust can change with the config). */
  async function newestForScope (scope: string): Promise<bigint | null> {
    for await (const [, id] of kv.entries({ prefix: `scope:${scope}:`, reverse: true, limit: MAX_SCOPE_CANDIDATES })) {
      const schemaId = BigInt(id as string)
      const owner = await ownerOf(schemaId)
      if (owner !== null && trustsOwner(owner)) return schemaId
    }
    return null
  }

  const resolver: ChainSchemaResolver = {
    name: 'chain',

    async byId (id, o = {}) {
      const schemaId = parseSchemaId(id)
      return schemaId === null ? null : await resolve(schemaId, o.signal)
    },

    async byIdForScope (id, scope, o = {}) {
      const resolved = await resolver.byId(id, o)
      if (resolved !== null && resolved.scope !== scope) {
        throw new HearthError('SCHEMA_SCOPE_MISMATCH', `schema ${id} is for scope ${resolved.scope}, not ${scope}`, {
          schemaId: resolved.id, expectedScope: scope, definitionScope: resolved.scope
        })
      }
      return resolved
    },

    async byScope (scope) {
      if (Date.now() - lastSyncAt >= refreshMs) {
        try {
          await sync()
        } catch (err) {
          // Offline: answer from what is indexed; with nothing indexed the caller must know the
          // chain was not asked (hold the file as waiting), not that the scope has no schema.
          const known = await newestForScope(scope)
          if (known === null) throw err
          logger.debug({ scope, err: err instanceof Error ? err.message : String(err) }, 'schema index not refreshed; answering from cache')
          return await resolve(known)
        }
      }
      const newest = await newestForScope(scope)
      return newest === null ? null : await resolve(newest)
    },

    async sync () { return await sync() }
  }
  return resolver
}

/** A chain schema id from its decimal or 0x-hex form; null for anything else (e.g. `local:` ids). */
export function parseSchemaId (id: string): bigint | null {
  if (typeof id !== 'string') return null
  if (/^[0-9]{1,78}$/.test(id)) return BigInt(id)
  if (/^0x[0-9a-fA-F]{1,64}$/.test(id)) return BigInt(id)
  return null
}
