// Ranking and snippets of the candidate rows the engine found (pure). The engine answers which
// rows match, newest first; what it would charge for its own BM25 (a pass over every match of
// every word, to count them) and snippets (the query evaluated again per hit) grows with the
// index, so both are made here from the candidates' own text: BM25 with the words' document
// frequencies estimated by the caller, and a window of words around the best match, marked.
import type { Term } from './query.js'

/** What the engine's tokenizer (unicode61) makes a word of: letters, digits, marks, private use. */
const TOKEN = /[\p{L}\p{N}\p{M}\p{Co}]+/gu
const NON_ASCII = /[^\x00-\x7f]/
const MARKS = /\p{M}/gu

/** A word as the engine compares it: case folded, diacritics removed. */
export function normalize (word: string): string {
  return foldText(word).toLowerCase()
}

export interface Token { word: string; start: number; end: number }

/** The words of `text` (at most `maxChars` of it), with their offsets. */
export function tokenize (text: string, maxChars = Infinity): Token[] {
  const tokens: Token[] = []
  const source = text.length > maxChars ? text.slice(0, maxChars) : text
  for (const m of source.matchAll(TOKEN)) {
    const word = normalize(m[0])
    if (word !== '') tokens.push({ word, start: m.index, end: m.index + m[0].length })
  }
  return tokens
}

/** A query term as a sequence of normalized words; the last one a prefix when the term is. */
export interface TermWords { words: string[]; prefix: boolean }

export function termWords (terms: readonly Term[]): TermWords[] {
  return terms.map((t) => {
    const words = tokenize(t.text).map((tok) => tok.word)
    // as the engine's expression (query.ts): a one-letter prefix is a word
    return { words, prefix: t.prefix && [...(words[words.length - 1] ?? '')].length >= 2 }
  }).filter((t) => t.words.length > 0)
}

/** Where `term` occurs in `tokens`: [first token, last token] of each occurrence. */
export function occurrences (tokens: readonly Token[], term: TermWords): Array<[number, number]> {
  const found: Array<[number, number]> = []
  const n = term.words.length
  for (let i = 0; i + n <= tokens.length; i++) {
    let k = 0
    for (; k < n; k++) {
      const word = tokens[i + k]!.word
      const want = term.words[k]!
      if (!(word === want || (term.prefix && k === n - 1 && word.startsWith(want)))) break
    }
    if (k === n) found.push([i, i + n - 1])
  }
  return found
}

const escape = (s: string): string => s.replace(/[.*+?^${}()|[\]\\]/g, '\\$&')

/**
 * A counter of a term's occurrences in a text, for ranking many candidates: one regular
 * expression over the text (case-insensitive, diacritics removed first where there are any)
 * instead of tokenizing it, which costs several times as much.
 */
export function termCounter (term: TermWords): (folded: string) => number {
  const body = term.words.map(escape).join('[^\\p{L}\\p{N}]+')
  const re = new RegExp(`(?<![\\p{L}\\p{N}])${body}${term.prefix ? '' : '(?![\\p{L}\\p{N}])'}`, 'giu')
  return (folded) => {
    let n = 0
    re.lastIndex = 0
    while (re.exec(folded) !== null) n++
    return n
  }
}

/** The text as termCounter reads it: diacritics removed (case is left to the expression). */
export function foldText (text: string): string {
  return NON_ASCII.test(text) ? text.normalize('NFD').replace(MARKS, '') : text
}

/** About how many words the text has (its runs of non-space), counted without a regular expression. */
export function roughLength (text: string): number {
  let n = 0
  let inWord = false
  for (let i = 0; i < text.length; i++) {
    const c = text.charCodeAt(i)
    const space = c === 32 || (c >= 9 && c <= 13)
    if (!space && !inWord) n++
    inWord = !space
  }
  return n
}

const K1 = 1.2
const B = 0.75

export interface RankInput {
  /** Term frequencies per query term, and the row's length in words. */
  tf: number[]
  length: number
}

/** BM25 of each row against the terms, given each term's document frequency among `total` rows. */
export function bm25 (rows: readonly RankInput[], df: readonly number[], total: number): number[] {
  const avg = rows.reduce((sum, r) => sum + r.length, 0) / Math.max(rows.length, 1) || 1
  const idf = df.map((d) => Math.log(1 + (total - d + 0.5) / (d + 0.5)))
  return rows.map((r) => {
    const norm = K1 * (1 - B + B * r.length / avg)
    // the engine matched the row, so every term is in it even where the text read here was cut
    return r.tf.reduce((score, tf, i) => score + idf[i]! * (Math.max(tf, 1) * (K1 + 1)) / (Math.max(tf, 1) + norm), 0)
  })
}

/** Words in a snippet (as FTS5's snippet(…, 24)). */
const SNIPPET_WORDS = 24

/** A window of the text around its best match, and where the matched words are in it. */
export function snippet (text: string, terms: readonly TermWords[]): { snippet: string; marks: Array<[number, number]> } {
  const tokens = tokenize(text)
  const hits = terms.map((t) => occurrences(tokens, t))
  const all = hits.flat().sort((a, b) => a[0] - b[0])
  // the window that shows the most different terms, the earliest of those
  let bestStart = 0
  let bestCount = -1
  for (const [first] of all) {
    const start = Math.max(0, first - 3)
    const count = hits.filter((h) => h.some(([a, b]) => a >= start && b < start + SNIPPET_WORDS)).length
    if (count > bestCount) { bestCount = count; bestStart = start }
  }
  const last = Math.min(tokens.length, bestStart + SNIPPET_WORDS) - 1
  const from = bestStart === 0 ? 0 : tokens[bestStart]!.start
  const to = last === tokens.length - 1 || last < 0 ? text.length : tokens[last]!.end
  const lead = from === 0 ? '' : '…'
  const body = lead + text.slice(from, to) + (to === text.length ? '' : '…')
  const marks: Array<[number, number]> = []
  for (const [a, b] of all) {
    if (a < bestStart || b > last) continue
    const mark: [number, number] = [tokens[a]!.start - from + lead.length, tokens[b]!.end - from + lead.length]
    const previous = marks[marks.length - 1]
    // two terms matching the same words (`lea*` and `lease`) mark them once
    if (previous !== undefined && mark[0] <= previous[1]) previous[1] = Math.max(previous[1], mark[1])
    else marks.push(mark)
  }
  return { snippet: body, marks }
}
