// The persistent schema cache: every schema Hearth has learned, by id, kept forever (definitions
// are immutable), and for each scope a pointer to the schema new files use. Being a
// SchemaResolver itself, it is the first link of the resolution chain and the whole of it offline.
//
// Keys of the KV namespace:
//   id/<id>             → ResolvedSchema                 the record and its parsed definition
//   alias/<id>          → { id }                         an id that now means another one (a local
//                                                        schema registered on chain, a hex spelling)
//   latest/<scope>      → LatestPointer                  the schema new files of the scope use
//   url/<definitionUrl> → { id }                         preferred id of a definition (chain over local)
import { HearthError } from '../errors.js'
import { isLocalSchemaId, type ResolvedSchema, type SchemaResolver } from './types.js'

/** The minimal persistent KV this cache needs; `openKv` of src/db/database.ts satisfies it. */
export interface SchemaKv {
  get (key: string): Promise<unknown>
  put (key: string, value: any): Promise<void>
  del (key: string): Promise<void>
  entries (options?: { prefix?: string }): AsyncIterable<[string, unknown]>
}

export interface LatestPointer {
  id: string
  /**
   * Set by an explicit local choice (`hearth schema add`). Sources refreshing the scope do not
   * override a sticky pointer with an older schema; see the registry's refresh rule.
   */
  sticky: boolean
  /** ISO time the pointer was set. */
  setAt: string
}

export type SchemaListing = ResolvedSchema & { latest: boolean }

export interface SchemaCache extends SchemaResolver {
  /** The newest schema recorded for the scope (the latest pointer), or null. */
  byScope (scope: string): Promise<ResolvedSchema | null>
  /** The schema with this id, following aliases, or null. */
  byId (id: string): Promise<ResolvedSchema | null>
  /** A schema whose definition lives at this URL (a chain id preferred over a local one), or null. */
  byDefinitionUrl (definitionUrl: string): Promise<ResolvedSchema | null>
  /** Store a schema under its id. Throws SCHEMA_SCOPE_MISMATCH when record and definition disagree. */
  remember (resolved: ResolvedSchema): Promise<void>
  /** Point the scope at a known schema. Throws SCHEMA_NOT_FOUND / SCHEMA_SCOPE_MISMATCH. */
  setLatest (scope: string, id: string, opts?: { sticky?: boolean; setAt?: string }): Promise<void>
  latest (scope: string): Promise<LatestPointer | null>
  /** Make `fromId` answer as `toId` from now on (toId must be known). */
  alias (fromId: string, toId: string): Promise<void>
  /**
   * The chain registered the local schema `localId` as `chainId`: the chain id takes the local
   * record's place (same definition), the scope's pointer follows, and the local id keeps
   * resolving, to the chain record. Idempotent, and safe to repeat after a crash halfway.
   */
  replaceSchemaId (localId: string, chainId: string, patch?: Partial<Pick<ResolvedSchema, 'ownerAddress' | 'addedAt' | 'name'>>): Promise<ResolvedSchema>
  /** Every schema held, with whether it is its scope's latest; ordered by scope, then id. */
  list (): Promise<SchemaListing[]>
}

const ID = 'id/'
const ALIAS = 'alias/'
const LATEST = 'latest/'
const URL_INDEX = 'url/'
/** Longest definition URL whose URL-index entry is kept in memory (a longer one is read each time). */
const MAX_KEPT_URL_CHARS = 2048

export interface SchemaCacheOptions {
  /** Records kept decoded in memory (LRU). Default 256. */
  memoryEntries?: number
}

export function createSchemaCache (kv: SchemaKv, opts: SchemaCacheOptions = {}): SchemaCache {
  // Every ingested file looks its schema up, and decoding a stored definition from LevelDB costs
  // most of a lookup (bench/schemas.ts: ~300 µs per byScope without this LRU, ~40 µs with). Records are
  // immutable per id and every write of this cache goes through putRecord/dropRecord, so a small
  // LRU of decoded (frozen) records stays exact.
  const memoryEntries = Math.max(0, opts.memoryEntries ?? 256)
  const memory = new Map<string, ResolvedSchema>()

  function keep (id: string, value: ResolvedSchema): void {
    if (memoryEntries === 0) return
    memory.delete(id)
    memory.set(id, value)
    if (memory.size > memoryEntries) memory.delete(memory.keys().next().value as string)
  }

  // Reads and writes of one key may overlap (ingest looks schemas up without the resolver's write
  // lock): a read that a write of its key overtook must not keep what it read over the write's
  // newer answer. Each key some read is waiting on has a write generation, noted by the read
  // before its get; a write completing bumps it, and the read keeps its answer only when the
  // generation is still the one it noted. Decided and kept in one synchronous step after the get
  // (as the write bumps and keeps in one), so nothing can come between. A key is tracked only
  // while reads of it are in flight.
  const inFlight = new Map<string, { generation: number; readers: number }>()

  /** `kv.get(key)` parsed; `keepIt` (memory) unless a write of `key` completed meanwhile. */
  async function load<T> (key: string, parse: (value: unknown) => T, keepIt: (parsed: T) => void): Promise<T> {
    let tracked = inFlight.get(key)
    if (tracked === undefined) { tracked = { generation: 0, readers: 0 }; inFlight.set(key, tracked) }
    tracked.readers++
    const noted = tracked.generation
    const entry = tracked
    const done = (): boolean => {
      if (--entry.readers === 0) inFlight.delete(key)
      return entry.generation === noted
    }
    let value: unknown
    try {
      value = await kv.get(key)
    } catch (err) {
      done()
      throw err
    }
    const parsed = parse(value)
    if (done()) keepIt(parsed)
    return parsed
  }

  /** A write of `key` completed: reads of it in flight must not keep their (older) answers. */
  function wrote (key: string): void {
    const tracked = inFlight.get(key)
    if (tracked !== undefined) tracked.generation++
  }

  async function record (id: string): Promise<ResolvedSchema | null> {
    const held = memory.get(id)
    if (held !== undefined) {
      keep(id, held)
      return held
    }
    return await load(ID + id, (value) => isResolvedSchema(value) ? deepFreeze(value) : null, (frozen) => { if (frozen !== null) keep(id, frozen) })
  }

  async function putRecord (value: ResolvedSchema): Promise<void> {
    memory.delete(value.id)
    await kv.put(ID + value.id, value)
    wrote(ID + value.id)
    keep(value.id, deepFreeze(structuredClone(value)))
  }

  async function dropRecord (id: string): Promise<void> {
    memory.delete(id)
    await kv.del(ID + id)
    wrote(ID + id)
  }

  async function byId (id: string): Promise<ResolvedSchema | null> {
    const direct = await record(id)
    if (direct !== null) return direct
    const alias = await kv.get(ALIAS + id)
    // One hop only: aliases are always written to point at a stored record, never at an alias.
    return isIdRef(alias) ? await record(alias.id) : null
  }

  // Every POST and file asks for its scope's latest pointer; the pointers (written only below, by
  // setLatest and replaceSchemaId) are kept like the records: up to memoryEntries scopes.
  const latestPointers = new Map<string, LatestPointer | null>()

  async function latest (scope: string): Promise<LatestPointer | null> {
    if (latestPointers.has(scope)) return latestPointers.get(scope)!
    return await load(LATEST + scope, (value) => isLatestPointer(value) ? value : null, (pointer) => { keepLatest(scope, pointer) })
  }

  function keepLatest (scope: string, pointer: LatestPointer | null): void {
    if (memoryEntries === 0) return
    latestPointers.delete(scope)
    latestPointers.set(scope, pointer === null ? null : Object.freeze({ ...pointer }))
    if (latestPointers.size > memoryEntries) latestPointers.delete(latestPointers.keys().next().value as string)
  }

  async function putLatest (scope: string, pointer: LatestPointer): Promise<void> {
    latestPointers.delete(scope)
    await kv.put(LATEST + scope, pointer)
    wrote(LATEST + scope)
    keepLatest(scope, pointer)
  }

  // Every batch of dropped files looks its envelopes' `$schema` up: the URL index's hits (written
  // only by putUrl) are kept like the pointers, so a lookup of a known schema reads nothing. Hits
  // only, of URLs up to MAX_KEPT_URL_CHARS: a miss is whatever a dropped file's `$schema` says (of
  // any length, as many as files are written), so keeping misses would let one file hold megabytes
  // here or a flood of unknown URLs evict the known ones; a miss costs one read per batch instead
  // (ingest-many asks once per URL), and only for files naming a schema Hearth does not hold. So
  // the map holds at most memoryEntries × 2 KiB of URLs.
  const urlIds = new Map<string, string>()

  async function urlId (definitionUrl: string): Promise<string | null> {
    const held = urlIds.get(definitionUrl)
    if (held !== undefined) return held
    return await load(URL_INDEX + definitionUrl, (ref) => isIdRef(ref) ? ref.id : null, (id) => { keepUrl(definitionUrl, id) })
  }

  function keepUrl (definitionUrl: string, id: string | null): void {
    if (memoryEntries === 0 || id === null || definitionUrl.length > MAX_KEPT_URL_CHARS) return
    urlIds.delete(definitionUrl)
    urlIds.set(definitionUrl, id)
    if (urlIds.size > memoryEntries) urlIds.delete(urlIds.keys().next().value as string)
  }

  async function putUrl (definitionUrl: string, id: string): Promise<void> {
    urlIds.delete(definitionUrl)
    await kv.put(URL_INDEX + definitionUrl, { id })
    wrote(URL_INDEX + definitionUrl)
    keepUrl(definitionUrl, id)
  }

  async function indexUrl (resolved: ResolvedSchema): Promise<void> {
    const current = await urlId(resolved.definitionUrl)
    if (current !== null && current !== resolved.id && !isLocalSchemaId(current) && isLocalSchemaId(resolved.id)) {
      const held = await record(current)
      if (held?.definitionUrl === resolved.definitionUrl) return
    }
    await putUrl(resolved.definitionUrl, resolved.id)
  }

  async function remember (resolved: ResolvedSchema): Promise<void> {
    if (typeof resolved.id !== 'string' || resolved.id.length === 0) {
      throw new HearthError('INVALID_ARGUMENT', 'a schema record needs a non-empty id')
    }
    if (resolved.scope !== resolved.definition.scope) {
      throw new HearthError('SCHEMA_SCOPE_MISMATCH',
        `schema ${resolved.id} is registered for scope ${resolved.scope} but its definition says ${resolved.definition.scope}`,
        { id: resolved.id, scope: resolved.scope, definitionScope: resolved.definition.scope })
    }
    const stored: ResolvedSchema = {
      id: resolved.id,
      ownerAddress: resolved.ownerAddress,
      name: resolved.name,
      dialect: resolved.dialect,
      definitionUrl: resolved.definitionUrl,
      scope: resolved.scope,
      addedAt: resolved.addedAt,
      definition: resolved.definition
    }
    await putRecord(stored)
    await indexUrl(stored)
  }

  async function setLatest (scope: string, id: string, opts: { sticky?: boolean; setAt?: string } = {}): Promise<void> {
    const target = await byId(id)
    if (target === null) throw new HearthError('SCHEMA_NOT_FOUND', `schema ${id} is not in the cache`, { id })
    if (target.scope !== scope) {
      throw new HearthError('SCHEMA_SCOPE_MISMATCH', `schema ${target.id} is for scope ${target.scope}, not ${scope}`,
        { id: target.id, scope, schemaScope: target.scope })
    }
    const pointer: LatestPointer = { id: target.id, sticky: opts.sticky ?? false, setAt: opts.setAt ?? new Date().toISOString() }
    await putLatest(scope, pointer)
  }

  async function alias (fromId: string, toId: string): Promise<void> {
    if (fromId === toId) return
    const target = await byId(toId)
    if (target === null) throw new HearthError('SCHEMA_NOT_FOUND', `schema ${toId} is not in the cache`, { id: toId })
    await kv.put(ALIAS + fromId, { id: target.id })
  }

  return {
    name: 'cache',
    byId,
    latest,
    remember,
    setLatest,
    alias,

    async byScope (scope) {
      const pointer = await latest(scope)
      if (pointer === null) return null
      const found = await byId(pointer.id)
      return found !== null && found.scope === scope ? found : null
    },

    async byDefinitionUrl (definitionUrl) {
      const id = await urlId(definitionUrl)
      if (id === null) return null
      const found = await byId(id)
      // The index is a hint: a record overwritten with another definition no longer matches.
      return found !== null && found.definitionUrl === definitionUrl ? found : null
    },

    async replaceSchemaId (localId, chainId, patch = {}) {
      if (!isLocalSchemaId(localId)) throw new HearthError('INVALID_ARGUMENT', `${localId} is not a local schema id`)
      if (isLocalSchemaId(chainId) || chainId.length === 0) throw new HearthError('INVALID_ARGUMENT', `${chainId} is not a chain schema id`)
      // After a completed (or half-done) earlier replace the local record may be gone; the alias
      // then still leads to the definition.
      const local = await byId(localId)
      if (local === null) throw new HearthError('SCHEMA_NOT_FOUND', `schema ${localId} is not in the cache`, { id: localId })
      const existing = await record(chainId)
      if (existing !== null && existing.definitionUrl !== local.definitionUrl) {
        throw new HearthError('CONFLICT', `schema ${chainId} already exists with another definition (${existing.definitionUrl})`,
          { id: chainId, definitionUrl: existing.definitionUrl, localDefinitionUrl: local.definitionUrl })
      }
      const replacement: ResolvedSchema = {
        ...(existing ?? local),
        id: chainId,
        ...(patch.ownerAddress !== undefined ? { ownerAddress: patch.ownerAddress } : {}),
        ...(patch.addedAt !== undefined ? { addedAt: patch.addedAt } : {}),
        ...(patch.name !== undefined ? { name: patch.name } : {})
      }
      // Order matters for crash safety: the new record first, then everything pointing at it,
      // and the local record last, so every intermediate state still resolves both ids.
      await remember(replacement)
      await kv.put(ALIAS + localId, { id: chainId })
      const pointer = await latest(replacement.scope)
      if (pointer !== null && pointer.id === localId) {
        await putLatest(replacement.scope, { ...pointer, id: chainId })
      }
      await putUrl(replacement.definitionUrl, chainId)
      await dropRecord(localId)
      return replacement
    },

    async list () {
      const pointers = new Map<string, string>()
      for await (const [key, value] of kv.entries({ prefix: LATEST })) {
        if (isLatestPointer(value)) pointers.set(key.slice(LATEST.length), value.id)
      }
      const out: SchemaListing[] = []
      for await (const [, value] of kv.entries({ prefix: ID })) {
        if (isResolvedSchema(value)) out.push({ ...value, latest: pointers.get(value.scope) === value.id })
      }
      return out.sort((a, b) => a.scope < b.scope ? -1 : a.scope > b.scope ? 1 : a.id < b.id ? -1 : a.id > b.id ? 1 : 0)
    }
  }
}

/** Records handed out are shared by every caller, so none of them may change one. */
function deepFreeze<T> (value: T): T {
  if (value !== null && typeof value === 'object' && !Object.isFrozen(value)) {
    Object.freeze(value)
    for (const child of Object.values(value)) deepFreeze(child)
  }
  return value
}

function isIdRef (v: unknown): v is { id: string } {
  return typeof v === 'object' && v !== null && typeof (v as { id?: unknown }).id === 'string'
}

function isLatestPointer (v: unknown): v is LatestPointer {
  return isIdRef(v) && typeof (v as LatestPointer).sticky === 'boolean' && typeof (v as LatestPointer).setAt === 'string'
}

function isResolvedSchema (v: unknown): v is ResolvedSchema {
  if (typeof v !== 'object' || v === null) return false
  const r = v as Record<string, unknown>
  const d = r.definition as Record<string, unknown> | undefined
  return typeof r.id === 'string' && typeof r.scope === 'string' && typeof r.definitionUrl === 'string' &&
    typeof r.name === 'string' && typeof r.dialect === 'string' &&
    typeof d === 'object' && d !== null && typeof d.scope === 'string' && typeof d.schema === 'object'
}
