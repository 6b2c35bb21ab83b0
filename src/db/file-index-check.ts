// Consistency check and rebuild of the file index. Both stream every namespace in chunks, so they
// run in constant memory on a million records. The check reads one snapshot, so it can run while
// the daemon writes; `hearth status --verify` shows its report.
import type { AbstractSnapshot } from 'abstract-level'
import type { BatchOp, Sublevel } from './database.js'
import { zeroCounts, type FileIndexStore, type ScopeSummaryValue, type StoredRecord } from './file-index-store.js'
import { FILE_STATES, checkRecord, firstPart, joinKey, lastPart, padNumber, rangeOf, secondaryKeys, sortableInstant, type SecondaryKeys } from './keys.js'
import type { FileState } from './types.js'

export interface FileIndexCheck {
  ok: boolean
  /** Primary records. */
  records: number
  /** Counts by state recounted from the records. */
  counts: Record<FileState, number>
  /** The maintained counters (what countsByState answers). */
  storedCounts: Record<FileState, number>
  seq: number
  scopes: number
  tombstones: number
  /** The first 100 problems found, in words. */
  problems: string[]
  problemCount: number
}

const CHUNK = 256
const MAX_PROBLEMS = 100
const SECONDARY: Array<{ name: keyof SecondaryKeys; sub: (s: FileIndexStore) => Sublevel<string> }> = [
  { name: 'scope', sub: (s) => s.byScope },
  { name: 'cid', sub: (s) => s.byCid },
  { name: 'state', sub: (s) => s.byState },
  { name: 'fileId', sub: (s) => s.byFileId }
]

/** Chunks of an iterator, closed even when the consumer stops early. */
async function * chunks<T> (it: { nextv(n: number): Promise<T[]>; close(): Promise<void> }): AsyncGenerator<T[]> {
  try {
    for (;;) {
      const batch = await it.nextv(CHUNK)
      if (batch.length === 0) return
      yield batch
    }
  } finally {
    await it.close()
  }
}

function keysOf (r: StoredRecord): SecondaryKeys | null {
  try { return secondaryKeys(checkRecord(r)) } catch { return null }
}

/** One check in progress: the store, the snapshot it reads, and the problems found so far. */
interface CheckRun {
  s: FileIndexStore
  snapshot: AbstractSnapshot
  problem (text: string): void
}

/** Recounts of what the record pass saw, for the namespace and log passes to compare with. */
interface RecordTally {
  records: number
  counts: Record<FileState, number>
  /** How many entries each secondary namespace must hold if nothing in it is stray. */
  expected: Record<keyof SecondaryKeys, number>
  /** Records whose change log entry was found. */
  liveLogged: number
}

export async function checkFileIndex (s: FileIndexStore): Promise<FileIndexCheck> {
  const problems: string[] = []
  let problemCount = 0
  const problem = (text: string): void => { problemCount++; if (problems.length < MAX_PROBLEMS) problems.push(text) }
  const snapshot: AbstractSnapshot = s.db.level.snapshot()
  try {
    const run: CheckRun = { s, snapshot, problem }
    const seq = (await s.meta.get('seq', { snapshot })) ?? 0
    const storedCounts = await readStoredCounts(run)
    const tally = await checkRecords(run, seq)
    await findStraySecondaryKeys(run, tally.expected)
    const scopes = await checkScopeSummaries(run)
    const tombstones = await checkChangeLog(run, seq, tally.liveLogged)
    for (const st of FILE_STATES) {
      if (tally.counts[st] !== storedCounts[st]) problem(`counter ${st} is ${storedCounts[st]}, recount gives ${tally.counts[st]}`)
    }
    return { ok: problemCount === 0, records: tally.records, counts: tally.counts, storedCounts, seq, scopes, tombstones, problems, problemCount }
  } finally {
    await snapshot.close()
  }
}

async function readStoredCounts ({ s, snapshot }: CheckRun): Promise<Record<FileState, number>> {
  const storedCounts = zeroCounts()
  const stored = await s.meta.getMany(FILE_STATES.map((st) => `count:${st}`), { snapshot })
  FILE_STATES.forEach((st, i) => { storedCounts[st] = stored[i] ?? 0 })
  return storedCounts
}

/** Every record is valid and has its secondary keys, its log entry, and no tombstone. */
async function checkRecords ({ s, snapshot, problem }: CheckRun, seq: number): Promise<RecordTally> {
  const tally: RecordTally = { records: 0, counts: zeroCounts(), expected: { scope: 0, cid: 0, state: 0, fileId: 0 }, liveLogged: 0 }
  for await (const entries of chunks(s.records.iterator({ snapshot }))) {
    const valid: Array<{ r: StoredRecord; keys: SecondaryKeys }> = []
    for (const [path, r] of entries) {
      tally.records++
      const keys = keysOf(r)
      if (keys === null || r.path !== path) { problem(`record ${JSON.stringify(path)} is malformed`); continue }
      tally.counts[r.state]++
      if (!Number.isSafeInteger(r.seq) || r.seq < 1 || r.seq > seq) problem(`record ${JSON.stringify(path)} has seq ${String(r.seq)} outside 1..${seq}`)
      valid.push({ r, keys })
    }
    for (const { name, sub } of SECONDARY) {
      const wanted = valid.filter((v) => v.keys[name] !== null)
      tally.expected[name] += wanted.length
      const present = wanted.length === 0 ? [] : await sub(s).hasMany(wanted.map((v) => v.keys[name] as string), { snapshot })
      present.forEach((ok, i) => { if (!ok) problem(`${name} index lacks ${JSON.stringify(wanted[i].r.path)}`) })
    }
    const logs = valid.length === 0 ? [] : await s.log.getMany(valid.map((v) => padNumber(v.r.seq)), { snapshot })
    logs.forEach((l, i) => {
      if (l === undefined || l.deleted === true || l.path !== valid[i].r.path) problem(`change log lacks seq ${valid[i].r.seq} of ${JSON.stringify(valid[i].r.path)}`)
      else tally.liveLogged++
    })
    const tombs = valid.length === 0 ? [] : await s.tombstones.hasMany(valid.map((v) => v.r.path), { snapshot })
    tombs.forEach((t, i) => { if (t) problem(`live path ${JSON.stringify(valid[i].r.path)} also has a tombstone`) })
  }
  return tally
}

/**
 * Every secondary key belongs to a record that produces exactly that key: with every wanted key
 * present, equal counts prove it; only a namespace whose count is off is scanned for strays.
 */
async function findStraySecondaryKeys ({ s, snapshot, problem }: CheckRun, expected: RecordTally['expected']): Promise<void> {
  for (const { name, sub } of SECONDARY) {
    let present = 0
    for await (const keys of chunks(sub(s).keys({ snapshot }))) present += keys.length
    if (present === expected[name]) continue
    for await (const keys of chunks(sub(s).keys({ snapshot }))) {
      const found = await s.records.getMany(keys.map(lastPart), { snapshot })
      keys.forEach((key, i) => {
        const r = found[i]
        if (r === undefined || keysOf(r)?.[name] !== key) problem(`${name} index has a stray entry for ${JSON.stringify(lastPart(key))}`)
      })
    }
  }
}

/** Per-scope summaries match the scope index (grouped, since it is sorted by scope); returns the scope count. */
async function checkScopeSummaries ({ s, snapshot, problem }: CheckRun): Promise<number> {
  let scopes = 0
  const checkGroup = async (scope: string, count: number, newestKey: string): Promise<void> => {
    scopes++
    const sum = await s.scopes.get(scope, { snapshot })
    if (sum === undefined) { problem(`scope ${JSON.stringify(scope)} has no summary`); return }
    if (sum.count !== count) problem(`scope ${JSON.stringify(scope)} summary counts ${sum.count}, index has ${count}`)
    if (summaryKey(scope, sum) !== newestKey) problem(`scope ${JSON.stringify(scope)} summary names a different latest version`)
  }
  let group: { scope: string; count: number; last: string } | null = null
  for await (const keys of chunks(s.byScope.keys({ snapshot }))) {
    for (const key of keys) {
      const scope = firstPart(key)
      if (group !== null && group.scope !== scope) await checkGroup(group.scope, group.count, group.last)
      group = group !== null && group.scope === scope ? { scope, count: group.count + 1, last: key } : { scope, count: 1, last: key }
    }
  }
  if (group !== null) await checkGroup(group.scope, group.count, group.last)
  for await (const entries of chunks(s.scopes.iterator({ snapshot }))) {
    for (const [scope] of entries) {
      const [any] = await s.byScope.keys({ ...rangeOf(scope), limit: 1, snapshot }).all()
      if (any === undefined) problem(`summary of scope ${JSON.stringify(scope)} has no versions`)
    }
  }
  return scopes
}

/**
 * Change log: each tombstone has its log entry; then the log holds exactly the verified live and
 * tombstone entries (counts again), else find the stale ones. Returns the tombstone count.
 */
async function checkChangeLog ({ s, snapshot, problem }: CheckRun, seq: number, liveLogged: number): Promise<number> {
  let tombstones = 0
  let tombLogged = 0
  for await (const entries of chunks(s.tombstones.iterator({ snapshot }))) {
    tombstones += entries.length
    const logs = await s.log.getMany(entries.map(([, n]) => padNumber(n)), { snapshot })
    logs.forEach((l, i) => {
      if (l?.deleted !== true || l.path !== entries[i][0]) problem(`tombstone of ${JSON.stringify(entries[i][0])} is not in the change log`)
      else tombLogged++
    })
  }
  let liveEntries = 0
  let tombEntries = 0
  for await (const entries of chunks(s.log.iterator({ snapshot }))) {
    for (const [key, v] of entries) {
      if (v.deleted === true) tombEntries++; else liveEntries++
      if (Number(key) > seq) problem(`change log seq ${Number(key)} is past the counter ${seq}`)
    }
  }
  if (liveEntries !== liveLogged || tombEntries !== tombLogged) {
    for await (const entries of chunks(s.log.iterator({ snapshot }))) {
      const found = await s.records.getMany(entries.map(([, v]) => v.path), { snapshot })
      const tombs = await s.tombstones.getMany(entries.map(([, v]) => v.path), { snapshot })
      entries.forEach(([key, v], i) => {
        const n = Number(key)
        if (v.deleted === true) {
          if (found[i] !== undefined || tombs[i] !== n) problem(`stale tombstone ${n} for ${JSON.stringify(v.path)}`)
        } else if (found[i]?.seq !== n) {
          problem(`stale change log entry ${n} for ${JSON.stringify(v.path)}`)
        }
      })
    }
  }
  return tombstones
}

function summaryKey (scope: string, sum: ScopeSummaryValue): string | null {
  try { return joinKey(scope, sortableInstant(sum.latestCollectedAt), sum.latestPath) } catch { return null }
}

/**
 * Re-derives secondary indexes, summaries and counters from the primary records, and repairs the
 * change log: a record without its log entry gets a fresh seq (peers then fetch it again, which is
 * harmless), stale entries go. Malformed records are dropped. Caller holds the index's write lock.
 */
export async function rebuildFileIndex (s: FileIndexStore): Promise<void> {
  let ops: BatchOp[] = []
  const flush = async (force = false): Promise<void> => {
    if (ops.length >= 1000 || (force && ops.length > 0)) { await s.db.batch(ops); ops = [] }
  }
  for (const { sub } of SECONDARY) await sub(s).clear()
  await s.scopes.clear()

  const [lastLog] = await s.log.keys({ reverse: true, limit: 1 }).all()
  let seq = Math.max((await s.meta.get('seq')) ?? 0, lastLog === undefined ? 0 : Number(lastLog))
  const counts = zeroCounts()
  for await (const entries of chunks(s.records.iterator())) {
    const logs = await s.log.getMany(entries.map(([, r]) => Number.isSafeInteger(r.seq) ? padNumber(r.seq) : ''))
    const tombs = await s.tombstones.getMany(entries.map(([path]) => path))
    for (const [i, [path, r]] of entries.entries()) {
      const keys = keysOf(r)
      if (keys === null || r.path !== path) { ops.push({ type: 'del', sublevel: s.records, key: path }); continue }
      for (const { name, sub } of SECONDARY) {
        const key = keys[name]
        if (key !== null) ops.push({ type: 'put', sublevel: sub(s), key, value: '' })
      }
      counts[r.state]++
      const log = logs[i]
      if (log === undefined || log.deleted === true || log.path !== path) {
        seq++
        ops.push({ type: 'put', sublevel: s.records, key: path, value: { ...r, seq } })
        ops.push({ type: 'put', sublevel: s.log, key: padNumber(seq), value: { path } })
      }
      const tomb = tombs[i]
      if (tomb !== undefined) {
        ops.push({ type: 'del', sublevel: s.tombstones, key: path })
        ops.push({ type: 'del', sublevel: s.log, key: padNumber(tomb) })
      }
    }
    await flush()
  }
  await flush(true)

  for await (const entries of chunks(s.log.iterator())) {
    const found = await s.records.getMany(entries.map(([, v]) => v.path))
    const tombs = await s.tombstones.getMany(entries.map(([, v]) => v.path))
    entries.forEach(([key, v], i) => {
      const n = Number(key)
      const fine = v.deleted === true ? found[i] === undefined && tombs[i] === n : found[i]?.seq === n
      if (!fine) ops.push({ type: 'del', sublevel: s.log, key })
    })
    await flush()
  }
  await flush(true)
  for await (const entries of chunks(s.tombstones.iterator())) {
    const logs = await s.log.getMany(entries.map(([, n]) => padNumber(n)))
    logs.forEach((l, i) => { if (l?.deleted !== true) ops.push({ type: 'del', sublevel: s.tombstones, key: entries[i][0] }) })
    await flush()
  }

  let group: { scope: string; count: number; last: string } | null = null
  const writeGroup = async (g: { scope: string; count: number; last: string }): Promise<void> => {
    const r = await s.records.get(lastPart(g.last))
    if (r?.collectedAt == null) return
    const value: ScopeSummaryValue = { count: g.count, latestCollectedAt: r.collectedAt, latestPath: r.path }
    ops.push({ type: 'put', sublevel: s.scopes, key: g.scope, value })
    await flush()
  }
  for await (const keys of chunks(s.byScope.keys())) {
    for (const key of keys) {
      const scope = firstPart(key)
      if (group !== null && group.scope !== scope) await writeGroup(group)
      group = group !== null && group.scope === scope ? { scope, count: group.count + 1, last: key } : { scope, count: 1, last: key }
    }
  }
  if (group !== null) await writeGroup(group)

  ops.push({ type: 'put', sublevel: s.meta, key: 'seq', value: seq })
  for (const st of FILE_STATES) ops.push({ type: 'put', sublevel: s.meta, key: `count:${st}`, value: counts[st] })
  await flush(true)
}
