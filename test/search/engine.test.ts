// The search part over a real file index (LevelDB) and its real SQLite index, on generated data
// in the connectors' shapes: every record is found at its pointer, versions deleted or replaced
// leave the answers, a `latest` scope keeps its newest version only, filters are exact (counted
// against the generated data), paging is complete without duplicates, and hostile queries are
// answered (results or INVALID_ARGUMENT), never an engine error.
import { test, type TestContext } from 'node:test'
import assert from 'node:assert/strict'
import { join } from 'node:path'
import { openDatabase } from '../../src/db/database.js'
import { openFileIndex, type FileIndex } from '../../src/db/file-index.js'
import type { FileRecord } from '../../src/db/types.js'
import { HearthError, isHearthError } from '../../src/errors.js'
import { silentLogger, type Logger } from '../../src/log.js'
import { createHearthEvents } from '../../src/lifecycle/events.js'
import { createSearchService, type SearchService } from '../../src/search/service.js'
import type { SearchSpec } from '../../src/search/extract.js'
import type { SearchAnswer, SearchHit, SearchQuery } from '../../src/search/types.js'
import { countedChanges, fileRecord, sha256Of } from '../support/db-fixtures.js'
import { generateVersions, markerWord, type GeneratedVersion } from '../support/search-data.js'
import { tempDir } from '../support/tmp.js'
import { capturingLogger } from '../support/api-server.js'

const TIMEOUT = { timeout: 300_000 }
/** What the shipped connectors declare (plugins/<id>/connector.json) for the generated scopes. */
const SPECS: Record<string, SearchSpec> = {
  'chatgpt.conversations': { fields: ['title', 'text'], time: ['createdAt'] },
  'spotify.streamingHistory': { fields: ['track', 'artist', 'album'], time: ['endedAt'] },
  'instagram.posts': { fields: ['caption'], time: ['createdAt'], versions: 'latest' }
}

interface Rig { index: FileIndex; search: SearchService; data: Map<string, unknown>; put: (v: GeneratedVersion, name?: string) => Promise<FileRecord>; reads: () => number }

/** `reads()`: how many pages of the change log the search has read so far. */
async function rig (t: TestContext, opts: { pollMs?: number; followMs?: number; logger?: Logger } = {}): Promise<Rig> {
  const dir = await tempDir(t, 'hearth-search-')
  const db = await openDatabase(join(dir, 'index'))
  const index = await openFileIndex({ db, durable: false })
  const data = new Map<string, unknown>()
  const events = createHearthEvents(silentLogger())
  const counted = countedChanges(index)
  const search = createSearchService({
    dir: join(dir, 'search'),
    changes: counted.changes,
    // the plaintext the daemon reads back from data/ or the ciphertext (here: kept by the test)
    readData: async (record) => {
      const found = data.get(`${record.path} ${record.sha256}`)
      if (found === undefined) throw new HearthError('NOT_FOUND', `${record.path} is gone`)
      return found
    },
    specFor: (scope) => SPECS[scope] ?? {},
    events,
    logger: opts.logger ?? silentLogger(),
    pollMs: opts.pollMs ?? 50,
    ...(opts.followMs !== undefined ? { followMs: opts.followMs } : {})
  })
  await search.start()
  t.after(async () => { await search.stop(); await db.close() })
  const put = async (v: GeneratedVersion, name = v.collectedAt.replace(/:/g, '-')): Promise<FileRecord> => {
    const text = JSON.stringify(v.data)
    const record = fileRecord(`${v.scope}/${name}.json`, v.collectedAt, { sha256: sha256Of(text) })
    data.set(`${record.path} ${record.sha256}`, v.data)
    const stored = await index.put(record)
    events.emit('file.indexed', stored)
    return stored
  }
  return { index, search, data, put, reads: counted.reads }
}

/** Every row the generated versions should put in the index: record pointer, field, text, time. */
function expectedRows (v: GeneratedVersion): Array<{ pointer: string; field: string; text: string; t: number }> {
  const d = v.data as any
  const ms = (iso: string): number => Date.parse(iso)
  if (v.scope === 'chatgpt.conversations') {
    return [{ pointer: '', field: 'title', text: d.title, t: ms(d.createdAt) },
      ...d.messages.map((m: any, i: number) => ({ pointer: `/messages/${i}`, field: 'text', text: m.text, t: ms(m.createdAt) }))]
  }
  if (v.scope === 'spotify.streamingHistory') {
    return d.plays.flatMap((p: any, i: number) => ['track', 'artist', 'album'].map((field) => ({ pointer: `/plays/${i}`, field, text: p[field], t: ms(p.endedAt) })))
  }
  return d.posts.map((p: any, i: number) => ({ pointer: `/posts/${i}`, field: 'caption', text: p.caption, t: ms(p.createdAt) }))
}

async function all (search: SearchService, query: SearchQuery): Promise<{ hits: SearchHit[]; pages: number }> {
  const hits: SearchHit[] = []
  let pages = 0
  for (let cursor: string | null | undefined; cursor !== null; pages++) {
    const answer: SearchAnswer = await search.search({ ...query, limit: 100, ...(cursor !== undefined ? { cursor } : {}) })
    assert.equal(answer.complete, true)
    hits.push(...answer.hits)
    cursor = answer.next
  }
  return { hits, pages }
}

test('every generated record is found at its pointer; deleted and replaced versions leave; a latest scope keeps its newest version', TIMEOUT, async (t) => {
  const { index, search, put } = await rig(t)
  const versions = [...generateVersions({ records: 3000, perVersion: [20, 200, 50], tagEvery: true })]
  const records: FileRecord[] = []
  for (const v of versions) records.push(await put(v))
  await search.settled()

  const instagram = versions.filter((v) => v.scope === 'instagram.posts')
  const newestExport = instagram[instagram.length - 1]!
  let tag = 0
  for (const [i, v] of versions.entries()) {
    const rows = expectedRows(v).filter((r) => r.field !== 'title' && r.field !== 'artist' && r.field !== 'album')
    for (const row of rows) {
      const word = markerWord(1_000_000 + tag++)
      const { hits } = await search.search({ q: word })
      if (v.scope === 'instagram.posts' && v !== newestExport) { assert.equal(hits.length, 0, `${word}: an older export of a latest scope is not searched`); continue }
      assert.equal(hits.length, 1, `${word} (${v.scope} ${row.pointer}) found once`)
      assert.deepEqual([hits[0]!.path, hits[0]!.pointer, hits[0]!.scope, hits[0]!.collectedAt], [records[i]!.path, row.pointer, v.scope, v.collectedAt])
      const [start, end] = hits[0]!.marks[0]!
      assert.equal(hits[0]!.snippet.slice(start, end), word, 'the snippet is the record\'s own text, its word marked')
    }
  }

  // a deleted version leaves, an edited one (same path, other bytes) answers with its new text only
  const gone = records[0]!
  await index.delete(gone.path)
  const edited = versions[1]!
  const editedData = structuredClone(edited.data) as any
  editedData.messages[0].text = 'zqeditedmark is the new text'
  await put({ ...edited, data: editedData })
  await search.settled()
  assert.equal((await search.search({ q: versions[0]!.marker })).hits.length, 0)
  assert.equal((await search.search({ q: edited.marker })).hits.length, 0)
  assert.equal((await search.search({ q: 'zqeditedmark' })).hits[0]?.path, records[1]!.path)

  // the newest Instagram export deleted: the one before it is the scope's latest, searched again
  await index.delete(records[versions.indexOf(newestExport)]!.path)
  await search.settled()
  assert.equal((await search.search({ q: newestExport.marker })).hits.length, 0)
  assert.equal((await search.search({ q: instagram[instagram.length - 2]!.marker })).hits.length, 1)

  // a deleted scope (each version a tombstone) leaves entirely
  await index.deleteMany(records.filter((r) => r.scope === 'spotify.streamingHistory').map((r) => r.path))
  await search.settled()
  assert.equal((await search.search({ q: 'jazz', scope: 'spotify.*' })).hits.length, 0)
})

test('a burst of stored versions is followed in a few steps, not one per version, and its last version is found', TIMEOUT, async (t) => {
  // no polling: only the events (and the follow-up they schedule) move the search on
  const { search, put, reads } = await rig(t, { pollMs: 3_600_000, followMs: 300 })
  const versions = [...generateVersions({ records: 400, perVersion: [2, 2, 2], tagEvery: true })]
  assert.ok(versions.length >= 100, `${versions.length} versions`)
  const started = reads()
  for (const v of versions) await put(v)
  const last = versions[versions.length - 1]!
  // found without settled(): the change that came during a run is followed once followMs is over
  const deadline = Date.now() + 60_000
  while ((await search.search({ q: last.marker })).hits.length === 0) {
    assert.ok(Date.now() < deadline, 'the burst\'s last version was never followed')
    await new Promise((resolve) => setTimeout(resolve, 20))
  }
  assert.equal((await search.search({ q: versions[0]!.marker })).hits.length, versions[0]!.scope === 'instagram.posts' ? 0 : 1)
  const pages = reads() - started
  assert.ok(pages < versions.length / 4, `${pages} reads of the change log for ${versions.length} versions`)
})

test('filters are exact and paging is complete without duplicates', TIMEOUT, async (t) => {
  const { search, put } = await rig(t)
  const versions = [...generateVersions({ records: 4000, perVersion: [25, 300, 4000], seed: 7, mix: [0.5, 0.4, 0.1] })]
  const paths = new Map<GeneratedVersion, string>()
  for (const v of versions) paths.set(v, (await put(v)).path)
  await search.settled()
  const since = Date.UTC(2020, 3, 1)
  const until = Date.UTC(2021, 0, 1)
  const cases: Array<{ query: SearchQuery; scope: (s: string) => boolean; time: (t: number) => boolean }> = [
    { query: { q: 'jazz' }, scope: () => true, time: () => true },
    { query: { q: 'jazz', scope: 'spotify.*' }, scope: (s) => s.startsWith('spotify.'), time: () => true },
    { query: { q: 'jazz', scope: 'chatgpt.conversations' }, scope: (s) => s === 'chatgpt.conversations', time: () => true },
    { query: { q: 'jazz', within: ['instagram.*', 'chatgpt.conversations'] }, scope: (s) => s !== 'spotify.streamingHistory', time: () => true },
    { query: { q: 'jazz', scope: 'chatgpt.*', within: ['spotify.*'] }, scope: () => false, time: () => true },
    { query: { q: 'jazz', since: new Date(since).toISOString(), until: new Date(until).toISOString() }, scope: () => true, time: (x) => x >= since && x < until }
  ]
  for (const c of cases) {
    const expected = new Set<string>()
    for (const v of versions) {
      if (!c.scope(v.scope)) continue
      for (const row of expectedRows(v)) if (c.time(row.t) && row.text.split(' ').includes('jazz')) expected.add(`${paths.get(v)} ${row.pointer} ${row.field}`)
    }
    const { hits, pages } = await all(search, c.query)
    const keys = hits.map((h) => `${h.path} ${h.pointer} ${h.field}`)
    assert.equal(new Set(keys).size, keys.length, `${JSON.stringify(c.query)}: no duplicates across ${pages} pages`)
    assert.deepEqual(new Set(keys), expected, JSON.stringify(c.query))
    for (let i = 1; i < hits.length; i++) assert.ok(hits[i - 1]!.score >= hits[i]!.score, 'best first')
  }
  assert.ok((await all(search, { q: 'jazz' })).pages > 2, 'the data spans several pages')
})

test('hostile queries are answered with results or INVALID_ARGUMENT, never an engine error', TIMEOUT, async (t) => {
  const { search, put } = await rig(t)
  for (const v of generateVersions({ records: 500, perVersion: [20, 100, 50] })) await put(v)
  await search.settled()
  const queries = [
    'x'.repeat(1000), 'lease '.repeat(166), 'AND OR NOT', 'NOT', '"unbalanced quote', 'a "b', '"', '""', '" "',
    'NEAR(lease deposit, 2)', 'text:lease', '{text}: lease', '^lease', 'lease*', '*', '**', 'l*', '-lease', '+lease',
    "'; DROP TABLE rows; --", '(((((lease', 'lease)))', 'lease\u0000deposit', '\u0000', '😀 🏠', 'ﬁle', 'Ｌｅａｓｅ',
    'café', 'Ж', '中文 搜索', '\u202e\u200b', 'ä'.repeat(999), 'a b c d e f g h i j k l m n o p q r s t u v w x y z 1 2 3 4 5',
    'rank:1', 'bm25', 'MATCH', 'a*b*c', '"lease"*', '\\"', '%', '_'
  ]
  for (const q of queries) {
    const answer = await search.search({ q }).catch((err: unknown) => err)
    if (answer instanceof Error) assert.ok(isHearthError(answer, 'INVALID_ARGUMENT'), `${JSON.stringify(q.slice(0, 40))}: ${String(answer)}`)
    else assert.ok(Array.isArray((answer as SearchAnswer).hits), JSON.stringify(q.slice(0, 40)))
  }
  const refused = [
    { q: 'x'.repeat(1001) }, { q: '' }, { q: '   ' }, { q: '!!! ??? ***' }, { q: Array.from({ length: 33 }, (_, i) => `w${i}`).join(' ') }, { q: 'ab* cd* ef* gh* ij*' },
    { q: 'jazz', scope: 'not a pattern' }, { q: 'jazz', scope: 'a.*.*' }, { q: 'jazz', since: 'yesterday' }, { q: 'jazz', until: '2024-13-45' },
    { q: 'jazz', limit: 0 }, { q: 'jazz', limit: -1 }, { q: 'jazz', limit: 1.5 }, { q: 'jazz', cursor: 'not a cursor!' }, { q: 'jazz', cursor: Buffer.from('{"o":-5}').toString('base64url') }
  ]
  for (const query of refused) {
    await assert.rejects(search.search(query as SearchQuery), (err: unknown) => isHearthError(err, 'INVALID_ARGUMENT'), JSON.stringify(query).slice(0, 80))
  }
  // a cursor is bound to its query
  const first = await search.search({ q: 'jazz', limit: 1 })
  assert.notEqual(first.next, null)
  await assert.rejects(search.search({ q: 'rock', cursor: first.next! }), (err: unknown) => isHearthError(err, 'INVALID_ARGUMENT'))
  assert.equal((await search.search({ q: 'jazz', limit: 1, cursor: first.next! })).hits.length, 1)
  // operators are words: "NOT" finds nothing here, and never excludes
  assert.equal((await search.search({ q: 'jazz NOT' })).hits.length, 0)
})

test('versions that cannot be read back are said in one log line per page, with their count and the first few', TIMEOUT, async (t) => {
  const { logger, log } = capturingLogger()
  const { index, search } = await rig(t, { logger, pollMs: 3_600_000 }) // one page: read when settled() wakes it
  for (let i = 0; i < 5; i++) await index.put(fileRecord(`notes.items/gone-${i}.json`, `2026-01-0${i + 1}T00:00:00Z`, { sha256: sha256Of(`gone ${i}`) }))
  await search.settled()
  const lines = log.lines.filter((l) => /not indexed/.test(String(l.msg)))
  assert.equal(lines.length, 1, JSON.stringify(lines))
  assert.equal(lines[0]!.msg, 'search: 5 versions not indexed (cannot be read back)')
  assert.equal(lines[0]!.versions, 5)
  assert.deepEqual(lines[0]!.first.map((u: { path: string }) => u.path), [0, 1, 2].map((i) => `notes.items/gone-${i}.json`))
  assert.match(lines[0]!.first[0].err, /is gone/)
})
