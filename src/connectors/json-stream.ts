// Parses JSON as it streams in and hands out the values at chosen paths one at a time, so a
// 300 MB conversations.json costs one conversation of memory, not the whole text and its tree.
//
// Each value handed out (a record) passes the rules a request body does (src/protocol/bounded-json.ts):
// nesting depth, numbers a double holds exactly, and the count of object members, objects and
// arrays, checked token by token as the text streams. A record that breaks one is never built
// past the point where it did: its remaining tokens are skipped, it is reported through
// `onRefused` with the code and its path, and the records after it are read as usual. The same
// count bounds what lies outside the records (the file is refused past it).
import { TokenParser, Tokenizer, TokenType } from '@streamparser/json'
import { HearthError, isHearthError } from '../errors.js'
import { DEFAULT_MAX_JSON_VALUES, MAX_DATA_DEPTH, numberIsExact } from '../protocol/bounded-json.js'

export interface RefusedRecord {
  /** JSONPath of the record in the file, e.g. `$[12]` or `$.tracks[3]`. */
  record: string
  errorCode: 'JSON_TOO_DEEP' | 'NUMBER_NOT_REPRESENTABLE' | 'JSON_TOO_MANY_VALUES'
  message: string
}

export interface StreamJsonOptions {
  paths: string[]
  /** Names the file in errors and reports. */
  what: string
  /** A record that broke a rule and was left out. */
  onRefused?: (refused: RefusedRecord) => void
  maxDepth?: number
  maxValues?: number
}

interface Container { array: boolean; key: string; index: number; expectKey: boolean }

/**
 * The values at `paths` (e.g. `$.*`, the elements of the top-level array) in document order.
 * EXPORT_UNREADABLE when the text is not valid JSON, or when what surrounds the records breaks a rule.
 */
export async function * streamJsonValues (chunks: AsyncIterable<Uint8Array>, opts: StreamJsonOptions): AsyncGenerator<unknown> {
  const recordDepth = Math.min(...opts.paths.map((p) => p.split('.').length - 1))
  const maxDepth = opts.maxDepth ?? MAX_DATA_DEPTH
  const maxValues = opts.maxValues ?? DEFAULT_MAX_JSON_VALUES
  const ready: unknown[] = []
  let failure: Error | undefined
  const invalid = (err: Error): HearthError => isHearthError(err)
    ? err
    : new HearthError('EXPORT_UNREADABLE', `${opts.what} is not valid JSON: ${err.message}`, { path: opts.what })

  const stack: Container[] = []
  let recordValues = 0 // counted values of the record being read
  let outerValues = 0 // counted values outside records
  let refusedHere: RefusedRecord | null = null // the record being skipped
  let skipDepth = -1

  const tokenizer = new Tokenizer()
  let parser = newParser()
  function newParser (): TokenParser {
    const p = new TokenParser({ paths: opts.paths, keepStack: false })
    p.onValue = ({ value }) => { ready.push(value) }
    p.onError = (err) => { failure ??= err }
    p.onEnd = () => { if (!tokenizer.isEnded) tokenizer.end() }
    return p
  }
  tokenizer.onError = (err) => { failure ??= err }
  tokenizer.onEnd = () => { if (!parser.isEnded) parser.end() }
  const path = (upTo = stack.length): string => {
    let out = '$'
    for (const c of stack.slice(0, upTo)) out += c.array ? `[${c.index}]` : /^[A-Za-z_$][\w$]*$/.test(c.key) ? `.${c.key}` : `[${JSON.stringify(c.key.slice(0, 60))}]`
    return out
  }
  const inRecord = (): boolean => recordDepth > 0 && stack.length >= recordDepth
  const refuse = (errorCode: RefusedRecord['errorCode'], message: string): void => {
    if (!inRecord()) { failure ??= new HearthError('EXPORT_UNREADABLE', `${opts.what}: ${message}`, { path: opts.what, errorCode }); return }
    refusedHere = { record: path(recordDepth), errorCode, message }
    skipDepth = recordDepth
  }
  // a key of the records' container belongs to the file, not to the record it names
  const count = (key: boolean): void => {
    const record = recordDepth > 0 && (stack.length > recordDepth || (stack.length === recordDepth && !key))
    if (record) {
      if (++recordValues > maxValues) refuse('JSON_TOO_MANY_VALUES', `more than ${maxValues} JSON values (at ${path()})`)
    } else if (++outerValues > maxValues) {
      failure ??= new HearthError('EXPORT_UNREADABLE', `${opts.what} holds more than ${maxValues} JSON values outside its records (at ${path()})`, { path: opts.what, errorCode: 'JSON_TOO_MANY_VALUES' })
    }
  }
  // a record is a value directly inside the records' container: it ends with its scalar token or
  // with the token closing it
  const recordEnded = (): void => {
    recordValues = 0
    if (refusedHere === null) return
    opts.onRefused?.({ ...refusedHere, message: `${opts.what}: the record at ${refusedHere.record} was left out: ${refusedHere.message}` })
    refusedHere = null
    skipDepth = -1
    // the parser saw only part of it: a new one, primed with the containers around the records
    // and a stand-in for the record, which is dropped if the parser hands it out
    parser = newParser()
    for (const c of stack) {
      parser.write({ token: c.array ? TokenType.LEFT_BRACKET : TokenType.LEFT_BRACE, value: c.array ? '[' : '{' })
      if (!c.array) {
        parser.write({ token: TokenType.STRING, value: c.key })
        parser.write({ token: TokenType.COLON, value: ':' })
      }
    }
    const before = ready.length
    parser.write({ token: TokenType.NULL, value: null })
    if (ready.length > before) ready.pop()
  }

  tokenizer.onToken = (info) => {
    const { token } = info
    const top = stack[stack.length - 1]
    const skipping = skipDepth >= 0
    let scalar = false
    if (token === TokenType.LEFT_BRACE || token === TokenType.LEFT_BRACKET) {
      if (!skipping) {
        count(false)
        if (stack.length - recordDepth >= maxDepth) refuse('JSON_TOO_DEEP', `nested deeper than ${maxDepth} levels (at ${path()})`)
      }
      stack.push({ array: token === TokenType.LEFT_BRACKET, key: '', index: 0, expectKey: token === TokenType.LEFT_BRACE })
    } else if (token === TokenType.RIGHT_BRACE || token === TokenType.RIGHT_BRACKET) {
      stack.pop()
    } else if (token === TokenType.COMMA) {
      if (top !== undefined) { if (top.array) top.index++; else top.expectKey = true }
    } else if (token === TokenType.STRING && top !== undefined && !top.array && top.expectKey) {
      top.key = String(info.value)
      top.expectKey = false
      if (!skipping) count(true)
    } else if (token !== TokenType.COLON && token !== TokenType.SEPARATOR) {
      scalar = true
      if (token === TokenType.NUMBER && !skipping) {
        const literal = numberText.last
        if (!numberIsExact(literal)) refuse('NUMBER_NOT_REPRESENTABLE', `a number JSON cannot carry exactly at ${path()}: ${literal.slice(0, 40)}`)
      }
    }
    if (skipDepth < 0) parser.write(info)
    const closed = token === TokenType.RIGHT_BRACE || token === TokenType.RIGHT_BRACKET
    if (recordDepth > 0 && stack.length === recordDepth && (closed || scalar)) recordEnded()
  }
  // the exact text of each number, for the exactness check (the tokenizer hands out only the double)
  const numberText = { last: '' }
  const hooks = tokenizer as unknown as { parseNumber: (s: string) => number }
  const parseNumber = hooks.parseNumber.bind(tokenizer)
  hooks.parseNumber = (text) => { numberText.last = text; return parseNumber(text) }

  let first = true
  for await (let chunk of chunks) {
    if (first) {
      first = false
      // A byte-order mark is not JSON; exports written on Windows sometimes start with one.
      if (chunk[0] === 0xef && chunk[1] === 0xbb && chunk[2] === 0xbf) chunk = chunk.subarray(3)
    }
    if (chunk.length === 0) continue
    if (tokenizer.isEnded) throw invalid(new Error('text after the end of the JSON value'))
    tokenizer.write(chunk)
    if (failure !== undefined) throw invalid(failure)
    for (const value of ready.splice(0)) yield value
  }
  if (first) throw invalid(new Error('the file is empty'))
  if (!tokenizer.isEnded) tokenizer.end()
  if (failure !== undefined) throw invalid(failure)
  for (const value of ready.splice(0)) yield value
}
