// What the bounded JSON parse (depth and exact-number check, then JSON.parse) costs over a plain
// JSON.parse, on the bodies and files it sees: a 1 KB profile, a 1 MB mixed document, 10 MB of
// numbers, 16 MB of strings, an object with a million keys. Median of several runs, side by side.
// `no count` is the bounded parse without the value-count limit (as before ingest.maxJsonValues);
// `bounded` is the parse as the daemon runs it (a text over the limit is refused mid-scan).
// Run: node --import tsx bench/json-limits.ts [--quick]
import { isHearthError } from '../src/errors.js'
import { MAX_DATA_DEPTH, parseBoundedJson } from '../src/protocol/bounded-json.js'

const quick = process.argv.includes('--quick')
const runs = quick ? 3 : 9

const mixed = JSON.stringify({ items: Array.from({ length: 8_000 }, (_, i) => ({ id: i, title: `item ${i} ${'x'.repeat(60)}`, score: i / 7, tags: ['a', 'b', 'c'], nested: { ok: true, at: '2026-01-01T00:00:00Z' } })) })
const cases: Array<[string, string]> = [
  ['1 KB profile', JSON.stringify({ username: 'bench', bio: 'x'.repeat(1000), followers: 1234 })],
  ['1 MB mixed document', mixed],
  ['10 MB of numbers', JSON.stringify(Array.from({ length: 1_000_000 }, (_, i) => i * 1.5 + 0.25))],
  ['16 MB of strings', JSON.stringify(Array.from({ length: 16_000 }, (_, i) => `${i} ${'\\"quoted\\" '.repeat(80)}`))],
  ['a million keys', JSON.stringify(Object.fromEntries(Array.from({ length: 1_000_000 }, (_, i) => [`k${i}`, i])))],
  ['5 million {}', `[${Array(5_000_000).fill('{}').join(',')}]`]
]

function median (f: () => void): number {
  const times: number[] = []
  for (let i = 0; i < runs; i++) {
    const t0 = performance.now()
    f()
    times.push(performance.now() - t0)
  }
  return times.sort((a, b) => a - b)[Math.floor(times.length / 2)]!
}

function boundedParse (text: string, maxValues?: number): string {
  try {
    parseBoundedJson(text, { maxDepth: MAX_DATA_DEPTH, subject: 'bench', ...(maxValues !== undefined ? { maxValues } : {}) })
    return ''
  } catch (err) {
    if (isHearthError(err)) return err.code
    throw err
  }
}

console.log(`${'input'.padEnd(22)} ${'size'.padStart(9)} ${'JSON.parse'.padStart(11)} ${'no count'.padStart(11)} ${'bounded'.padStart(11)} ${'overhead'.padStart(9)}`)
for (const [name, text] of cases) {
  const plain = median(() => JSON.parse(text))
  const uncounted = median(() => boundedParse(text, Infinity))
  let verdict = ''
  const bounded = median(() => { verdict = boundedParse(text) })
  const mb = (text.length / 1024 / 1024).toFixed(2)
  const ms = (t: number): string => (t.toFixed(2) + ' ms').padStart(11)
  console.log(`${name.padEnd(22)} ${(mb + ' MB').padStart(9)} ${ms(plain)} ${ms(uncounted)} ${ms(bounded)} ${((bounded / plain - 1) * 100).toFixed(0).padStart(7)} %  ${verdict}`)
}
