// The namespaces of the file index inside the Hearth database, shared by the index and its checker.
import type { HearthDatabase, Sublevel } from './database.js'
import { FILE_STATES } from './keys.js'
import type { FileRecord, FileState } from './types.js'

export type StoredRecord = FileRecord & { seq: number }

/** Change-log value: a live path (its record is read at query time) or a deletion tombstone. */
export type LogValue =
  | { path: string; deleted?: undefined }
  | { path: string; deleted: true; cid: string | null; scope: string }

export interface ScopeSummaryValue { count: number; latestCollectedAt: string; latestPath: string }

export interface FileIndexStore {
  db: HearthDatabase
  /** path → record */
  records: Sublevel<StoredRecord>
  /** scope NUL sortableInstant(collectedAt) NUL path → '' */
  byScope: Sublevel<string>
  /** cid NUL path → '' */
  byCid: Sublevel<string>
  /** state NUL path → '' */
  byState: Sublevel<string>
  /** fileId NUL path → '' */
  byFileId: Sublevel<string>
  /** scope → summary */
  scopes: Sublevel<ScopeSummaryValue>
  /** padNumber(seq) → change */
  log: Sublevel<LogValue>
  /** deleted path → seq of its tombstone in the log */
  tombstones: Sublevel<number>
  /** 'seq' and 'count:<state>' → number */
  meta: Sublevel<number>
}

export function fileIndexStore (db: HearthDatabase, name: string): FileIndexStore {
  const json = <V>(sub: string): Sublevel<V> => db.sublevel<V>([name, sub])
  const keysOnly = (sub: string): Sublevel<string> => db.sublevel<string>([name, sub], { valueEncoding: 'utf8' })
  return {
    db,
    records: json('rec'),
    byScope: keysOnly('scope'),
    byCid: keysOnly('cid'),
    byState: keysOnly('state'),
    byFileId: keysOnly('fid'),
    scopes: json('sum'),
    log: json('log'),
    tombstones: json('tomb'),
    meta: json('meta')
  }
}

export function zeroCounts (): Record<FileState, number> {
  return Object.fromEntries(FILE_STATES.map((s) => [s, 0])) as Record<FileState, number>
}

export async function loadMeta (store: FileIndexStore): Promise<{ seq: number; counts: Record<FileState, number> }> {
  const keys = ['seq', ...FILE_STATES.map((s) => `count:${s}`)]
  const [seq, ...counts] = await store.meta.getMany(keys)
  const out = zeroCounts()
  FILE_STATES.forEach((s, i) => { out[s] = counts[i] ?? 0 })
  return { seq: seq ?? 0, counts: out }
}
