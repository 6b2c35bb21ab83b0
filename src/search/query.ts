// The owner's query text made safe for the engine, the filters checked, and paging cursors (pure).
// The text is never handed to FTS5's query language as typed: each word or "phrase" becomes a
// quoted FTS5 string (operators, column filters, NEAR, parentheses are only words then), joined
// by AND; a trailing `*` makes a word a prefix. Anything else the engine could parse is refused
// before it gets there, so a query is either run or answered INVALID_ARGUMENT, never an engine error.
import { createHash } from 'node:crypto'
import { HearthError } from '../errors.js'
import { patternProblem } from '../protocol/scope-pattern.js'
import { instantMs } from './extract.js'
import type { SearchQuery } from './types.js'

export const MAX_QUERY_CHARS = 1000
export const MAX_TERMS = 32
/** Prefix words per query: each one merges the lists of every word it starts (the costly kind). */
export const MAX_PREFIXES = 4
export const DEFAULT_LIMIT = 20
export const MAX_LIMIT = 100
/** Deepest page reachable through cursors (offset of its first hit). */
export const MAX_OFFSET = 10_000

export interface Term { text: string; prefix: boolean; phrase: boolean }

/** What a word is made of for the engine's tokenizer (unicode61): letters, marks and digits. */
const WORD_CHAR = /[\p{L}\p{M}\p{N}]/u

/** The words and phrases of `q`; an unbalanced quote runs to the end of the text. */
export function parseTerms (q: string): Term[] {
  const terms: Term[] = []
  let i = 0
  while (i < q.length) {
    const c = q[i]!
    if (c === '"') {
      const end = q.indexOf('"', i + 1)
      const body = q.slice(i + 1, end === -1 ? q.length : end)
      i = end === -1 ? q.length : end + 1
      if (WORD_CHAR.test(body)) terms.push({ text: body, prefix: false, phrase: true })
      continue
    }
    if (/\s/.test(c)) { i++; continue }
    let j = i
    while (j < q.length && !/\s/.test(q[j]!) && q[j] !== '"') j++
    const word = q.slice(i, j)
    i = j
    const prefix = word.endsWith('*')
    const text = word.replace(/\*+$/, '')
    if (WORD_CHAR.test(text)) terms.push({ text, prefix, phrase: false })
  }
  return terms
}

/** The FTS5 expression of one term: a quoted string, a prefix when it has a `*`. */
export function termExpression (t: Term): string {
  const quoted = `"${t.text.replace(/"/g, '""')}"`
  // a one-letter prefix would expand to a large part of the vocabulary: it is a word then
  return t.prefix && [...t.text].filter((ch) => WORD_CHAR.test(ch)).length >= 2 ? `${quoted}*` : quoted
}

/** The FTS5 MATCH expression of the terms: quoted strings only, all in the text column. */
export function matchExpression (terms: readonly Term[]): string {
  return `text : (${terms.map(termExpression).join(' AND ')})`
}

export interface CheckedQuery {
  match: string
  terms: Term[]
  /** Patterns the asker chose (null: every scope). */
  scope: string | null
  /** Patterns the asker may see (null: everything; empty: nothing). */
  within: readonly string[] | null
  sinceMs: number | null
  untilMs: number | null
  limit: number
  offset: number
}

function instantParam (value: string | undefined, name: string): number | null {
  if (value === undefined || value === '') return null
  const ms = instantMs(value)
  if (ms === null) throw new HearthError('INVALID_ARGUMENT', `${name} must be an ISO 8601 date or instant (2024-03-01 or 2024-03-01T12:00:00Z), got ${JSON.stringify(value.slice(0, 40))}`)
  return ms
}

/** Checks everything about a query; INVALID_ARGUMENT with the reason otherwise. */
export function checkQuery (query: SearchQuery): CheckedQuery {
  const q = query.q
  if (typeof q !== 'string' || q.trim() === '') throw new HearthError('INVALID_ARGUMENT', 'q (the words to search for) is required')
  if (q.length > MAX_QUERY_CHARS) throw new HearthError('INVALID_ARGUMENT', `q is longer than ${MAX_QUERY_CHARS} characters`)
  const terms = parseTerms(q.replace(/\p{Cc}/gu, ' '))
  if (terms.length === 0) throw new HearthError('INVALID_ARGUMENT', 'q has no words to search for (only punctuation or operators)')
  if (terms.length > MAX_TERMS) throw new HearthError('INVALID_ARGUMENT', `q has more than ${MAX_TERMS} words and phrases`)
  if (terms.filter((t) => t.prefix).length > MAX_PREFIXES) throw new HearthError('INVALID_ARGUMENT', `q has more than ${MAX_PREFIXES} prefix words (word*)`)
  let scope: string | null = null
  if (query.scope !== undefined && query.scope !== '' && query.scope !== '*') {
    const problem = patternProblem(query.scope)
    if (problem !== null) throw new HearthError('INVALID_ARGUMENT', `scope ${JSON.stringify(query.scope.slice(0, 80))} ${problem}`)
    scope = query.scope
  }
  const within = query.within === undefined ? null : query.within.filter((p) => patternProblem(p) === null)
  const sinceMs = instantParam(query.since, 'since')
  const untilMs = instantParam(query.until, 'until')
  let limit = DEFAULT_LIMIT
  if (query.limit !== undefined) {
    if (!Number.isSafeInteger(query.limit) || query.limit < 1) throw new HearthError('INVALID_ARGUMENT', 'limit must be a positive integer')
    limit = Math.min(query.limit, MAX_LIMIT)
  }
  const checked: CheckedQuery = { match: matchExpression(terms), terms, scope, within, sinceMs, untilMs, limit, offset: 0 }
  if (query.cursor !== undefined && query.cursor !== '') checked.offset = readCursor(query.cursor, checked)
  return checked
}

/** What a cursor is bound to: the same query and filters (a cursor of another query is refused). */
function queryKey (c: CheckedQuery): string {
  return createHash('sha256').update(JSON.stringify([c.match, c.scope, c.within, c.sinceMs, c.untilMs])).digest('base64url').slice(0, 16)
}

export function makeCursor (c: CheckedQuery, offset: number): string | null {
  if (offset > MAX_OFFSET) return null
  return Buffer.from(JSON.stringify({ o: offset, k: queryKey(c) })).toString('base64url')
}

function readCursor (cursor: string, c: CheckedQuery): number {
  const bad = new HearthError('INVALID_ARGUMENT', 'cursor is not the next of a page of this query (ask again from the first page)')
  if (cursor.length > 200 || !/^[A-Za-z0-9_-]+$/.test(cursor)) throw bad
  let parsed: unknown
  try { parsed = JSON.parse(Buffer.from(cursor, 'base64url').toString('utf8')) } catch { throw bad }
  const { o, k } = (parsed ?? {}) as { o?: unknown; k?: unknown }
  if (typeof o !== 'number' || !Number.isSafeInteger(o) || o < 0 || o > MAX_OFFSET || k !== queryKey(c)) throw bad
  return o
}
