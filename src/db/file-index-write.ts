// The write path of the file index: turns a list of changes into one atomic LevelDB batch.
import { isDeepStrictEqual } from 'node:util'
import { HearthError } from '../errors.js'
import type { BatchOp } from './database.js'
import type { FileIndexStore, LogValue, ScopeSummaryValue, StoredRecord } from './file-index-store.js'
import { FILE_STATES, checkRecord, firstPart, joinKey, lastPart, padNumber, rangeOf, secondaryKeys, sortableInstant, type SecondaryKeys } from './keys.js'
import type { FileRecord, FileState } from './types.js'

/** What a deleted path's tombstone says: the CID and scope of the record that was deleted. */
export interface Tombstone { cid: string | null; scope: string }
/**
 * What a write replaced: the path's record, or, when it had none, the tombstone of its deletion
 * (null: neither). FileIndex.revert puts it back.
 */
export interface Replaced { record: FileRecord | null; tombstone: Tombstone | null }
/**
 * The record a change writes, made from the path's current record inside the write (so the
 * caller reads nothing first), and an archived copy of the current one to write before it.
 * `replaced`: what the write replaces, for a caller that may have to revert it.
 */
export type Derive = (current: FileRecord | null, replaced: Replaced) => { record: FileRecord; archived?: FileRecord }
/**
 * An upsert (record), a deletion (null), or an upsert made by `derive` from the current record.
 * `tombstone: false`: a deletion that leaves no tombstone (a record that should never have been
 * written, taken back: peers must not be told to delete its CID); a Tombstone: a deletion that
 * leaves this one (an earlier deletion put back).
 */
export type Change = { path: string; record: FileRecord | null; derive?: Derive; tombstone?: false | Tombstone }
/** `error`: the change's `derive` failed; that change alone was left out of the batch. */
export type ChangeResult = { changed: boolean; record: StoredRecord | null; error?: unknown }
/**
 * What the writer keeps in memory between batches: the last seq, the per-state counters and the
 * summaries of the scopes its batches wrote (so the next batch of a scope reads none first; a
 * head loaded again after a rebuild starts without them).
 */
export interface IndexHead { seq: number; counts: Record<FileState, number>; summaries?: Map<string, ScopeSummaryValue | null> }

/** A batch of at most this many paths reads their records on the writer's thread (getManySync). */
const SYNC_READ_PATHS = 32

/**
 * Applies upserts (record) and deletions (null) in one LevelDB batch: the records, their secondary
 * keys, the change log, tombstones, per-scope summaries and counters. The caller serialises calls
 * and adopts the returned head (seq and counters) once the batch is written. `sync` waits for the
 * OS to flush the batch (survives power loss). `also`: other namespaces' writes that must land
 * atomically with these changes (the ingest journal's entries), written even when no record changed.
 */
export async function applyChanges (s: FileIndexStore, head: IndexHead, changes: Change[], opts: { sync?: boolean; also?: BatchOp[] } = {}): Promise<{ results: ChangeResult[]; head: IndexHead }> {
  const current = new Map<string, StoredRecord | null>()
  const tomb = new Map<string, number | null>()
  const madeTombs = new Map<number, Tombstone>() // the tombstones this batch writes, by seq
  const read = async (paths: string[]): Promise<void> => {
    // the records and the tombstones of the paths in one read; a group commit's few paths on this
    // thread (a new file's are absent, which the tables' bloom filters tell from memory), which
    // costs less than the hand-off of a read to libuv's pool and back for each POST
    const reads = [...paths.map((p) => ({ sublevel: s.records, key: p })), ...paths.map((p) => ({ sublevel: s.tombstones, key: p }))]
    const found = paths.length <= SYNC_READ_PATHS ? s.db.getManySync(reads) : await s.db.getMany(reads)
    paths.forEach((p, i) => { current.set(p, (found[i] as StoredRecord | undefined) ?? null); tomb.set(p, (found[paths.length + i] as number | undefined) ?? null) })
  }
  await read([...new Set(changes.map((c) => c.path))])
  const scopeKeys = new Map<string, boolean>() // scope-index keys this batch adds (true) or removes (false)
  const scopeDelta = new Map<string, number>()
  const counts = { ...head.counts }
  const ops: BatchOp[] = []
  let seq = head.seq
  let changed = 0
  const results: ChangeResult[] = []

  const moveKey = (sub: FileIndexStore['byScope'], from: string | null, to: string | null): void => {
    if (from === to) return
    if (from !== null) ops.push({ type: 'del', sublevel: sub, key: from })
    if (to !== null) ops.push({ type: 'put', sublevel: sub, key: to, value: '' })
    if (sub === s.byScope) {
      if (from !== null) { scopeKeys.set(from, false); bump(scopeDelta, firstPart(from), -1) }
      if (to !== null) { scopeKeys.set(to, true); bump(scopeDelta, firstPart(to), 1) }
    }
  }
  const moveAll = (from: SecondaryKeys | null, to: SecondaryKeys | null): void => {
    moveKey(s.byScope, from?.scope ?? null, to?.scope ?? null)
    moveKey(s.byCid, from?.cid ?? null, to?.cid ?? null)
    moveKey(s.byState, from?.state ?? null, to?.state ?? null)
    moveKey(s.byFileId, from?.fileId ?? null, to?.fileId ?? null)
  }

  const apply = (path: string, record: FileRecord | null, tombstone: boolean | Tombstone = true): void => {
    const old = current.get(path) ?? null
    if ((record === null && old === null) || (record !== null && old !== null && isDeepStrictEqual(withoutSeq(old), record))) {
      results.push({ changed: false, record: old })
      return
    }
    seq += 1
    changed += 1
    moveAll(old === null ? null : secondaryKeys(old), record === null ? null : secondaryKeys(record))
    if (old !== null) {
      counts[old.state] -= 1
      ops.push({ type: 'del', sublevel: s.log, key: padNumber(old.seq) })
    }
    const oldTomb = tomb.get(path) ?? null
    if (oldTomb !== null) ops.push({ type: 'del', sublevel: s.log, key: padNumber(oldTomb) })
    if (record === null && !tombstone) {
      ops.push({ type: 'del', sublevel: s.records, key: path })
      if (oldTomb !== null) ops.push({ type: 'del', sublevel: s.tombstones, key: path })
      current.set(path, null)
      tomb.set(path, null)
      results.push({ changed: true, record: null })
    } else if (record === null) {
      const given = typeof tombstone === 'object' ? tombstone : null
      const value: LogValue = { path, deleted: true, cid: given?.cid ?? old?.cid ?? null, scope: given?.scope ?? old?.scope ?? '' }
      madeTombs.set(seq, { cid: value.cid, scope: value.scope })
      ops.push({ type: 'del', sublevel: s.records, key: path })
      ops.push({ type: 'put', sublevel: s.log, key: padNumber(seq), value })
      ops.push({ type: 'put', sublevel: s.tombstones, key: path, value: seq })
      current.set(path, null)
      tomb.set(path, seq)
      results.push({ changed: true, record: null })
    } else {
      const stored: StoredRecord = { ...record, seq }
      counts[record.state] += 1
      ops.push({ type: 'put', sublevel: s.records, key: path, value: stored })
      ops.push({ type: 'put', sublevel: s.log, key: padNumber(seq), value: { path } satisfies LogValue })
      if (oldTomb !== null) ops.push({ type: 'del', sublevel: s.tombstones, key: path })
      current.set(path, stored)
      tomb.set(path, null)
      results.push({ changed: true, record: stored })
    }
  }
  for (const { path, record, derive, tombstone } of changes) {
    if (derive === undefined) { apply(path, record, tombstone ?? true); continue }
    let made: { record: FileRecord; archived?: FileRecord }
    // from the current record, as earlier changes of this batch left it
    const now = current.get(path) ?? null
    const earlier = now === null ? null : withoutSeq(now)
    const seqOfTomb = now === null ? tomb.get(path) ?? null : null
    const replaced: Replaced = { record: earlier, tombstone: seqOfTomb === null ? null : madeTombs.get(seqOfTomb) ?? await tombstoneAt(s, seqOfTomb) }
    try {
      const d = derive(earlier, replaced)
      made = { record: checkRecord(d.record), ...(d.archived !== undefined ? { archived: checkRecord(d.archived) } : {}) }
      if (made.record.path !== path) throw new HearthError('INVALID_ARGUMENT', `a record derived for ${path} names ${made.record.path}`)
    } catch (error) {
      results.push({ changed: false, record: null, error })
      continue
    }
    if (made.archived !== undefined) {
      if (!current.has(made.archived.path)) await read([made.archived.path])
      apply(made.archived.path, made.archived)
      results.pop() // reported with its change
    }
    apply(path, made.record)
  }
  const also = opts.also ?? []
  if (changed === 0) {
    if (also.length > 0) await s.db.batch(also, opts.sync === true ? { sync: true } : {})
    return { results, head }
  }

  const summaries = await addSummaries(s, head.summaries, ops, scopeKeys, scopeDelta, current)
  ops.push({ type: 'put', sublevel: s.meta, key: 'seq', value: seq })
  for (const state of FILE_STATES) {
    if (counts[state] !== head.counts[state]) ops.push({ type: 'put', sublevel: s.meta, key: `count:${state}`, value: counts[state] })
  }
  for (const op of also) ops.push(op)
  await s.db.batch(ops, opts.sync === true ? { sync: true } : {})
  const known = head.summaries ?? new Map<string, ScopeSummaryValue | null>()
  for (const [scope, value] of summaries) known.set(scope, value) // written: what the index holds now
  return { results, head: { seq, counts, summaries: known } }
}

/**
 * Adds the new per-scope summaries of every scope the batch touched (read from `known` when an
 * earlier batch of this writer wrote them); returns each one's value after the batch (null: none).
 */
async function addSummaries (s: FileIndexStore, known: Map<string, ScopeSummaryValue | null> | undefined, ops: BatchOp[], scopeKeys: Map<string, boolean>, delta: Map<string, number>, current: Map<string, StoredRecord | null>): Promise<Map<string, ScopeSummaryValue | null>> {
  const scopes = [...delta.keys()]
  const unknown = scopes.filter((scope) => known?.has(scope) !== true)
  const read = unknown.length === 0 ? [] : await s.scopes.getMany(unknown)
  const fetched = new Map(unknown.map((scope, i) => [scope, read[i] ?? null]))
  const before = scopes.map((scope) => (fetched.has(scope) ? fetched.get(scope) : known?.get(scope)) ?? undefined)
  const after = new Map<string, ScopeSummaryValue | null>()
  // Newest key each scope gains in this batch (still present at its end).
  const added = new Map<string, string>()
  for (const [key, present] of scopeKeys) {
    const scope = firstPart(key)
    if (present && key > (added.get(scope) ?? '')) added.set(scope, key)
  }
  for (const [i, scope] of scopes.entries()) {
    const old = before[i]
    after.set(scope, old ?? null)
    const count = (old?.count ?? 0) + (delta.get(scope) ?? 0)
    if (count <= 0) {
      if (old !== undefined) ops.push({ type: 'del', sublevel: s.scopes, key: scope })
      after.set(scope, null)
      continue
    }
    let newest = old === undefined ? null : summaryKey(scope, old)
    if (newest === null || scopeKeys.get(newest) === false) newest = await newestStoredKey(s, scope, scopeKeys)
    const gained = added.get(scope)
    if (gained !== undefined && (newest === null || gained > newest)) newest = gained
    if (newest === null) continue // unreachable while indexes are consistent; verify() reports it
    const path = lastPart(newest)
    // still the version the summary names (files older than the scope's latest): nothing to read
    const record = old !== undefined && path === old.latestPath && !current.has(path) && newest === summaryKey(scope, old)
      ? { collectedAt: old.latestCollectedAt }
      : current.has(path) ? current.get(path) : await s.records.get(path)
    if (record === null || record === undefined || record.collectedAt === null) continue
    const value: ScopeSummaryValue = { count, latestCollectedAt: record.collectedAt, latestPath: path }
    if (old?.count !== value.count || old.latestCollectedAt !== value.latestCollectedAt || old.latestPath !== value.latestPath) ops.push({ type: 'put', sublevel: s.scopes, key: scope, value })
    after.set(scope, value)
  }
  return after
}

/** What the tombstone logged at `seq` says (a deleted path written again: rare). */
export async function tombstoneAt (s: FileIndexStore, seq: number): Promise<Tombstone | null> {
  const logged = await s.log.get(padNumber(seq))
  return logged?.deleted === true ? { cid: logged.cid, scope: logged.scope } : null
}

/** The newest scope-index key already stored that this batch does not remove. */
async function newestStoredKey (s: FileIndexStore, scope: string, scopeKeys: Map<string, boolean>): Promise<string | null> {
  for await (const key of s.byScope.keys({ ...rangeOf(scope), reverse: true })) {
    if (scopeKeys.get(key) !== false) return key
  }
  return null
}

/** The scope-index key a summary names as latest; null when the summary is unreadable. */
function summaryKey (scope: string, summary: ScopeSummaryValue): string | null {
  try { return joinKey(scope, sortableInstant(summary.latestCollectedAt), summary.latestPath) } catch { return null }
}

function bump (map: Map<string, number>, key: string, by: number): void {
  map.set(key, (map.get(key) ?? 0) + by)
}

function withoutSeq (r: StoredRecord): FileRecord {
  const { seq: _seq, ...rest } = r
  return rest
}
