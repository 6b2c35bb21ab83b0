// Whether JSON text is already in the form `JSON.stringify(JSON.parse(text))` gives it, so a request
// body can be stored as the envelope's `data` as it came instead of being serialised again (for a
// 10 MB body that saves a stringify and a UTF-8 encoding of 10 MB, and their garbage). Pure, no I/O.
//
// The answer may be false for canonical text (the caller then serialises as before) but is never
// true for text that would serialise differently. It is only asked about text JSON.parse has
// accepted (valid UTF-8, valid JSON), so syntax is not checked again. Not canonical:
//  - whitespace between tokens;
//  - an escape JSON.stringify would not write: `\/`, `\u0041`, uppercase hex, a surrogate escape
//    (it writes only \" \\ \b \f \n \r \t and \u00xx for the other control characters);
//  - a number that does not print back the same (`1.0`, `1e2`, `-0`, `1E+21`);
//  - an object with a repeated key (JSON.parse keeps the last) or an array-index key like "0"
//    (V8 orders those first, so the text order might not be the object's order).
// Text of more tokens than `maxTokens` is answered false without looking further (see
// canonicalTokenLimit).

import { DEFAULT_MAX_JSON_VALUES } from './bounded-json.js'

const QUOTE = 0x22
const BACKSLASH = 0x5c

/** Escapes JSON.stringify writes as two characters: the byte after the backslash. */
const SHORT_ESCAPES = new Set([0x22, 0x5c, 0x62, 0x66, 0x6e, 0x72, 0x74]) // " \ b f n r t
/** Control characters JSON.stringify writes with a short escape, never as \u00xx. */
const SHORT_CONTROLS = new Set([0x08, 0x09, 0x0a, 0x0c, 0x0d])
const ARRAY_INDEX = /^(?:0|[1-9][0-9]{0,9})$/
const MAX_ARRAY_INDEX = 4_294_967_294
/** Tokens per counted JSON value at most: a member is its key, `:`, its value and a `,`. */
const TOKENS_PER_VALUE = 4
/** Room for the scalars of lists (one value however long) in a body that is mostly members. */
const TOKEN_SLACK = 1024

/**
 * The token bound for bodies limited to `maxJsonValues` counted values (ingest.maxJsonValues):
 * the check runs on the event loop before the body's own limits are checked, so its work is bounded
 * by what the bounded parse after it may cost anyway (a member is at most four tokens), and
 * a large body made of many small values within the limit is still answered (and encrypted early).
 */
export function canonicalTokenLimit (maxJsonValues: number): number {
  return TOKENS_PER_VALUE * maxJsonValues + TOKEN_SLACK
}

interface Frame { object: boolean; keys: Set<string> | null; expectKey: boolean }

/** `maxTokens`: past this many tokens the answer is false (default: the bound of DEFAULT_MAX_JSON_VALUES). */
export function isCanonicalJson (bytes: Uint8Array, maxTokens = canonicalTokenLimit(DEFAULT_MAX_JSON_VALUES)): boolean {
  const buf = Buffer.from(bytes.buffer, bytes.byteOffset, bytes.byteLength)
  const n = buf.length
  const stack: Frame[] = []
  // where the next backslash is, found again only once the scan has passed it: asking indexOf for
  // it at every string would scan to the end of a body without one each time (quadratic: a
  // million-key body took 100 s)
  const slash = { at: -1 }
  let i = 0
  let tokens = 0
  while (i < n) {
    const c = buf[i]!
    if (++tokens > maxTokens) return false
    if (c === QUOTE) {
      const end = stringEnd(buf, i, slash)
      if (end < 0) return false
      const top = stack[stack.length - 1]
      if (top !== undefined && top.object && top.expectKey) {
        if (!newKey(top, buf.toString('latin1', i + 1, end))) return false
        top.expectKey = false
      }
      i = end + 1
    } else if (c === 0x7b || c === 0x5b) { // { [
      stack.push({ object: c === 0x7b, keys: null, expectKey: c === 0x7b })
      i++
    } else if (c === 0x7d || c === 0x5d) { // } ]
      stack.pop()
      i++
    } else if (c === 0x2c) { // ,
      const top = stack[stack.length - 1]
      if (top?.object === true) top.expectKey = true
      i++
    } else if (c === 0x3a) { // :
      i++
    } else if (c === 0x2d || (c >= 0x30 && c <= 0x39)) {
      let end = i + 1
      let digitsOnly = true
      while (end < n && isNumberByte(buf[end]!)) { digitsOnly &&= buf[end]! <= 0x39 && buf[end]! >= 0x30; end++ }
      // a plain integer of up to 15 digits without a leading zero prints back as written
      if (!(digitsOnly && c !== 0x2d && end - i <= 15 && (c !== 0x30 || end === i + 1))) {
        const literal = buf.toString('latin1', i, end)
        if (String(Number(literal)) !== literal) return false
      }
      i = end
    } else if (c === 0x74 || c === 0x6e) { // true null
      i += 4
    } else if (c === 0x66) { // false
      i += 5
    } else {
      return false // whitespace, or anything unexpected
    }
  }
  return stack.length === 0
}

/** The index of the closing quote of the string opening at `start`, or -1 when an escape is not canonical. */
function stringEnd (buf: Buffer, start: number, next: { at: number }): number {
  let i = start + 1
  for (;;) {
    const quote = buf.indexOf(QUOTE, i)
    if (quote < 0) return -1
    if (next.at !== buf.length && next.at < i) {
      const found = buf.indexOf(BACKSLASH, i)
      next.at = found < 0 ? buf.length : found
    }
    const slash = next.at
    if (quote < slash) return quote
    const e = buf[slash + 1]!
    if (SHORT_ESCAPES.has(e)) { i = slash + 2; continue }
    if (e !== 0x75) return -1 // u
    // \u00xx with lowercase hex, for a control character without a short escape
    const hex = buf.toString('latin1', slash + 2, slash + 6)
    if (!/^00[01][0-9a-f]$/.test(hex) || SHORT_CONTROLS.has(parseInt(hex, 16))) return -1
    i = slash + 6
  }
}

function newKey (frame: Frame, raw: string): boolean {
  // escapes are canonical here, so equal raw text means equal keys and different text different keys
  const first = raw.charCodeAt(0)
  if (first >= 0x30 && first <= 0x39 && ARRAY_INDEX.test(raw) && Number(raw) <= MAX_ARRAY_INDEX) return false
  frame.keys ??= new Set()
  if (frame.keys.has(raw)) return false
  frame.keys.add(raw)
  return true
}

function isNumberByte (b: number): boolean {
  return (b >= 0x30 && b <= 0x39) || b === 0x2e || b === 0x65 || b === 0x45 || b === 0x2b || b === 0x2d
}
