// Schema resolution (docs/protocol.md §3.2): the persistent cache first, then each source in order (a DP
// RPC service, the chain...). Everything a source answers is remembered, so whatever was resolved
// once keeps resolving offline. Definitions never change, so an id found in the cache is final;
// which id is a scope's *latest* can change, so that pointer is re-checked with the sources at
// most every `refreshMs`, and the cache answers whenever they are unreachable or silent.
import { Mutex } from '../db/mutex.js'
import { isHearthError, HearthError } from '../errors.js'
import { silentLogger, type Logger } from '../log.js'
import { assertScope } from '../protocol/scope.js'
import type { StorageBackend } from '../storage/types.js'
import { untilAborted } from './abort.js'
import type { LatestPointer, SchemaCache, SchemaListing } from './cache.js'
import { JSON_DIALECT, parseSchemaDefinition, serializeDefinition } from './definition.js'
import { isLocalSchemaId, LOCAL_SCHEMA_PREFIX, type ResolvedSchema, type SchemaResolver } from './types.js'
import { TRUST_ALL, type SchemaTrust } from './trust.js'

export interface ResolvedEvent {
  schema: ResolvedSchema
  /** `local` (added here), `replace` (a local id became a chain id), or the source's name. */
  origin: string
  /** Whether the schema is now its scope's latest. */
  latest: boolean
  /** For `replace`, and when a source reveals a local schema's chain id: the local id replaced. */
  replacedId?: string
}

export type ResolvedListener = (event: ResolvedEvent) => void

export interface SourceStatus {
  name: string
  /** null until the source has been asked once. */
  ok: boolean | null
  at: string | null
  error?: string
}

export interface AddLocalResult {
  schema: ResolvedSchema
  /** False when the definition was already known (same bytes, same CID), locally or on chain. */
  added: boolean
  latest: boolean
}

export interface SchemaRegistry extends SchemaResolver {
  readonly cache: SchemaCache
  /**
   * The schema new files of `scope` use, or null when nothing knows the scope (the pipeline then
   * holds the files as waiting-schema). `refresh`: 'auto' (default) asks the sources when the
   * scope was not checked within refreshMs, 'force' always, 'never' answers from the cache only.
   * Throws INVALID_SCOPE for a malformed scope. Source failures never make it throw.
   */
  byScope (scope: string, opts?: { signal?: AbortSignal; refresh?: 'auto' | 'force' | 'never' }): Promise<ResolvedSchema | null>
  /** The schema with this id (cache, then sources), or null when unknown or unreachable. */
  byId (id: string, opts?: { signal?: AbortSignal }): Promise<ResolvedSchema | null>
  /** The schema whose definition lives at this URL (an envelope's `$schema`), from the cache. */
  byDefinitionUrl (definitionUrl: string): Promise<ResolvedSchema | null>
  list (): Promise<SchemaListing[]>
  /** Record a schema learned elsewhere (e.g. the chain module); `latest` also points its scope at it. */
  remember (resolved: ResolvedSchema, opts?: { latest?: boolean }): Promise<void>
  /**
   * Pin a definition (canonical bytes) and make its scope usable at once as `local:<cid>`.
   * `sticky` (default true, for an explicit `hearth schema add`): it becomes the scope's latest
   * and a source refresh does not replace it with an older schema. Non-sticky (shipped schemas)
   * never displaces a chain schema or an explicit choice, and re-adding a known one changes nothing.
   * `checkCompiles: false`: the definition is known to compile (see parseSchemaDefinition).
   */
  addLocalSchema (definition: unknown, opts: { storage: Pick<StorageBackend, 'add'>; sticky?: boolean; checkCompiles?: boolean; signal?: AbortSignal }): Promise<AddLocalResult>
  /** The chain registered a local schema: see SchemaCache.replaceSchemaId. */
  replaceSchemaId (localId: string, chainId: string, patch?: Partial<Pick<ResolvedSchema, 'ownerAddress' | 'addedAt' | 'name'>>): Promise<ResolvedSchema>
  /** Called whenever a schema is learned or becomes its scope's latest. Returns an unsubscribe. */
  onResolved (listener: ResolvedListener): () => void
  sourceStatus (): SourceStatus[]
  /**
   * A registry over the same cache, write lock and listeners with other sources, e.g. the view
   * that answers the daemon's own lookup endpoints from cache + chain without asking a DP RPC.
   * Two separate registries over one cache would interleave their read-modify-writes.
   */
  withSources (sources: SchemaResolver[]): SchemaRegistry
}

export interface SchemaRegistryOptions {
  cache: SchemaCache
  sources: SchemaResolver[]
  logger?: Logger
  /** How long a scope's latest pointer is trusted after the sources answered. Default 10 min. */
  refreshMs?: number
  /** How soon sources are asked again after they failed or knew nothing. Default 1 min. */
  retryMs?: number
  now?: () => number
  onResolved?: ResolvedListener
  /**
   * Whose schemas a source may make a scope's schema (see trust.ts). An answer from anyone else is
   * skipped (the next source is asked) and never replaces what the cache holds. Default: everyone
   * (tools and tests; the daemon always passes its owner's trust).
   */
  trust?: SchemaTrust
}

// Bounds the in-memory "when to ask the sources next" map; past it the oldest entries are
// forgotten, which costs at most one extra source request for that scope or id.
const MAX_CHECK_ENTRIES = 10_000

export function createSchemaRegistry (opts: SchemaRegistryOptions): SchemaRegistry {
  const listeners = new Set<ResolvedListener>()
  if (opts.onResolved !== undefined) listeners.add(opts.onResolved)
  return buildRegistry(opts, { writes: new Mutex(), listeners })
}

/** What every view of one registry shares. */
interface SharedState {
  writes: Mutex
  listeners: Set<ResolvedListener>
}

function buildRegistry (opts: SchemaRegistryOptions, shared: SharedState): SchemaRegistry {
  const { cache, sources } = opts
  const { writes, listeners } = shared
  const logger = opts.logger ?? silentLogger()
  const refreshMs = opts.refreshMs ?? 10 * 60_000
  const retryMs = opts.retryMs ?? 60_000
  const now = opts.now ?? Date.now
  const trust = opts.trust ?? TRUST_ALL
  const nextCheck = new Map<string, number>()
  const inflight = new Map<string, Promise<ResolvedSchema | null>>()
  const status = new Map<string, SourceStatus>(sources.map((s) => [s.name, { name: s.name, ok: null, at: null }]))

  function emit (events: ResolvedEvent[]): void {
    for (const event of events) {
      for (const listener of listeners) {
        try {
          listener(event)
        } catch (err) {
          logger.error({ err, scope: event.schema.scope, id: event.schema.id }, 'schema listener failed')
        }
      }
    }
  }

  function scheduleCheck (key: string, delayMs: number): void {
    nextCheck.delete(key)
    nextCheck.set(key, now() + delayMs)
    if (nextCheck.size > MAX_CHECK_ENTRIES) nextCheck.delete(nextCheck.keys().next().value as string)
  }

  function mark (source: SchemaResolver, err?: unknown): void {
    const entry: SourceStatus = { name: source.name, ok: err === undefined, at: new Date(now()).toISOString() }
    if (err !== undefined) entry.error = isHearthError(err) ? `${err.code}: ${err.message}` : String((err as Error)?.message ?? err)
    status.set(source.name, entry)
  }

  /**
   * Ask every source in order; the first non-null answer that `accept`s wins. Failures are logged
   * and skipped; so are answers `accept` turns down.
   */
  async function askSources (what: string, ask: (s: SchemaResolver) => Promise<ResolvedSchema | null>, check: (r: ResolvedSchema) => void,
    accept: (r: ResolvedSchema, s: SchemaResolver) => boolean = () => true): Promise<{ answer: ResolvedSchema; source: SchemaResolver } | null> {
    for (const source of sources) {
      try {
        const answer = await ask(source)
        if (answer !== null) check(answer)
        mark(source)
        if (answer !== null && accept(answer, source)) return { answer, source }
      } catch (err) {
        mark(source, err)
        logger.warn({ source: source.name, lookup: what, code: isHearthError(err) ? err.code : undefined, err: isHearthError(err) ? undefined : err },
          `schema source ${source.name} failed: ${(err as Error)?.message ?? String(err)}`)
      }
    }
    return null
  }

  /**
   * Store what a source answered. A chain record whose definition is a local schema's definition
   * means the chain registered it: the local id is replaced. Runs under the write lock.
   */
  async function learn (answer: ResolvedSchema, origin: string, events: ResolvedEvent[]): Promise<void> {
    const before = await cache.byId(answer.id)
    const twin = isLocalSchemaId(answer.id) ? null : await cache.byDefinitionUrl(answer.definitionUrl)
    if (twin !== null && isLocalSchemaId(twin.id)) {
      const replaced = await cache.replaceSchemaId(twin.id, answer.id, { ownerAddress: answer.ownerAddress, addedAt: answer.addedAt, name: answer.name })
      events.push({ schema: replaced, origin, latest: (await cache.latest(answer.scope))?.id === answer.id, replacedId: twin.id })
      return
    }
    await cache.remember(answer)
    if (before === null || before.definitionUrl !== answer.definitionUrl) {
      events.push({ schema: answer, origin, latest: (await cache.latest(answer.scope))?.id === answer.id })
    }
  }

  /**
   * A source says `answer` is the scope's newest schema. It becomes latest unless the current
   * pointer is an explicit local choice (sticky) made after the answer's schema was added: a
   * lagging service must not silently switch files back to an older schema than the owner chose.
   */
  async function adoptLatest (scope: string, answer: ResolvedSchema, origin: string, events: ResolvedEvent[]): Promise<void> {
    const pointer = await cache.latest(scope)
    if (pointer !== null && pointer.id === answer.id) {
      if (pointer.sticky) await cache.setLatest(scope, answer.id, { sticky: false })
      return
    }
    if (pointer !== null && pointer.sticky && !addedAfter(answer.addedAt, pointer)) {
      logger.debug({ scope, kept: pointer.id, offered: answer.id, source: origin }, 'kept the locally chosen schema')
      return
    }
    await cache.setLatest(scope, answer.id, { sticky: false })
    const schema = await cache.byId(answer.id)
    if (schema !== null) {
      const known = events.find((e) => e.schema.id === schema.id)
      if (known !== undefined) known.latest = true
      else events.push({ schema, origin, latest: true })
    }
  }

  async function refreshScope (scope: string): Promise<ResolvedSchema | null> {
    const found = await askSources(`scope ${scope}`, async (s) => await s.byScope(scope), (r) => {
      if (r.scope !== scope || r.definition.scope !== scope) {
        throw new HearthError('SCHEMA_SCOPE_MISMATCH', `asked for scope ${scope}, got schema ${r.id} of scope ${r.scope} (definition: ${r.definition.scope})`,
          { scope, id: r.id })
      }
    }, (r, source) => {
      if (trust.trusts(r)) return true
      logger.warn({ source: source.name, scope, id: r.id, ownerAddress: r.ownerAddress },
        `schema ${r.id} for ${scope} from ${source.name} is registered by ${r.ownerAddress ?? 'an unknown account'}, not a trusted schema owner; ignored (schemas.trustedOwners)`)
      return false
    })
    if (found === null) {
      scheduleCheck(`scope:${scope}`, retryMs)
      return await cache.byScope(scope)
    }
    const events: ResolvedEvent[] = []
    try {
      await writes.run(async () => {
        await learn(found.answer, found.source.name, events)
        await adoptLatest(scope, found.answer, found.source.name, events)
      })
      scheduleCheck(`scope:${scope}`, refreshMs)
    } catch (err) {
      // An answer that contradicts what the cache holds (CONFLICT) must not make a scope the
      // cache can serve unresolvable; it is reported and asked again later.
      if (!isHearthError(err)) throw err
      mark(found.source, err)
      logger.warn({ source: found.source.name, scope, code: err.code }, `schema answer not recorded: ${err.message}`)
      scheduleCheck(`scope:${scope}`, retryMs)
    }
    emit(events)
    return await cache.byScope(scope)
  }

  async function fetchById (id: string): Promise<ResolvedSchema | null> {
    const found = await askSources(`id ${id}`, async (s) => await s.byId(id), (r) => {
      if (r.scope !== r.definition.scope) throw new HearthError('SCHEMA_SCOPE_MISMATCH', `schema ${r.id}: record and definition scopes differ`, { id: r.id })
    })
    if (found === null) {
      scheduleCheck(`id:${id}`, retryMs)
      return null
    }
    const events: ResolvedEvent[] = []
    try {
      await writes.run(async () => {
        await learn(found.answer, found.source.name, events)
        // Services may spell an id differently from the request (hex for decimal); both resolve.
        if (found.answer.id !== id) await cache.alias(id, found.answer.id)
      })
    } catch (err) {
      if (!isHearthError(err)) throw err
      mark(found.source, err)
      logger.warn({ source: found.source.name, id, code: err.code }, `schema answer not recorded: ${err.message}`)
      scheduleCheck(`id:${id}`, retryMs)
    }
    emit(events)
    return await cache.byId(id)
  }

  function sharedLookup (key: string, work: () => Promise<ResolvedSchema | null>, signal?: AbortSignal): Promise<ResolvedSchema | null> {
    let pending = inflight.get(key)
    if (pending === undefined) {
      pending = work().finally(() => inflight.delete(key))
      inflight.set(key, pending)
    }
    // Concurrent callers share one lookup; each caller's own signal only abandons its wait.
    return signal === undefined ? pending : untilAborted(pending, signal)
  }

  return {
    name: 'registry',
    cache,

    async byScope (scope, callOpts = {}) {
      assertScope(scope)
      const mode = callOpts.refresh ?? 'auto'
      if (sources.length === 0 || mode === 'never') return await cache.byScope(scope)
      if (mode === 'auto' && now() < (nextCheck.get(`scope:${scope}`) ?? 0)) return await cache.byScope(scope)
      return await sharedLookup(`scope:${scope}`, async () => await refreshScope(scope), callOpts.signal)
    },

    async byId (id, callOpts = {}) {
      if (typeof id !== 'string' || id.length === 0) throw new HearthError('INVALID_ARGUMENT', 'a schema id is a non-empty string')
      const cached = await cache.byId(id)
      if (cached !== null || isLocalSchemaId(id) || sources.length === 0) return cached
      if (now() < (nextCheck.get(`id:${id}`) ?? 0)) return null
      return await sharedLookup(`id:${id}`, async () => await fetchById(id), callOpts.signal)
    },

    async byDefinitionUrl (definitionUrl) { return await cache.byDefinitionUrl(definitionUrl) },

    async list () { return await cache.list() },

    async remember (resolved, rememberOpts = {}) {
      const events: ResolvedEvent[] = []
      await writes.run(async () => {
        await learn(resolved, 'remember', events)
        if (rememberOpts.latest === true) await adoptLatest(resolved.scope, resolved, 'remember', events)
      })
      emit(events)
    },

    async addLocalSchema (input, addOpts) {
      const sticky = addOpts.sticky ?? true
      const definition = parseSchemaDefinition(input, { checkCompiles: addOpts.checkCompiles })
      const cid = await addOpts.storage.add(serializeDefinition(definition), { signal: addOpts.signal })
      const definitionUrl = `ipfs://${cid}`
      const id = LOCAL_SCHEMA_PREFIX + cid
      const scope = definition.scope
      const events: ResolvedEvent[] = []
      const result = await writes.run(async (): Promise<AddLocalResult> => {
        const pointer = await cache.latest(scope)
        // Chain records win the URL index, so a definition the chain already has is found as such.
        const known = await cache.byDefinitionUrl(definitionUrl) ?? await cache.byId(id)
        if (known !== null) {
          if (sticky && pointer?.id !== known.id) {
            await cache.setLatest(scope, known.id, { sticky: true })
            events.push({ schema: known, origin: 'local', latest: true })
            return { schema: known, added: false, latest: true }
          }
          return { schema: known, added: false, latest: pointer?.id === known.id }
        }
        const schema: ResolvedSchema = {
          id, ownerAddress: null, name: definition.name, dialect: JSON_DIALECT, definitionUrl, scope,
          addedAt: new Date(now()).toISOString(), definition
        }
        await cache.remember(schema)
        const latest = sticky || mayDisplace(pointer)
        if (latest) await cache.setLatest(scope, id, { sticky, setAt: schema.addedAt ?? undefined })
        events.push({ schema, origin: 'local', latest })
        return { schema, added: true, latest }
      })
      emit(events)
      return result
    },

    async replaceSchemaId (localId, chainId, patch) {
      const events: ResolvedEvent[] = []
      const replaced = await writes.run(async () => {
        const schema = await cache.replaceSchemaId(localId, chainId, patch)
        events.push({ schema, origin: 'replace', latest: (await cache.latest(schema.scope))?.id === schema.id, replacedId: localId })
        return schema
      })
      emit(events)
      return replaced
    },

    onResolved (listener) {
      listeners.add(listener)
      return () => { listeners.delete(listener) }
    },

    sourceStatus () { return sources.map((s) => ({ ...status.get(s.name)! })) },

    withSources (other) { return buildRegistry({ ...opts, sources: other }, shared) }
  }
}

/** A shipped (non-sticky) schema replaces only nothing or another shipped/local-default one. */
function mayDisplace (pointer: LatestPointer | null): boolean {
  return pointer === null || (!pointer.sticky && isLocalSchemaId(pointer.id))
}

function addedAfter (addedAt: string | null, pointer: LatestPointer): boolean {
  if (addedAt === null) return false
  const added = Date.parse(addedAt)
  const chosen = Date.parse(pointer.setAt)
  return Number.isFinite(added) && Number.isFinite(chosen) && added > chosen
}
