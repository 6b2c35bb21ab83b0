// Versions whose data the ingest pipeline handed over as it stored them (the `version.data`
// event), so the indexer does not read them back: for a 10 MB POST that read-back (the file read,
// its SHA-256 and a second parse of 10 MB) cost the main thread ~30 ms right beside the next POST,
// and for a 1 KB POST a file read and parse per version. Memory stays bounded: a small version's
// data is kept as it is (extracted only when the indexer takes it: a scope searched by its latest
// version never indexes the versions a newer one replaced), a larger one's rows are extracted once
// the turn that stored it is over (the answer is not held up by it) and only they are kept; both
// within one budget, oldest dropped first. A version not handed over, dropped, or handed with other
// bytes than the index now records is read back as before.
import type { FileRecord } from '../db/types.js'
import { DEFAULT_EXTRACT_LIMITS, extractRows, type Extracted, type SearchSpec } from './extract.js'

/** Bytes of rows kept at most (UTF-16 text and an estimate per row); a version whose rows are larger is read back. */
export const HANDED_BUDGET_BYTES = 4 * 1024 * 1024
/** Versions kept at most (each a map entry; a burst of small POSTs indexed ~100 ms later). */
export const HANDED_MAX_VERSIONS = 4096
/** What a row costs beside its strings' characters (the object and its fields). */
const ROW_OVERHEAD_BYTES = 96
/** What a parsed value is counted to take per byte of its JSON (objects, their maps, UTF-16 strings). */
const DATA_BYTES_PER_JSON_BYTE = 4
/** Versions up to this size (their JSON) are kept as data; larger ones as rows. */
export const HANDED_DATA_MAX_BYTES = 64 * 1024

/** A kept version: its data (small) or its rows (extracted from larger data). */
interface Kept { sha256: string; scope: string; bytes: number; data?: unknown; extracted?: Extracted }
interface Pending { sha256: string; scope: string; data: unknown }

export interface HandedVersions {
  /** A version just stored and the data it was parsed to (kept if small; of a larger one, only its rows). */
  offer (record: FileRecord, data: unknown): void
  /** This exact version's rows (its path and sha256), once; null when it must be read back. */
  take (record: FileRecord): Extracted | null
  /**
   * The indexer went past this change of `path` (`sha256`: the version it named; null: the path
   * was deleted): what was kept of that version is let go, taken or not. A scope searched by its
   * latest version takes one version a step and passes the others, which would otherwise stay
   * until the budget pushed them out (~1,000 parsed 1 KB versions living long enough to be
   * promoted: in one bench/api.ts run before this, a 16-client POST's main thread cost 0.55 →
   * 0.63 ms against the base; in the run after it 0.70 → 0.72, within that bench's noise).
   */
  passed (path: string, sha256: string | null): void
  /** Bytes kept now, as counted against the budget (tests). */
  readonly keptBytes: number
  clear (): void
}

function rowsBytes (extracted: Extracted): number {
  let bytes = 0
  for (const row of extracted.rows) bytes += ROW_OVERHEAD_BYTES + 2 * (row.text.length + row.pointer.length + row.field.length + (row.at?.length ?? 0))
  return bytes
}

export function createHandedVersions (specFor: (scope: string) => SearchSpec, limits: { budgetBytes?: number; maxVersions?: number } = {}): HandedVersions {
  const budget = limits.budgetBytes ?? HANDED_BUDGET_BYTES
  const maxVersions = limits.maxVersions ?? HANDED_MAX_VERSIONS
  const kept = new Map<string, Kept>()
  const pending = new Map<string, Pending>()
  let keptBytes = 0
  let flushing: NodeJS.Immediate | null = null

  const drop = (path: string): void => {
    const k = kept.get(path)
    if (k === undefined) return
    kept.delete(path)
    keptBytes -= k.bytes
  }

  // the walk stops once its rows could not fit: a version of many records (a 10 MB export of
  // 25,000 posts: 61 ms to extract, ~18 MB of rows) costs the handover only its first part, and
  // is read back; below these limits the rows are exactly those of an unbounded extraction
  const extractLimits = { ...DEFAULT_EXTRACT_LIMITS, maxRows: Math.min(DEFAULT_EXTRACT_LIMITS.maxRows, Math.floor(budget / ROW_OVERHEAD_BYTES)), maxChars: Math.floor(budget / 2) }

  const keepRows = (path: string, p: Pending): void => {
    const extracted = extractRows(p.data, specFor(p.scope), extractLimits)
    drop(path)
    if (extracted.stopped === true || extracted.rows.length >= extractLimits.maxRows) return
    keep(path, { sha256: p.sha256, scope: p.scope, extracted, bytes: rowsBytes(extracted) })
  }

  const keep = (path: string, entry: Kept): void => {
    drop(path)
    if (entry.bytes > budget) return
    // oldest first (a Map iterates in insertion order): those the indexer skipped or will not reach soon
    for (const [old] of kept) {
      if (keptBytes + entry.bytes <= budget && kept.size < maxVersions) break
      drop(old)
    }
    kept.set(path, entry)
    keptBytes += entry.bytes
  }

  const flush = (): void => {
    flushing = null
    for (const [path, p] of pending) keepRows(path, p)
    pending.clear()
  }

  return {
    offer (record, data) {
      if (record.size <= HANDED_DATA_MAX_BYTES) {
        pending.delete(record.path)
        keep(record.path, { sha256: record.sha256, scope: record.scope, bytes: record.size * DATA_BYTES_PER_JSON_BYTE, data })
        return
      }
      pending.set(record.path, { sha256: record.sha256, scope: record.scope, data })
      flushing ??= setImmediate(flush)
    },
    take (record) {
      const p = pending.get(record.path)
      if (p !== undefined && p.sha256 === record.sha256) { pending.delete(record.path); keepRows(record.path, p) }
      // other bytes under the same path (a version edited in place since) stay for their own turn
      const k = kept.get(record.path)
      if (k === undefined || k.sha256 !== record.sha256) return null
      drop(record.path)
      return k.extracted ?? extractRows(k.data, specFor(k.scope))
    },
    passed (path, sha256) {
      const p = pending.get(path)
      if (p !== undefined && (sha256 === null || p.sha256 === sha256)) pending.delete(path)
      const k = kept.get(path)
      if (k !== undefined && (sha256 === null || k.sha256 === sha256)) drop(path)
    },
    get keptBytes () { return keptBytes },
    clear () {
      if (flushing !== null) clearImmediate(flushing)
      flushing = null
      pending.clear()
      kept.clear()
      keptBytes = 0
    }
  }
}
