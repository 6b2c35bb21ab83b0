// Versions handed over by ingest as it stores them (the `version.data` event): indexed from that
// data without reading them back, each once and only for the exact bytes recorded; the rows kept
// stay within their budget, oldest dropped first; whatever was not handed over, or was dropped, is
// read back as before. The search part runs over a real file index and its real SQLite index.
import { test, type TestContext } from 'node:test'
import assert from 'node:assert/strict'
import { join } from 'node:path'
import { setImmediate as nextTurn } from 'node:timers/promises'
import { openDatabase } from '../../src/db/database.js'
import { openFileIndex } from '../../src/db/file-index.js'
import type { FileRecord } from '../../src/db/types.js'
import { HearthError } from '../../src/errors.js'
import { silentLogger } from '../../src/log.js'
import { createHearthEvents } from '../../src/lifecycle/events.js'
import { extractRows, type SearchSpec } from '../../src/search/extract.js'
import { createHandedVersions, HANDED_DATA_MAX_BYTES } from '../../src/search/handed.js'
import { createSearchService } from '../../src/search/service.js'
import { fileRecord, sha256Of } from '../support/db-fixtures.js'
import { tempDir } from '../support/tmp.js'

/** A version of `data`; `size` (its JSON's, default the JSON's own): over HANDED_DATA_MAX_BYTES its rows are kept, not its data. */
const version = (name: string, data: unknown, size = JSON.stringify(data).length): { record: FileRecord; data: unknown } =>
  ({ record: fileRecord(`notes.items/${name}.json`, '2026-01-01T00:00:00Z', { sha256: sha256Of(JSON.stringify(data)), size }), data })
const LARGE = HANDED_DATA_MAX_BYTES + 1

test('a handed version\'s rows are taken once, for its own bytes only: a small one\'s data is kept, a larger one\'s rows are extracted after the turn that handed it', async () => {
  const handed = createHandedVersions(() => ({}))
  const small = version('small', { title: 'alpha words' })
  handed.offer(small.record, small.data)
  assert.equal(handed.keptBytes, 4 * small.record.size, 'its data, counted at 4 bytes per byte of JSON')
  assert.equal(handed.take({ ...small.record, sha256: sha256Of('other bytes') }), null, 'other bytes under the path: read back')
  assert.deepEqual(handed.take(small.record)?.rows.map((r) => [r.pointer, r.field, r.text]), [['', 'title', 'alpha words']])
  assert.equal(handed.take(small.record), null, 'taken once')
  assert.equal(handed.keptBytes, 0)

  const a = version('a', { title: 'alpha words' }, LARGE)
  handed.offer(a.record, a.data)
  assert.equal(handed.keptBytes, 0, 'nothing of a larger version is extracted in the turn that stores it')
  await nextTurn()
  assert.ok(handed.keptBytes > 0)
  assert.deepEqual(handed.take(a.record)?.rows.map((r) => [r.pointer, r.field, r.text]), [['', 'title', 'alpha words']])
  assert.equal(handed.take(a.record), null, 'taken once')
  assert.equal(handed.keptBytes, 0)

  // the rows of a version within the budget are those of an extraction without it
  const c = version('c', { title: 'gamma', posts: Array.from({ length: 50 }, (_, i) => ({ caption: `post ${i}`, long: 'x'.repeat(20_000) })) })
  handed.offer(c.record, c.data)
  await nextTurn()
  assert.deepEqual(handed.take(c.record), extractRows(c.data))

  // asked for before its turn ended: extracted then
  const b = version('b', { title: 'beta' }, LARGE)
  handed.offer(b.record, b.data)
  assert.equal(handed.take(b.record)?.rows[0]?.text, 'beta')
  handed.clear()
})

test('what the indexer went past is let go, taken or not (a latest-only scope takes one version a step)', async () => {
  const handed = createHandedVersions(() => ({}))
  const [a, b, c] = ['a', 'b', 'c'].map((n) => version(n, { title: n }))
  for (const v of [a!, b!, c!]) handed.offer(v.record, v.data)
  const large = version('large', { title: 'large' }, LARGE)
  handed.offer(large.record, large.data)
  handed.passed(a!.record.path, a!.record.sha256)
  assert.equal(handed.take(a!.record), null, 'passed: read back if ever asked again')
  handed.passed(b!.record.path, sha256Of('a newer version of b'))
  assert.equal(handed.take(b!.record)?.rows[0]?.text, 'b', 'a change that named other bytes leaves this version')
  handed.passed(c!.record.path, null)
  assert.equal(handed.take(c!.record), null, 'a deleted path lets its version go')
  handed.passed(large.record.path, large.record.sha256)
  await nextTurn()
  assert.equal(handed.keptBytes, 0, 'nothing kept, also of a larger version passed before its rows were extracted')
})

test('what is kept stays within the budget: the oldest versions go first, a version larger than the budget is not kept', async () => {
  const handed = createHandedVersions(() => ({}), { budgetBytes: 3000, maxVersions: 3 })
  const versions = ['a', 'b', 'c', 'd'].map((n) => version(n, { text: n.repeat(400) }, LARGE)) // ~900 bytes of rows each
  for (const v of versions) handed.offer(v.record, v.data)
  await nextTurn()
  assert.ok(handed.keptBytes <= 3000)
  assert.equal(handed.take(versions[0]!.record), null, 'the oldest was dropped')
  for (const v of versions.slice(1)) assert.ok(handed.take(v.record) !== null)

  const huge = version('huge', { text: 'z'.repeat(2000) }, LARGE)
  handed.offer(huge.record, huge.data)
  await nextTurn()
  assert.equal(handed.take(huge.record), null)
  assert.equal(handed.keptBytes, 0)

  // many records (more rows than the budget holds at its least per row): not kept either
  const records = version('records', { posts: Array.from({ length: 40 }, (_, i) => ({ caption: `c${i}` })) }, LARGE)
  handed.offer(records.record, records.data)
  await nextTurn()
  assert.equal(handed.take(records.record), null)

  // small versions' data counts too: 4 bytes per byte of JSON
  const smallOnes = ['s1', 's2', 's3'].map((n) => version(n, { text: n.repeat(150) })) // ~300 bytes of JSON, 1,200 counted
  for (const v of smallOnes) handed.offer(v.record, v.data)
  assert.ok(handed.keptBytes <= 3000)
  assert.equal(handed.take(smallOnes[0]!.record), null, 'the oldest small one was dropped')
  assert.ok(handed.take(smallOnes[2]!.record) !== null)

  const many = ['e', 'f', 'g', 'h'].map((n) => version(n, { t: n }))
  for (const v of many) handed.offer(v.record, v.data)
  assert.equal(handed.take(many[0]!.record), null, 'at most maxVersions kept')
  handed.clear()
})

async function rig (t: TestContext, spec: SearchSpec = {}): Promise<{ put: (v: { record: FileRecord; data: unknown }, handOver: boolean) => Promise<void>; reads: string[]; search: ReturnType<typeof createSearchService> }> {
  const dir = await tempDir(t, 'hearth-search-handed-')
  const db = await openDatabase(join(dir, 'index'))
  const index = await openFileIndex({ db, durable: false })
  const events = createHearthEvents(silentLogger())
  const stored = new Map<string, unknown>()
  const reads: string[] = []
  const search = createSearchService({
    dir: join(dir, 'search'),
    changes: index,
    readData: async (record) => {
      reads.push(record.path)
      const found = stored.get(`${record.path} ${record.sha256}`)
      if (found === undefined) throw new HearthError('NOT_FOUND', `${record.path} is gone`)
      return found
    },
    specFor: () => spec,
    events,
    logger: silentLogger(),
    pollMs: 50
  })
  await search.start()
  t.after(async () => { await search.stop(); await db.close() })
  return {
    reads,
    search,
    async put (v, handOver) {
      stored.set(`${v.record.path} ${v.record.sha256}`, v.data)
      const record = await index.put(v.record)
      if (handOver) events.emit('version.data', { record, data: v.data })
      events.emit('file.indexed', record)
    }
  }
}

test('the search part indexes a handed version without reading it back, and reads back one not handed over', async (t) => {
  const { put, reads, search } = await rig(t)
  const handed = version('handed', { title: 'handedword' })
  const notHanded = version('read', { title: 'readword' })
  await put(handed, true)
  await put(notHanded, false)
  await search.settled()
  assert.deepEqual(reads, [notHanded.record.path], 'only the version not handed over is read back')
  assert.equal((await search.search({ q: 'handedword' })).hits[0]?.path, handed.record.path)
  assert.equal((await search.search({ q: 'readword' })).hits[0]?.path, notHanded.record.path)

  // the same path with other bytes, handed over: indexed from the new data, the old rows gone
  const edited = { record: { ...handed.record, sha256: sha256Of('edited') }, data: { title: 'editedword' } }
  await put(edited, true)
  await search.settled()
  assert.deepEqual(reads, [notHanded.record.path])
  assert.equal((await search.search({ q: 'handedword' })).hits.length, 0)
  assert.equal((await search.search({ q: 'editedword' })).hits[0]?.path, handed.record.path)
})

test('a scope searched by its latest version: the versions a step passes are let go, and read back if they become the latest', async (t) => {
  const { put, reads, search } = await rig(t, { versions: 'latest' })
  const older = { record: fileRecord('notes.items/older.json', '2026-01-01T00:00:00Z', { sha256: sha256Of('older') }), data: { title: 'olderword' } }
  const newer = { record: fileRecord('notes.items/newer.json', '2026-01-02T00:00:00Z', { sha256: sha256Of('newer') }), data: { title: 'newerword' } }
  await put(older, true)
  await put(newer, true)
  await search.settled()
  assert.deepEqual(reads, [], 'the latest taken as handed')
  assert.equal((await search.search({ q: 'newerword' })).hits[0]?.path, newer.record.path)
  // the newer version no longer readable: the older one is the latest again, and its data was let go
  await put({ record: { ...newer.record, state: 'rejected' }, data: newer.data }, false)
  await search.settled()
  assert.deepEqual(reads, [older.record.path])
  assert.equal((await search.search({ q: 'olderword' })).hits[0]?.path, older.record.path)
})
