// What the connectors declare searchable decides what is indexed: an index built under other
// declarations (a connector added, updated or removed) is built again at the next start, and by
// `hearth doctor`'s repair, so no version keeps fields no longer declared or misses new ones.
import { test, type TestContext } from 'node:test'
import assert from 'node:assert/strict'
import { join } from 'node:path'
import { openDatabase } from '../../src/db/database.js'
import { openFileIndex, type FileIndex } from '../../src/db/file-index.js'
import { silentLogger } from '../../src/log.js'
import { createHearthEvents } from '../../src/lifecycle/events.js'
import { createSearchService } from '../../src/search/service.js'
import { rebuildSearchIndex } from '../../src/search/repair.js'
import type { SearchSpec } from '../../src/search/extract.js'
import { fileRecord, sha256Of } from '../support/db-fixtures.js'
import { tempDir } from '../support/tmp.js'

const PLAYS = { month: '2024-03', plays: [{ endedAt: '2024-03-02T10:00:00Z', msPlayed: 1000, kind: 'track', track: 'Feeling Good', artist: 'Nina Simone', album: 'Pastel Blues' }] }
const TRACKS_ONLY: Record<string, SearchSpec> = { 'spotify.streamingHistory': { fields: ['track'], time: ['endedAt'] } }
const EVERY_FIELD: Record<string, SearchSpec> = { 'spotify.streamingHistory': { fields: ['track', 'artist', 'album'], time: ['endedAt'] } }

async function rig (t: TestContext): Promise<{ dir: string; index: FileIndex }> {
  const dir = await tempDir(t, 'hearth-search-decl-')
  const db = await openDatabase(join(dir, 'index'))
  t.after(async () => { await db.close() })
  const index = await openFileIndex({ db, durable: false })
  const text = JSON.stringify(PLAYS)
  await index.put(fileRecord('spotify.streamingHistory/2024-03.json', '2024-03-31T00:00:00Z', { sha256: sha256Of(text) }))
  return { dir, index }
}

function deps (dir: string, index: FileIndex, specs: Record<string, SearchSpec>, declarations: string) {
  return { dir: join(dir, 'search'), changes: index, readData: async () => PLAYS, specFor: (scope: string) => specs[scope] ?? {}, logger: silentLogger(), declarations }
}

async function foundWith (dir: string, index: FileIndex, specs: Record<string, SearchSpec>, declarations: string, q: string): Promise<number> {
  const search = createSearchService({ ...deps(dir, index, specs, declarations), events: createHearthEvents(silentLogger()), pollMs: 50 })
  await search.start()
  try {
    await search.settled()
    return (await search.search({ q })).hits.length
  } finally {
    await search.stop()
  }
}

test('a start under other search declarations builds the index again with the new fields', async (t) => {
  const { dir, index } = await rig(t)
  assert.equal(await foundWith(dir, index, TRACKS_ONLY, 'tracks', 'simone'), 0, 'the artist is not declared searchable yet')
  assert.equal(await foundWith(dir, index, TRACKS_ONLY, 'tracks', 'feeling'), 1)
  assert.equal(await foundWith(dir, index, EVERY_FIELD, 'every', 'simone'), 1, 'the connector now declares the artist: the version is indexed again')
  assert.equal(await foundWith(dir, index, TRACKS_ONLY, 'tracks', 'simone'), 0, 'and back: a field no longer declared leaves')
})

test('hearth doctor\'s repair builds an index of other declarations again', async (t) => {
  const { dir, index } = await rig(t)
  assert.equal(await foundWith(dir, index, TRACKS_ONLY, 'tracks', 'feeling'), 1)
  const same = await rebuildSearchIndex(deps(dir, index, TRACKS_ONLY, 'tracks'))
  assert.equal(same.state, 'ok')
  const other = await rebuildSearchIndex(deps(dir, index, EVERY_FIELD, 'every'))
  assert.equal(other.state, 'rebuilt')
  assert.match(other.problems[0]!, /other search declarations/)
  assert.equal(other.rows, 3, 'track, artist and album')
})
