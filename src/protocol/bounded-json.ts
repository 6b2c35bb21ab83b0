// JSON text as Hearth accepts it, for request bodies and dropped data files alike (pure, no I/O).
//
// Two limits JSON.parse does not have:
// - Nesting depth. JSON.parse copes with a million levels, but everything after it recurses
//   (JSON.stringify, schema validation, canonical serialisation) and overflows the stack, which
//   surfaced as a 500. Deeper than the limit is JSON_TOO_DEEP (400), checked before parsing.
// - Numbers that do not survive the trip into a double: `1e400` would become Infinity (stored as
//   null), `1e-400` 0, `9007199254740993` 9007199254740992. Every number literal must denote the
//   same decimal value as the double it parses to prints back as; otherwise
//   NUMBER_NOT_REPRESENTABLE (400) with the JSON path. Refusing is chosen over keeping such numbers
//   exact: the stored envelope, schema validation and every client are plain JSON in JavaScript,
//   so an exact big number would need a second number representation in all of them.
// - How many values. A 16 MB body of a million keys (or of five million `{}`) costs JSON.parse
//   seconds of CPU on the event loop, and everything after it (validation, stringify) as much
//   again. Every object member and every object or array counts one; a number, string, boolean
//   or null inside an array does not (a list of a million numbers parses as fast as 16 MB of
//   strings: bench/json-limits.ts). Past the limit is JSON_TOO_MANY_VALUES (400) with the path
//   where it tripped, found by the scan before JSON.parse runs.
import { isAscii } from 'node:buffer'
import { HearthError } from '../errors.js'

/** Deepest nesting of objects/arrays accepted in a data value (a file's envelope adds one level). */
export const MAX_DATA_DEPTH = 512

/**
 * Most counted values (object members, objects, arrays) in one request body, data file or peer's
 * file (ingest.maxJsonValues). Real records stay far below it: the shipped
 * connectors' records take 20 bytes or more per counted value, so a real record reaches 500,000
 * only past 10 MB, close to the 16 MB body and file limits it must pass anyway; a million keys
 * (10 bytes each) are refused halfway through the scan.
 */
export const DEFAULT_MAX_JSON_VALUES = 500_000

export interface BoundedJsonOptions {
  /** Deepest nesting of objects and arrays (`{}` is depth 1). */
  maxDepth: number
  /** Most object members, objects and arrays, together; default DEFAULT_MAX_JSON_VALUES. */
  maxValues?: number
  /** What the text is, for messages: `request body`, `file`. */
  subject: string
}

interface Frame { array: boolean; index: number; expectKey: boolean; keyStart: number; keyEnd: number }

/** Parse UTF-8 JSON bytes within the limits (INVALID_JSON, JSON_TOO_DEEP, NUMBER_NOT_REPRESENTABLE, JSON_TOO_MANY_VALUES). */
export function parseBoundedJsonBytes (bytes: Uint8Array, opts: BoundedJsonOptions): unknown {
  let text: string
  try {
    // ASCII (nearly every body: JSON.stringify escapes nothing above it, but most text is ASCII)
    // is its own UTF-8: a vectorised check and a byte copy, 2–8× faster than TextDecoder's
    // validating decode of a 10 MB body (bench/large-post.ts phases)
    text = isAscii(bytes) ? Buffer.from(bytes.buffer, bytes.byteOffset, bytes.byteLength).toString('latin1') : new TextDecoder('utf-8', { fatal: true }).decode(bytes)
  } catch (err) {
    throw new HearthError('INVALID_JSON', `${opts.subject} is not valid UTF-8`, { reason: 'invalid UTF-8' }, { cause: err })
  }
  return parseBoundedJson(text, opts)
}

export function parseBoundedJson (text: string, opts: BoundedJsonOptions): unknown {
  checkJsonLimits(text, opts)
  try {
    return JSON.parse(text)
  } catch (err) {
    const reason = err instanceof Error ? err.message : String(err)
    throw new HearthError('INVALID_JSON', `${opts.subject} is not valid JSON: ${reason}`, { reason }, { cause: err })
  }
}

/**
 * One linear pass over the text: depth, number literals and the count of values, with the path
 * of each position. Syntax is left to JSON.parse; on text that is not JSON this may report a
 * limit first.
 */
export function checkJsonLimits (text: string, opts: BoundedJsonOptions): void {
  const stack: Frame[] = []
  const n = text.length
  const maxValues = opts.maxValues ?? DEFAULT_MAX_JSON_VALUES
  let values = 0
  const counted = (): void => {
    if (++values <= maxValues) return
    const path = shortPath(text, stack)
    throw new HearthError('JSON_TOO_MANY_VALUES', `${opts.subject} holds more than ${maxValues} JSON values (at ${path}; ingest.maxJsonValues)`, { maxValues, path })
  }
  let i = 0
  while (i < n) {
    const c = text.charCodeAt(i)
    if (c === 0x22) { // "
      const end = stringEnd(text, i)
      const top = stack[stack.length - 1]
      if (top !== undefined && top.expectKey) { top.keyStart = i; top.keyEnd = end; top.expectKey = false; counted() }
      i = end
    } else if (c === 0x7b || c === 0x5b) { // { [
      counted()
      if (stack.length >= opts.maxDepth) {
        throw new HearthError('JSON_TOO_DEEP', `${opts.subject} is nested deeper than ${opts.maxDepth} levels (at ${shortPath(text, stack)})`, { maxDepth: opts.maxDepth, path: shortPath(text, stack) })
      }
      stack.push({ array: c === 0x5b, index: 0, expectKey: c === 0x7b, keyStart: -1, keyEnd: -1 })
      i++
    } else if (c === 0x7d || c === 0x5d) { // } ]
      stack.pop()
      i++
    } else if (c === 0x2c) { // ,
      const top = stack[stack.length - 1]
      if (top !== undefined) { if (top.array) top.index++; else top.expectKey = true }
      i++
    } else if (c === 0x2d || (c >= 0x30 && c <= 0x39)) { // - 0-9
      let j = i + 1
      let exponent = false
      for (let d = text.charCodeAt(j); j < n && isNumberChar(d); d = text.charCodeAt(++j)) if ((d | 0x20) === 0x65) exponent = true
      // the common case, up to 15 characters without an exponent, is exact without a closer look
      const literal = j - i <= 15 && !exponent ? '' : text.slice(i, j)
      if (literal !== '' && !numberIsExact(literal)) {
        const path = shortPath(text, stack)
        throw new HearthError('NUMBER_NOT_REPRESENTABLE', `${opts.subject} has a number JSON cannot carry exactly at ${path}: ${literal.slice(0, 40)} (write it as a string)`, { path, literal: literal.slice(0, 40) })
      }
      i = j
    } else {
      i++
    }
  }
}

/** Index after the closing quote of the string starting at `start` (or the text's end). */
function stringEnd (text: string, start: number): number {
  let from = start + 1
  for (;;) {
    const q = text.indexOf('"', from)
    if (q < 0) return text.length
    let backslashes = 0
    for (let k = q - 1; k > start && text.charCodeAt(k) === 0x5c; k--) backslashes++
    if (backslashes % 2 === 0) return q + 1
    from = q + 1
  }
}

function isNumberChar (c: number): boolean {
  return (c >= 0x30 && c <= 0x39) || c === 0x2e || c === 0x65 || c === 0x45 || c === 0x2b || c === 0x2d
}

const LITERAL = /^(-?)(\d+)(?:\.(\d+))?(?:[eE]([+-]?\d+))?$/

/** Exact when the literal and the double it parses to print the same decimal value. */
export function numberIsExact (literal: string): boolean {
  // up to 15 significant digits without an exponent always round-trips (DBL_DIG)
  if (literal.length <= 15 && !/[eE]/.test(literal)) return true
  const value = Number(literal)
  if (Number.isNaN(value)) return true // not a JSON number: JSON.parse reports the syntax error
  if (!Number.isFinite(value)) return false
  const a = decimal(literal)
  const b = decimal(String(value))
  if (a === null || b === null) return true
  return a.zero === b.zero && (a.zero || (a.negative === b.negative && a.digits === b.digits && a.exponent === b.exponent))
}

function decimal (s: string): { zero: boolean; negative: boolean; digits: string; exponent: number } | null {
  const m = LITERAL.exec(s)
  if (m === null) return null
  const fraction = m[3] ?? ''
  let digits = (m[2]! + fraction).replace(/^0+/, '')
  if (digits.length === 0) return { zero: true, negative: false, digits: '', exponent: 0 }
  const trimmed = digits.replace(/0+$/, '')
  const exponent = Number(m[4] ?? '0') - fraction.length + (digits.length - trimmed.length)
  digits = trimmed
  return { zero: false, negative: m[1] === '-', digits, exponent }
}

/** `$.a.b[3]["odd key"]` for the current position, shortened for messages. */
function shortPath (text: string, stack: Frame[]): string {
  let path = '$'
  for (const frame of stack) {
    if (path.length > 200) return `${path}…`
    if (frame.array) { path += `[${frame.index}]`; continue }
    if (frame.keyStart < 0) continue
    let key: string
    try { key = JSON.parse(text.slice(frame.keyStart, frame.keyEnd)) as string } catch { key = '?' }
    path += /^[A-Za-z_$][\w$]*$/.test(key) ? `.${key}` : `[${JSON.stringify(key.slice(0, 60))}]`
  }
  return path
}

/**
 * The same rules for a value already in memory (what a connector built and is about to submit):
 * depth, the count of object members, objects and arrays, and numbers JSON can carry (NaN and
 * ±Infinity would be written as null). Iterative, so a hostile depth cannot overflow the stack.
 */
export function checkValueLimits (value: unknown, opts: BoundedJsonOptions): void {
  const maxValues = opts.maxValues ?? DEFAULT_MAX_JSON_VALUES
  let values = 0
  const pending: Visit[] = [{ value, depth: 0, parent: null, key: '' }]
  while (pending.length > 0) {
    const visit = pending.pop()!
    const v = visit.value
    if (typeof v === 'number' && !Number.isFinite(v)) {
      const path = visitPath(visit)
      throw new HearthError('NUMBER_NOT_REPRESENTABLE', `${opts.subject} has a number JSON cannot carry at ${path}: ${String(v)}`, { path, literal: String(v) })
    }
    if (v === null || typeof v !== 'object') continue
    if (visit.depth >= opts.maxDepth) {
      const path = visitPath(visit)
      throw new HearthError('JSON_TOO_DEEP', `${opts.subject} is nested deeper than ${opts.maxDepth} levels (at ${path})`, { maxDepth: opts.maxDepth, path })
    }
    const keys = Array.isArray(v) ? null : Object.keys(v)
    values += 1 + (keys?.length ?? 0)
    if (values > maxValues) {
      const path = visitPath(visit)
      throw new HearthError('JSON_TOO_MANY_VALUES', `${opts.subject} holds more than ${maxValues} JSON values (at ${path}; ingest.maxJsonValues)`, { maxValues, path })
    }
    const depth = visit.depth + 1
    if (keys === null) {
      const list = v as unknown[]
      for (let i = list.length - 1; i >= 0; i--) pending.push({ value: list[i], depth, parent: visit, key: i })
    } else {
      for (let i = keys.length - 1; i >= 0; i--) pending.push({ value: (v as Record<string, unknown>)[keys[i]!], depth, parent: visit, key: keys[i]! })
    }
  }
}

interface Visit { value: unknown; depth: number; parent: Visit | null; key: string | number }

function visitPath (visit: Visit): string {
  const parts: string[] = []
  for (let v: Visit | null = visit; v?.parent != null; v = v.parent) {
    parts.push(typeof v.key === 'number' ? `[${v.key}]` : /^[A-Za-z_$][\w$]*$/.test(v.key) ? `.${v.key}` : `[${JSON.stringify(v.key.slice(0, 60))}]`)
  }
  const path = '$' + parts.reverse().join('')
  return path.length > 200 ? `${path.slice(0, 200)}…` : path
}
