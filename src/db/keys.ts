// Key encodings of the file index (pure). LevelDB sorts keys by their UTF-8 bytes, so every key part
// that must sort is made fixed-width or separated by NUL, which sorts below every other character:
// `a.b` NUL ... sorts before `a.bc` NUL ..., so a scope's entries are one contiguous range.
import { HearthError } from '../errors.js'
import type { FileRecord, FileState } from './types.js'

export const SEP = '\u0000'
/** Upper bound of the range of composite keys whose first parts are `parts`. */
const AFTER_SEP = '\u0001'

export const FILE_STATES: readonly FileState[] = ['waiting-schema', 'waiting-storage', 'rejected', 'stored', 'registered', 'deleted']

export function isFileState (value: unknown): value is FileState {
  return typeof value === 'string' && (FILE_STATES as readonly string[]).includes(value)
}

export function joinKey (...parts: string[]): string {
  return parts.join(SEP)
}

/** The last part of a composite key (the path, in every secondary index). */
export function lastPart (key: string): string {
  return key.slice(key.lastIndexOf(SEP) + 1)
}

export function firstPart (key: string): string {
  const i = key.indexOf(SEP)
  return i === -1 ? key : key.slice(0, i)
}

/** `{ gt, lt }` covering every composite key that starts with `parts` as whole parts. */
export function rangeOf (...parts: string[]): { gt: string; lt: string } {
  const head = parts.join(SEP)
  return { gt: head + SEP, lt: head + AFTER_SEP }
}

const ISO_UTC = /^(\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2})(?:\.(\d+))?Z$/
const ISO_WITH_ZONE = /^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}(?::\d{2}(?:\.\d+)?)?(?:Z|[+-]\d{2}:?\d{2})$/i

/**
 * A fixed-width, sortable form of an ISO 8601 instant: `YYYY-MM-DDTHH:MM:SS.fffffffffZ`.
 * Envelopes may omit milliseconds or carry any number of fraction digits, and plain string order
 * would put '10:00:00Z' after '10:00:00.500Z' ('Z' > '.'); padding the fraction fixes that.
 * Nanoseconds keep sub-millisecond fractions distinct. Instants with an offset are converted to UTC.
 */
export function sortableInstant (iso: string): string {
  // A write checks its record's instant, then makes its scope key and reads the old one's and the
  // scope summary's: the same few strings, each parsed once (Date.parse is most of this function).
  const known = typeof iso === 'string' ? sortable.get(iso) : undefined
  if (known !== undefined) return known
  const made = sortableUncached(iso)
  if (sortable.size >= SORTABLE_CACHE) sortable.clear()
  sortable.set(iso, made)
  return made
}

const SORTABLE_CACHE = 512
const sortable = new Map<string, string>()

function sortableUncached (iso: string): string {
  const m = ISO_UTC.exec(iso)
  if (m !== null && !Number.isNaN(Date.parse(`${m[1]}Z`))) {
    return `${m[1]}.${(m[2] ?? '').slice(0, 9).padEnd(9, '0')}Z`
  }
  // Without a zone designator Date.parse would read local time: not an instant, refuse it.
  const ms = typeof iso === 'string' && ISO_WITH_ZONE.test(iso) ? Date.parse(iso) : Number.NaN
  if (Number.isNaN(ms) || ms < Date.UTC(0, 0, 1) || ms >= Date.UTC(10000, 0, 1)) {
    throw new HearthError('INVALID_ARGUMENT', `not an ISO 8601 instant: ${JSON.stringify(iso)}`)
  }
  return sortableUncached(new Date(ms).toISOString())
}

/** Fixed-width decimal, so numeric order is key order (up to Number.MAX_SAFE_INTEGER). */
export function padNumber (n: number): string {
  return String(n).padStart(16, '0')
}

export interface SecondaryKeys {
  /** scope NUL sortableInstant NUL path; absent when collectedAt is null (not a version). */
  scope: string | null
  cid: string | null
  state: string
  fileId: string | null
}

export function secondaryKeys (r: FileRecord): SecondaryKeys {
  return {
    scope: r.collectedAt === null ? null : joinKey(r.scope, sortableInstant(r.collectedAt), r.path),
    cid: r.cid === null || r.cid === '' ? null : joinKey(r.cid, r.path),
    state: joinKey(r.state, r.path),
    fileId: r.fileId === undefined || r.fileId === null || r.fileId === '' ? null : joinKey(r.fileId, r.path)
  }
}

function badRecord (message: string, path?: unknown): HearthError {
  return new HearthError('INVALID_ARGUMENT', `invalid file record: ${message}`, path === undefined ? undefined : { path })
}

function plainString (value: unknown): value is string {
  return typeof value === 'string' && !value.includes(SEP)
}

/**
 * Checks what the index relies on; throws INVALID_ARGUMENT. Returns the record as it will read back
 * (a copy without undefined fields, as JSON would store it) without `seq`, which the index assigns.
 */
export function checkRecord (input: FileRecord): FileRecord {
  if (input === null || typeof input !== 'object' || Array.isArray(input)) throw badRecord('not an object')
  const r = asStored(input)
  if (!plainString(r.path) || r.path === '') throw badRecord('path must be a non-empty string without NUL', r.path)
  if (!plainString(r.scope) || r.scope === '') throw badRecord('scope must be a non-empty string without NUL', r.path)
  if (!isFileState(r.state)) throw badRecord(`unknown state ${JSON.stringify(r.state)}`, r.path)
  if (r.collectedAt !== null) {
    if (typeof r.collectedAt !== 'string') throw badRecord('collectedAt must be a string or null', r.path)
    sortableInstant(r.collectedAt)
  }
  if (r.cid !== null && !plainString(r.cid)) throw badRecord('cid must be a string or null', r.path)
  if (r.fileId !== undefined && r.fileId !== null && !plainString(r.fileId)) throw badRecord('fileId must be a string or null', r.path)
  return r
}

/**
 * `JSON.parse(JSON.stringify(record))` without `seq`, made field by field: a record's fields are
 * strings, numbers, null and a list of strings, copied as they are (a number JSON cannot hold
 * becomes null, -0 becomes 0); anything else takes the JSON round trip. A field named `__proto__`
 * is refused: assigned to the copy it would set the copy's prototype (JSON.parse would have made
 * it a field), and no record has one.
 */
function asStored (input: FileRecord): FileRecord {
  const out: Record<string, unknown> = {}
  for (const key of Object.keys(input)) {
    if (key === 'seq') continue
    if (key === '__proto__') throw badRecord('a field named __proto__', input.path)
    const value = (input as unknown as Record<string, unknown>)[key]
    switch (typeof value) {
      case 'string': case 'boolean': out[key] = value; break
      case 'number': out[key] = Number.isFinite(value) ? value + 0 : null; break
      case 'undefined': case 'function': case 'symbol': break
      default:
        if (value === null) out[key] = null
        else if (isStringList(value)) out[key] = value.slice()
        else if (typeof value === 'bigint') throw badRecord(`${key} is a bigint`, input.path)
        else { const json = JSON.stringify(value); if (json !== undefined) out[key] = JSON.parse(json) }
    }
  }
  return out as unknown as FileRecord
}

/** An array of strings at every index (a hole is not one: JSON writes it as null). */
function isStringList (value: unknown): value is string[] {
  if (!Array.isArray(value)) return false
  for (let i = 0; i < value.length; i++) if (typeof value[i] !== 'string') return false
  return true
}
