// One page of hits for a checked query. The engine gives the newest matching rows (filters are
// words of the expression, see tags.ts); the newest MAX_RANKED of them are ranked here by BM25
// (rank.ts) and the page's hits get their version and a snippet. What one query may cost is
// bounded whatever the index's size: at most MAX_RANKED + 1 rows ranked, at most MAX_SCANNED
// read, a word's frequency estimated from its newest DF_SAMPLE matches.
import { coveringPattern } from '../protocol/scope-pattern.js'
import { termExpression, type CheckedQuery } from './query.js'
import { bm25, foldText, roughLength, snippet, termCounter, termWords } from './rank.js'
import type { CandidateRow, SearchStore } from './store.js'
import { anyTag, rangeTags, scopeTag } from './tags.js'
import type { SearchHit } from './types.js'

/** Most matches a query ranks (the newest ones); an answer says when there were more. */
export const MAX_RANKED = 1000
/** Most rows a query reads (a time range's edge days can hold rows outside it, which are skipped). */
const MAX_SCANNED = 20_000
/** Matches read per word to estimate how common it is. */
const DF_SAMPLE = 256
/** Words whose frequency is estimated (the others weigh like the rarest of those). */
const MAX_ESTIMATED = 8
/** Text of a candidate read for its ranking (its snippet reads all of it). */
const RANK_CHARS = 4000

export interface Found { hits: SearchHit[]; capped: boolean }

const NOTHING: Found = { hits: [], capped: false }

/** The FTS5 expression of the query with its filters, or null when nothing can match. */
function filteredMatch (store: SearchStore, c: CheckedQuery): { match: string; inRange: (t: number | null) => boolean } | null {
  const parts = [c.match]
  if (c.scope !== null || (c.within !== null && !c.within.includes('*'))) {
    const scopes = store.scopes().filter((scope) => (c.scope === null || coveringPattern([c.scope], scope) !== null) &&
      (c.within === null || coveringPattern(c.within, scope) !== null))
    if (scopes.length === 0) return null
    parts.push(anyTag(scopes.map(scopeTag)))
  }
  let inRange = (_t: number | null): boolean => true
  if (c.sinceMs !== null || c.untilMs !== null) {
    const bounds = store.timeBounds()
    if (bounds === null) return null
    const lo = c.sinceMs ?? bounds.min
    const hi = c.untilMs ?? bounds.max + 1
    const tags = lo < hi ? rangeTags(lo, hi) : []
    if (tags.length === 0) return null
    parts.push(anyTag(tags))
    inRange = (t) => t !== null && (c.sinceMs === null || t >= c.sinceMs) && (c.untilMs === null || t < c.untilMs)
  }
  return { match: parts.join(' AND '), inRange }
}

/** The newest matching rows in range, up to MAX_RANKED + 1 (one more says there are more). */
function candidates (store: SearchStore, match: string, inRange: (t: number | null) => boolean): { rows: CandidateRow[]; capped: boolean } {
  const rows: CandidateRow[] = []
  let before = Number.MAX_SAFE_INTEGER
  let scanned = 0
  while (rows.length <= MAX_RANKED && scanned < MAX_SCANNED) {
    const asked = Math.min(MAX_RANKED + 1 - rows.length, MAX_SCANNED - scanned)
    const ids = store.matching(match, before, asked)
    scanned += ids.length
    for (const row of store.rows(ids)) if (inRange(row.t)) rows.push(row)
    if (ids.length < asked) break
    before = ids[ids.length - 1]!
  }
  const capped = rows.length > MAX_RANKED || scanned >= MAX_SCANNED
  rows.sort((a, b) => b.id - a.id)
  return { rows: rows.slice(0, MAX_RANKED), capped }
}

/** How many rows hold each term, estimated from the spread of its newest matches. */
function frequencies (store: SearchStore, c: CheckedQuery, matched: number, total: number): number[] {
  if (c.terms.length === 1) return [matched] // one word: its weight orders nothing
  const df = c.terms.slice(0, MAX_ESTIMATED).map((term) => {
    const ids = store.matching(`text : (${termExpression(term)})`, Number.MAX_SAFE_INTEGER, DF_SAMPLE)
    if (ids.length < DF_SAMPLE) return Math.max(ids.length, 1)
    return Math.min(total, Math.round(DF_SAMPLE * total / Math.max(total - ids[ids.length - 1]! + 1, 1)))
  })
  const rarest = Math.min(...df)
  return c.terms.map((_, i) => df[i] ?? rarest)
}

function rankInput (row: CandidateRow, counters: ReadonlyArray<(folded: string) => number>): { tf: number[]; length: number } {
  const text = foldText(row.text.length > RANK_CHARS ? row.text.slice(0, RANK_CHARS) : row.text)
  return { tf: counters.map((count) => count(text)), length: roughLength(text) }
}

/** One page: `limit` hits from `offset`, and whether the ranked matches were capped. */
export function findHits (store: SearchStore, c: CheckedQuery, limit: number): Found {
  const filtered = filteredMatch(store, c)
  if (filtered === null) return NOTHING
  const { rows, capped } = candidates(store, filtered.match, filtered.inRange)
  if (rows.length === 0 || c.offset >= rows.length) return { hits: [], capped }
  const terms = termWords(c.terms)
  const counters = terms.map(termCounter)
  const total = store.lastRowId()
  const scores = bm25(rows.map((row) => rankInput(row, counters)), frequencies(store, c, rows.length, total), total)
  const order = rows.map((_, i) => i).sort((a, b) => scores[b]! - scores[a]! || rows[b]!.id - rows[a]!.id)
  const page = order.slice(c.offset, c.offset + limit)
  const versions = new Map(store.versions([...new Set(page.map((i) => rows[i]!.version))]).map((v) => [v.id, v]))
  const hits: SearchHit[] = []
  for (const i of page) {
    const row = rows[i]!
    const version = versions.get(row.version)
    if (version === undefined) continue
    hits.push({
      scope: version.scope,
      path: version.path,
      collectedAt: version.collectedAt,
      pointer: row.pointer,
      at: row.at,
      field: row.field,
      ...snippet(row.text, terms),
      score: Math.round(scores[i]! * 1000) / 1000
    })
  }
  return { hits, capped }
}
