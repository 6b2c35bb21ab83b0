// Which engine for the search (issue 23): SQLite FTS5 (better-sqlite3, the one Hearth uses, through
// its own SearchStore), MiniSearch and FlexSearch, on the same generated records in the
// connectors' shapes (test/support/search-data.ts). Per engine: index rate (records/s), p95 of a
// query mix (common word, rare word, prefix, two words, phrase), RSS growth, size on disk (the
// in-memory engines' serialised index) and start cost (opening or loading that index again).
// Each engine runs in its own child process, so one's memory does not count for the next.
// Run: node --import tsx bench/search-engines.ts [--records N] (default 200000; the size is 1000000)
import { spawnSync } from 'node:child_process'
import { mkdtempSync, rmSync, statSync, writeFileSync, readFileSync, readdirSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { fileURLToPath } from 'node:url'
import { generateVersions, markerWord } from '../test/support/search-data.js'
import { extractRows } from '../src/search/extract.js'
import { SearchStore } from '../src/search/store.js'
import { findHits } from '../src/search/find.js'
import { checkQuery } from '../src/search/query.js'

const ENGINES = ['fts5', 'minisearch', 'flexsearch'] as const
type Engine = typeof ENGINES[number]
const SPECS = {
  'chatgpt.conversations': { fields: ['title', 'text'], time: ['createdAt'] },
  'spotify.streamingHistory': { fields: ['track', 'artist', 'album'], time: ['endedAt'] },
  'instagram.posts': { fields: ['caption'], time: ['createdAt'] }
}

function arg (name: string, fallback: number): number {
  const i = process.argv.indexOf(name)
  return i === -1 ? fallback : Number(process.argv[i + 1])
}

interface Row { id: number; text: string }

/** The generated rows (one per record field), a batch at a time. */
function * rowBatches (records: number): Generator<Row[]> {
  let id = 0
  for (const v of generateVersions({ records })) {
    const { rows } = extractRows(v.data, SPECS[v.scope])
    yield rows.map((r) => ({ id: ++id, text: r.text }))
  }
}

const QUERIES = (versions: number): string[] => [
  'lease', 'jazz guitar', 'coff*', 'pho*', '"summer night"', 'recipe pasta bread', 'nina', markerWord(Math.floor(versions / 2)), 'zzzznotthere', 'python database'
]

function p95 (ms: number[]): number {
  const sorted = [...ms].sort((a, b) => a - b)
  return sorted[Math.min(sorted.length - 1, Math.floor(sorted.length * 0.95))]!
}

function dirBytes (dir: string): number {
  return readdirSync(dir).reduce((sum, f) => sum + statSync(join(dir, f)).size, 0)
}

async function measure (engine: Engine, records: number, dir: string): Promise<Record<string, unknown>> {
  const rss0 = process.memoryUsage().rss
  let rowsIndexed = 0
  let versions = 0
  const t0 = performance.now()
  let query: (q: string) => number
  let reopen: () => number
  let bytes: number
  if (engine === 'fts5') {
    const store = new SearchStore(dir)
    for (const batch of rowBatches(records)) {
      const id = store.beginVersion({ path: `v${versions}`, scope: 's', collectedAt: '2024-01-01T00:00:00Z', sha256: '' })
      store.addRows(id, batch.map((r) => ({ pointer: '', field: 'text', text: r.text, at: null })), () => null)
      store.finishVersion(id, 'x', null)
      rowsIndexed += batch.length
      versions++
    }
    query = (q) => findHits(store, checkQuery({ q }), 21).hits.length
    bytes = dirBytes(dir)
    reopen = () => { store.close(); const t = performance.now(); const again = new SearchStore(dir); findHits(again, checkQuery({ q: 'lease' }), 21); const ms = performance.now() - t; query = (q) => findHits(again, checkQuery({ q }), 21).hits.length; return ms }
  } else if (engine === 'minisearch') {
    const { default: MiniSearch } = await import('minisearch')
    const options = { fields: ['text'], storeFields: [] as string[] }
    const index = new MiniSearch<Row>(options)
    for (const batch of rowBatches(records)) { index.addAll(batch); rowsIndexed += batch.length; versions++ }
    const search = (ix: typeof index, q: string): number => {
      const prefix = q.endsWith('*')
      return ix.search(q.replace(/[*"]/g, ''), { prefix, combineWith: 'AND' }).slice(0, 21).length
    }
    query = (q) => search(index, q)
    const file = join(dir, 'minisearch.json')
    writeFileSync(file, JSON.stringify(index))
    bytes = statSync(file).size
    reopen = () => { const t = performance.now(); const again = MiniSearch.loadJSON<Row>(readFileSync(file, 'utf8'), options); const ms = performance.now() - t; query = (q) => search(again, q); return ms }
  } else {
    const { Index } = await import('flexsearch') as any
    const options = { tokenize: 'forward', resolution: 9 }
    const index = new Index(options)
    for (const batch of rowBatches(records)) { for (const r of batch) index.add(r.id, r.text); rowsIndexed += batch.length; versions++ }
    query = (q) => index.search(q.replace(/[*"]/g, ''), { limit: 21 }).length
    const parts: Record<string, string> = {}
    await index.export((key: string, data: string) => { parts[key] = data })
    const file = join(dir, 'flexsearch.json')
    writeFileSync(file, JSON.stringify(parts))
    bytes = statSync(file).size
    reopen = () => {
      const t = performance.now()
      const again = new Index(options)
      for (const [key, data] of Object.entries(JSON.parse(readFileSync(file, 'utf8')) as Record<string, string>)) again.import(key, data)
      const ms = performance.now() - t
      query = (q) => again.search(q.replace(/[*"]/g, ''), { limit: 21 }).length
      return ms
    }
  }
  const indexMs = performance.now() - t0
  const rssIndexed = process.memoryUsage().rss
  const times: number[] = []
  for (let round = 0; round < 20; round++) {
    for (const q of QUERIES(versions)) { const t = performance.now(); query(q); times.push(performance.now() - t) }
  }
  const startMs = reopen()
  return {
    engine,
    records,
    rows: rowsIndexed,
    recordsPerSec: Math.round(records / (indexMs / 1000)),
    queryP95Ms: Math.round(p95(times) * 100) / 100,
    rssGrowthMb: Math.round((rssIndexed - rss0) / 1048576),
    onDiskMb: Math.round(bytes / 1048576 * 10) / 10,
    startMs: Math.round(startMs)
  }
}

const child = process.argv.indexOf('--engine')
if (child !== -1) {
  const engine = process.argv[child + 1] as Engine
  const dir = mkdtempSync(join(tmpdir(), `hearth-bench-search-${engine}-`))
  try {
    process.stdout.write(JSON.stringify(await measure(engine, arg('--records', 200_000), dir)) + '\n')
  } finally {
    rmSync(dir, { recursive: true, force: true })
  }
} else {
  const records = arg('--records', 200_000)
  console.log(`search engines on ${records} generated records (ChatGPT messages, Spotify plays, Instagram posts); one child process each`)
  const rows: Array<Record<string, unknown>> = []
  for (const engine of ENGINES) {
    const run = spawnSync(process.execPath, ['--import', 'tsx', '--max-old-space-size=8192', fileURLToPath(import.meta.url), '--engine', engine, '--records', String(records)], { encoding: 'utf8', maxBuffer: 1 << 20 })
    const line = run.stdout.trim().split('\n').pop() ?? ''
    try { rows.push(JSON.parse(line)) } catch { rows.push({ engine, failed: (run.stderr || run.stdout).trim().split('\n').slice(-3).join(' ') }) }
  }
  console.table(rows)
}
