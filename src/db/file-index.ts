// The persistent index of data files (docs/protocol.md §3.1 step 4). The primary namespace maps path → record;
// secondary namespaces (scope+time, CID, state, fileId), per-scope summaries, per-state counters and
// a change log are rewritten in the same LevelDB batch as the record, so a crash leaves either the
// old or the new state of all of them. Queries stream keys; nothing per file is held in memory.
import { HearthError } from '../errors.js'
import { PREFIX_END, type BatchOp, type HearthDatabase } from './database.js'
import { checkFileIndex, rebuildFileIndex, type FileIndexCheck } from './file-index-check.js'
import { FILE_STATES, checkRecord, isFileState, joinKey, lastPart, SEP, rangeOf, sortableInstant } from './keys.js'
import { readChanges, type ChangeEntry } from './file-index-changes.js'
import { Mutex } from './mutex.js'
import { fileIndexStore, loadMeta, type FileIndexStore, type StoredRecord } from './file-index-store.js'
import { applyChanges, tombstoneAt, type Change, type ChangeResult, type Derive, type IndexHead, type Replaced } from './file-index-write.js'
import type { FileRecord, FileState } from './types.js'
import type { IndexDamage } from './index-health.js'

export type { FileIndexCheck } from './file-index-check.js'
export type { ChangeEntry } from './file-index-changes.js'
export type { Derive, Replaced, Tombstone } from './file-index-write.js'

export interface ScopeSummary {
  scope: string
  /** Number of versions (records with a collectedAt) in the scope, in every state. */
  count: number
  latestCollectedAt: string
}

export interface StateFilter {
  /** Only records in one of these states (default: any state). */
  states?: readonly FileState[]
}

const DEFAULT_PAGE = 100
const READ_CHUNK = 64

/** An earlier version of a file edited in place, kept under `path#cid` (see the ingest pipeline). */
function isArchived (path: string): boolean {
  return path.includes('#')
}
/** Most changes merged into one group-commit batch (a larger putMany still goes whole). */
const GROUP_LIMIT = 1000

interface PendingWrite { changes: Change[]; also: BatchOp[] | undefined; resolve: (r: ChangeResult[]) => void; reject: (err: unknown) => void }

function isReplaced (earlier: FileRecord | Replaced): earlier is Replaced {
  return 'tombstone' in earlier && !('path' in earlier)
}

function pageLimit (limit: number | undefined, fallback = DEFAULT_PAGE): number {
  if (limit === undefined) return fallback
  if (!Number.isSafeInteger(limit) || limit < 0) throw new HearthError('INVALID_ARGUMENT', `invalid limit ${String(limit)}`)
  return limit
}

function pageOffset (offset: number | undefined): number {
  if (offset === undefined) return 0
  if (!Number.isSafeInteger(offset) || offset < 0) throw new HearthError('INVALID_ARGUMENT', `invalid offset ${String(offset)}`)
  return offset
}

/**
 * `durable` (default true): every write batch is synced to disk before it resolves (one fsync per
 * group-committed batch, so concurrent writers share it); false only survives a killed process.
 */
export async function openFileIndex (deps: { db: HearthDatabase; name?: string; durable?: boolean }): Promise<FileIndex> {
  const store = fileIndexStore(deps.db, deps.name ?? 'files')
  return new FileIndex(store, await loadMeta(store), deps.durable ?? true)
}

/**
 * Use one FileIndex per database: it keeps the change sequence and the five state counters in
 * memory (loaded on open) and serialises its own writes.
 */
export class FileIndex {
  readonly #store: FileIndexStore
  /** Serialises batch writes with rebuild(). */
  readonly #mutex = new Mutex()
  readonly #pending: PendingWrite[] = []
  #draining = false
  #head: IndexHead
  readonly #durable: boolean

  constructor (store: FileIndexStore, head: IndexHead, durable = true) {
    this.#store = store
    this.#head = head
    this.#durable = durable
  }

  /** Damage LevelDB reported while running (every read or write meeting it fails with INDEX_CORRUPT), or null. */
  damage (): IndexDamage | null {
    return this.#store.db.damage()
  }

  // ── writes ────────────────────────────────────────────────────────────────────────────────

  /**
   * Insert or replace the record of `record.path`; returns it as stored (with its seq). An
   * identical record is a no-op that keeps its seq. `also`: writes to other namespaces of the
   * same database that must be committed in the same atomic (and, when durable, synced) batch;
   * `alongside`: other records written in that batch too (an edited file's archived version).
   */
  async put (record: FileRecord, opts: { also?: BatchOp[]; alongside?: readonly FileRecord[] } = {}): Promise<FileRecord> {
    const clean = checkRecord(record)
    const others = (opts.alongside ?? []).map((r) => { const c = checkRecord(r); return { path: c.path, record: c } })
    const results = await this.#submit([...others, { path: clean.path, record: clean }], opts.also)
    return results[results.length - 1]!.record ?? clean
  }

  /**
   * Writes the record `derive` makes from the path's current one (null: none) and, before it, the
   * archived copy of the current one it may return, in one batch: no read of the path before the
   * write (the write reads it anyway). `also` as for put.
   */
  async putDerived (path: string, derive: Derive, opts: { also?: BatchOp[] } = {}): Promise<FileRecord> {
    const [result] = await this.#submit([{ path, record: null, derive }], opts.also)
    if (result!.error !== undefined) throw result!.error
    return result!.record!
  }

  /** Upsert many records in one atomic batch (later entries for the same path win). */
  async putMany (records: readonly FileRecord[]): Promise<void> {
    await this.#submit(records.map((r) => { const clean = checkRecord(r); return { path: clean.path, record: clean } }))
  }

  /**
   * Undoes a write of `path`: puts back the record it replaced (`earlier`, or what putDerived's
   * `derive` was told it replaces); when there was none, removes the path's record, leaving the
   * path's earlier tombstone again if it had one (a new entry of the change log: a peer that saw
   * the reverted write learns of the deletion) and none otherwise (nothing was deleted, so peers
   * are told of nothing). `also` as for put.
   */
  async revert (path: string, earlier: FileRecord | Replaced | null, opts: { also?: BatchOp[] } = {}): Promise<void> {
    const replaced: Replaced = earlier === null ? { record: null, tombstone: null } : isReplaced(earlier) ? earlier : { record: earlier, tombstone: null }
    const change: Change = replaced.record === null
      ? { path, record: null, tombstone: replaced.tombstone ?? false }
      : { path, record: checkRecord(replaced.record) }
    if (change.record !== null && change.record.path !== path) throw new HearthError('INVALID_ARGUMENT', `the earlier record of ${path} names ${change.record.path}`)
    await this.#submit([change], opts.also)
  }

  /** Remove a path; leaves a tombstone in the change log. False when it was not indexed. */
  async delete (path: string): Promise<boolean> {
    const [result] = await this.#submit([{ path, record: null }])
    return result.changed
  }

  /** Remove many paths atomically; returns how many were indexed. */
  async deleteMany (paths: readonly string[]): Promise<number> {
    return (await this.#submit(paths.map((path) => ({ path, record: null })))).filter((r) => r.changed).length
  }

  // ── point reads ───────────────────────────────────────────────────────────────────────────

  async get (path: string): Promise<FileRecord | null> {
    if (typeof path !== 'string' || path === '') return null
    return (await this.#store.records.get(path)) ?? null
  }

  /**
   * What a write of `path` would replace: its record, or, when it has none, the tombstone of its
   * deletion, for a caller that may have to revert that write. One read of LevelDB for the record
   * and the tombstone's seq together; a path that has a tombstone takes a second, of the logged
   * tombstone itself.
   */
  async prior (path: string): Promise<Replaced> {
    const [record, tomb] = await this.#store.db.getMany([{ sublevel: this.#store.records, key: path }, { sublevel: this.#store.tombstones, key: path }]) as [StoredRecord | undefined, number | undefined]
    if (record !== undefined) { const { seq: _seq, ...rest } = record; return { record: rest, tombstone: null } }
    return { record: null, tombstone: tomb === undefined ? null : await tombstoneAt(this.#store, tomb) }
  }

  /** The records of many paths in one read (null where a path is not indexed), in their order. */
  async getMany (paths: readonly string[]): Promise<Array<FileRecord | null>> {
    if (paths.length === 0) return []
    return (await this.#store.records.getMany([...paths])).map((r) => r ?? null)
  }

  async byCid (cid: string): Promise<FileRecord[]> {
    const paths = await this.#keys(this.#store.byCid, { ...rangeOf(cid) })
    return await this.#records(paths.map(lastPart))
  }

  async byFileId (fileId: string): Promise<FileRecord | null> {
    const [key] = await this.#keys(this.#store.byFileId, { ...rangeOf(fileId), limit: 1 })
    return key === undefined ? null : await this.get(lastPart(key))
  }

  // ── by scope and time ─────────────────────────────────────────────────────────────────────

  /** The version with the greatest collectedAt (ties: greatest path). */
  async latest (scope: string, filter: StateFilter = {}): Promise<FileRecord | null> {
    return await this.#firstInScope({ ...rangeOf(scope), reverse: true }, filter)
  }

  /** The version with the greatest collectedAt ≤ `iso` (any ISO 8601 instant). */
  async atOrBefore (scope: string, iso: string, filter: StateFilter = {}): Promise<FileRecord | null> {
    const bound = rangeOf(scope, sortableInstant(iso)).lt
    return await this.#firstInScope({ gt: rangeOf(scope).gt, lt: bound, reverse: true }, filter)
  }

  /** A page of a scope's versions in collectedAt order (ties by path), every state included. */
  async versions (scope: string, options: { limit?: number; offset?: number; order?: 'asc' | 'desc' } = {}): Promise<FileRecord[]> {
    const limit = pageLimit(options.limit)
    const offset = pageOffset(options.offset)
    if (limit === 0) return []
    const keys = await this.#keys(this.#store.byScope, {
      ...rangeOf(scope), reverse: (options.order ?? 'desc') === 'desc', limit: offset + limit
    })
    return await this.#records(keys.slice(offset).map(lastPart))
  }

  async countVersions (scope: string): Promise<number> {
    return (await this.#store.scopes.get(scope))?.count ?? 0
  }

  /** Scopes in name order with their version count, optionally those starting with `prefix`. */
  async scopes (options: { prefix?: string; limit?: number; offset?: number } = {}): Promise<ScopeSummary[]> {
    const limit = pageLimit(options.limit)
    let skip = pageOffset(options.offset)
    const prefix = options.prefix ?? ''
    const out: ScopeSummary[] = []
    if (limit === 0) return out
    const range = prefix === '' ? {} : { gte: prefix, lt: prefix + PREFIX_END }
    for await (const [scope, s] of this.#store.scopes.iterator({ ...range, limit: skip + limit })) {
      if (skip > 0) { skip--; continue }
      out.push({ scope, count: s.count, latestCollectedAt: s.latestCollectedAt })
    }
    return out
  }

  // ── by state, whole index, counters ───────────────────────────────────────────────────────

  /** A page of records in `state`, by path; pass the last path as `after` for the next page. */
  async byState (state: FileState, options: { limit?: number; after?: string } = {}): Promise<FileRecord[]> {
    if (!isFileState(state)) throw new HearthError('INVALID_ARGUMENT', `unknown state ${JSON.stringify(state)}`)
    const range = rangeOf(state)
    const gt = options.after === undefined ? range.gt : joinKey(state, options.after)
    const keys = await this.#keys(this.#store.byState, { gt, lt: range.lt, limit: pageLimit(options.limit) })
    return await this.#records(keys.map(lastPart))
  }

  async countsByState (): Promise<Record<FileState, number>> {
    return { ...this.#head.counts }
  }

  async count (): Promise<number> {
    return FILE_STATES.reduce((sum, s) => sum + this.#head.counts[s], 0)
  }

  /** A page of all records by path (for rescans); pass the last path as `after`. */
  async all (options: { after?: string; limit?: number } = {}): Promise<FileRecord[]> {
    const range = options.after === undefined ? {} : { gt: options.after }
    return await this.#store.records.values({ ...range, limit: pageLimit(options.limit, 1000) }).all()
  }

  /**
   * Every record by path (or every record in `state`), read a page at a time, so a caller can
   * walk a million records in constant memory. Records written during the walk are seen when
   * their path sorts after the page already read.
   */
  async * each (options: { state?: FileState; pageSize?: number } = {}): AsyncGenerator<FileRecord> {
    const limit = pageLimit(options.pageSize, 500)
    if (limit === 0) return
    for (let after: string | undefined; ;) {
      const page = options.state === undefined
        ? await this.all({ limit, ...(after !== undefined ? { after } : {}) })
        : await this.byState(options.state, { limit, ...(after !== undefined ? { after } : {}) })
      if (page.length === 0) return
      yield * page
      after = page[page.length - 1]!.path
    }
  }

  // ── change log ────────────────────────────────────────────────────────────────────────────

  /** The seq of the last change (0 for an empty index). */
  async currentSeq (): Promise<number> {
    return this.#head.seq
  }

  /**
   * Changes with seq > `since`, oldest first. Each path appears once, at the seq of its last
   * change, so a consumer that stores the last seq it saw as its cursor never misses a change.
   */
  async changesSince (since: number, limit = 1000): Promise<ChangeEntry[]> {
    if (!Number.isSafeInteger(since) || since < 0) throw new HearthError('INVALID_ARGUMENT', `invalid seq ${String(since)}`)
    return await readChanges(this.#store, since, pageLimit(limit, 1000))
  }

  // ── maintenance ───────────────────────────────────────────────────────────────────────────

  /** Recount everything from the primary records and compare with indexes, counters and log. */
  async verify (): Promise<FileIndexCheck> {
    return await checkFileIndex(this.#store)
  }

  /** Rebuild secondary indexes, summaries and counters from the primary records. */
  async rebuild (): Promise<FileIndexCheck> {
    return await this.#mutex.run(async () => {
      await rebuildFileIndex(this.#store)
      this.#head = await loadMeta(this.#store)
      return await checkFileIndex(this.#store)
    })
  }

  // ── internals ─────────────────────────────────────────────────────────────────────────────

  async #keys (sub: FileIndexStore['byScope'], options: { gt?: string; lt?: string; limit?: number; reverse?: boolean }): Promise<string[]> {
    return await sub.keys({ ...options, limit: options.limit ?? -1 }).all()
  }

  async #records (paths: string[]): Promise<FileRecord[]> {
    if (paths.length === 0) return []
    const found = await this.#store.records.getMany(paths)
    return found.filter((r): r is StoredRecord => r !== undefined)
  }

  /**
   * The first record in key order whose state passes the filter (ties of collectedAt: greatest
   * path), except that a live file beats an archived version of itself: a file edited in place
   * keeps its collectedAt, and its old version moves to `path#cid`, which sorts after the path.
   */
  async #firstInScope (options: { gt: string; lt: string; reverse: boolean }, filter: StateFilter): Promise<FileRecord | null> {
    const states = filter.states
    const it = this.#store.byScope.keys({ ...options, limit: -1 })
    let best: FileRecord | null = null
    let bestInstant: string | null = null
    try {
      // a whole chunk at once, not the first key alone: with a damaged table, LevelDB's reverse
      // iterator can hand out one key from past the damaged blocks before it reports them, and
      // that read answered an old version with 200; a chunk reaches the damage and fails
      // INDEX_CORRUPT (test/daemon/doctor "a table of the index garbled while the daemon runs")
      for (;;) {
        const keys = await it.nextv(READ_CHUNK)
        if (keys.length === 0) return best
        // read by key, in key order: a record gone since the keys were listed is skipped, and
        // every other record stays paired with its own key's instant
        const records = await this.#store.records.getMany(keys.map(lastPart))
        for (let i = 0; i < records.length; i++) {
          const r = records[i]
          if (r === undefined) continue
          const instant = keys[i]!.split(SEP)[1] ?? ''
          if (bestInstant !== null && instant !== bestInstant) return best
          if (states !== undefined && !states.includes(r.state)) continue
          if (!isArchived(r.path)) return r
          if (best === null) { best = r; bestInstant = instant }
        }
      }
    } finally {
      await it.close()
    }
  }

  /**
   * Group commit: write requests that arrive while a batch is being written are merged into the
   * next batch, so concurrent single puts cost one LevelDB write per group, not one each. A
   * request is never split, so putMany stays atomic.
   */
  #submit (changes: Change[], also?: BatchOp[]): Promise<ChangeResult[]> {
    if (changes.length === 0) return Promise.resolve([])
    return new Promise((resolve, reject) => {
      this.#pending.push({ changes, also, resolve, reject })
      if (!this.#draining) void this.#drain()
    })
  }

  async #drain (): Promise<void> {
    this.#draining = true
    try {
      while (this.#pending.length > 0) {
        const group: PendingWrite[] = []
        let size = 0
        while (this.#pending.length > 0 && (group.length === 0 || size + this.#pending[0].changes.length <= GROUP_LIMIT)) {
          const next = this.#pending.shift() as PendingWrite
          group.push(next)
          size += next.changes.length
        }
        try {
          const results = await this.#mutex.run(async () => {
            const also = group.flatMap((g) => g.also ?? [])
            const applied = await applyChanges(this.#store, this.#head, group.flatMap((g) => g.changes), { sync: this.#durable, also })
            this.#head = applied.head
            return applied.results
          })
          let at = 0
          for (const g of group) { g.resolve(results.slice(at, at + g.changes.length)); at += g.changes.length }
        } catch (err) {
          for (const g of group) g.reject(err)
        }
      }
    } finally {
      this.#draining = false
    }
  }
}
