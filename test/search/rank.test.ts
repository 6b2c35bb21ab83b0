// The pure parts of a query's answer: the filter words of a time range (tags.ts), and the
// ranking and snippets made from the candidates' text (rank.ts).
import { test } from 'node:test'
import assert from 'node:assert/strict'
import { prng } from '../support/search-data.js'
import { rangeTags, rowTags, scopeTag, timeTags } from '../../src/search/tags.js'
import { bm25, foldText, roughLength, snippet, termCounter, termWords } from '../../src/search/rank.js'
import { parseTerms } from '../../src/search/query.js'

const DAY = 86_400_000

test('a time range\'s words cover exactly the days it touches, whole years and months by one word', () => {
  const rand = prng(7)
  for (let i = 0; i < 300; i++) {
    const lo = Date.UTC(2014, 0, 1) + Math.floor(rand() * 12 * 365 * DAY)
    const hi = lo + 1 + Math.floor(rand() * (rand() < 0.5 ? 40 : 3000) * DAY)
    const tags = new Set(rangeTags(lo, hi))
    // every day touched is covered by exactly one of its three words, no day outside is
    for (let day = Math.floor(lo / DAY) * DAY - 3 * DAY; day < hi + 3 * DAY; day += DAY) {
      const covering = timeTags(day).filter((t) => tags.has(t)).length
      const touched = day + DAY > lo && day < hi
      assert.equal(covering, touched ? 1 : 0, `${new Date(day).toISOString()} in [${new Date(lo).toISOString()}, ${new Date(hi).toISOString()})`)
    }
    assert.ok(tags.size <= 31 + 11 + 12 + 11 + 31, `${tags.size} words`)
  }
  assert.deepEqual(rangeTags(Date.UTC(2024, 0, 1), Date.UTC(2025, 0, 1)), ['y2024'])
  assert.deepEqual(rangeTags(Date.UTC(2024, 2, 1), Date.UTC(2024, 3, 1)), ['m202403'])
  assert.deepEqual(rangeTags(Date.UTC(2024, 2, 31, 12), Date.UTC(2024, 3, 1)), ['d20240331'])
  assert.deepEqual(timeTags(new Date(0).setUTCFullYear(0, 5, 1)), [], 'years before 1 have none')
  assert.deepEqual(timeTags(new Date(0).setUTCFullYear(99, 0, 2)), ['d00990102', 'm009901', 'y0099'], 'years below 100 are not 19xx')
  assert.deepEqual(timeTags(null), [])
})

test('a row\'s filter words: its scope in hex (never a word of text), its day, month and year', () => {
  assert.equal(rowTags('spotify.streamingHistory', Date.UTC(2024, 2, 5)), `${scopeTag('spotify.streamingHistory')} d20240305 m202403 y2024`)
  assert.match(scopeTag('a.b'), /^s[0-9a-f]+$/)
  assert.notEqual(scopeTag('ab.c'), scopeTag('a.bc'))
})

test('terms are counted as the engine matches them: words, prefixes, phrases, any case, no diacritics', () => {
  const count = (q: string, text: string): number[] => termWords(parseTerms(q)).map((t) => termCounter(t)(foldText(text)))
  assert.deepEqual(count('lease', 'Lease, leases; the LEASE. release'), [2])
  assert.deepEqual(count('lea*', 'Lease, leases; release'), [2])
  assert.deepEqual(count('"summer night"', 'a summer  night, summer-night, summer nights'), [2])
  assert.deepEqual(count('bjork cafe', 'Björk at the Café, bjork'), [2, 1])
  assert.equal(roughLength(' one  two\tthree\n'), 3)
})

test('BM25: more occurrences and shorter rows rank higher; a rare word outweighs a common one', () => {
  const [few, many, long] = bm25([{ tf: [1], length: 10 }, { tf: [3], length: 10 }, { tf: [1], length: 100 }], [50], 1000)
  assert.ok(many! > few! && few! > long!)
  const [rareHit, commonHit] = bm25([{ tf: [2, 1], length: 10 }, { tf: [1, 2], length: 10 }], [5, 500], 1000)
  assert.ok(rareHit! > commonHit!)
})

test('a snippet is a window of the row\'s own text around its best match, every matched word marked once', () => {
  const text = 'One two three four five six seven eight nine ten eleven twelve thirteen fourteen fifteen sixteen seventeen eighteen nineteen twenty ' +
    'the lease of the apartment and the deposit were due, said the landlord, with the deposit returned later'
  const { snippet: s, marks } = snippet(text, termWords(parseTerms('deposit landlord lea*')))
  assert.ok(s.startsWith('…') && text.includes(s.slice(1).replace(/…$/, '')))
  const marked = marks.map(([a, b]) => s.slice(a, b))
  assert.deepEqual(marked, ['lease', 'deposit', 'landlord', 'deposit'])
  const short = snippet('Lease lease', termWords(parseTerms('lease lea*')))
  assert.deepEqual(short, { snippet: 'Lease lease', marks: [[0, 5], [6, 11]] })
})
