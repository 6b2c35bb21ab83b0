// A child process for test/search/store-lifetime.test.ts: opens, fills, queries, checks and closes
// SearchStores round after round, drops each one, and ends on its own (never process.exit: the
// environment's teardown is part of what is tested). Garbage made meanwhile lets the collections
// the runtime chooses run, as in a daemon; an explicit gc() would not do: one called from
// JavaScript finalises objects inside the environment, where Node 24 does not abort. Each round
// also fails to open a damaged index (a `versions` table of another shape), where a store gives up
// halfway through preparing its statements.
import { mkdirSync } from 'node:fs'
import { join } from 'node:path'
import Database from 'better-sqlite3'
import { SEARCH_DB_FILE, SearchStore } from '../../src/search/store.js'
import { checkQuery } from '../../src/search/query.js'
import { findHits } from '../../src/search/find.js'

const dir = process.argv[2]
const rounds = Number(process.argv[3] ?? '300')
if (dir === undefined || !Number.isSafeInteger(rounds)) throw new Error('usage: search-store-churn.ts <dir> [rounds]')

// made through exec alone (no Statement), by a Database a module-level binding keeps to the end
const damaged = join(dir, 'damaged')
mkdirSync(damaged)
const maker = new Database(join(damaged, SEARCH_DB_FILE))
maker.exec('CREATE TABLE versions (id INTEGER PRIMARY KEY, path TEXT NOT NULL)')
maker.close()

const queries = [
  { q: 'common' },
  { q: 'word*', scope: 'test.*' },
  { q: 'common', since: '1970-01-01', until: '2000-01-01' },
  { q: 'common', within: ['test.churn1'] }
]
let refused = 0
let garbage: unknown[] = []
for (let round = 0; round < rounds; round++) {
  const store = new SearchStore(join(dir, 'index'))
  const path = `s/${round}.json`
  const id = store.beginVersion({ path, scope: `test.churn${round % 3}`, collectedAt: new Date(round * 1000).toISOString(), sha256: '' })
  store.addRows(id, [{ pointer: '', field: 'text', at: null, text: `word${round} common` }], () => round * 1000)
  store.finishVersion(id, 'ff'.repeat(32), round)
  for (const q of queries) findHits(store, checkQuery(q), 10)
  store.timeBounds()
  store.counts()
  store.check()
  store.version(path)
  store.scopeVersions('test.churn0')
  while (!store.removeVersionChunk(path));
  store.close()
  try { new SearchStore(damaged).close() } catch { refused++ }
  garbage.push(new Array(2000).fill({ round }))
  if (garbage.length > 50) garbage = []
}
console.log(`churned ${rounds}, refused ${refused}`)
