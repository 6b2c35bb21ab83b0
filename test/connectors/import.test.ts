import assert from 'node:assert/strict'
import { readdir, readFile, writeFile } from 'node:fs/promises'
import { join } from 'node:path'
import { test } from 'node:test'
import { runImport, type ImportProgress } from '../../src/connectors/import.js'
import { daemonSubmit } from '../../src/connectors/submit.js'
import type { Submit } from '../../src/connectors/types.js'
import { isHearthError } from '../../src/errors.js'
import { startDataServer } from '../support/connectors-daemon.js'
import { tempDir } from '../support/tmp.js'
import { ConversationBuilder, chatgptExportFiles, simpleConversation } from './fixtures/chatgpt.js'
import { writeBothExports, writeZipExport } from './fixtures/exports.js'
import { SCHEMAS_DIR, shippedConnector, testPlugin } from './fixtures/run.js'
import { accountHistoryFiles, playlistFile, TRACKS, yourLibrary } from './fixtures/spotify.js'

const T0 = 1704067200

function conversations (n: number): Array<Record<string, unknown>> {
  const list = Array.from({ length: n }, (_, i) => simpleConversation(`conv-${i}`, `Conversation ${i} ✨`, T0 + i * 1000, [[`q${i}`, `a${i}`]]))
  // two conversations updated in the same instant: both must be kept
  const twin = new ConversationBuilder({ id: 'conv-twin', title: 'twin', createTime: T0, updateTime: (list[0]!.update_time as number) })
  twin.add(twin.rootId, { role: 'user', text: 'same second, other content' })
  list.push(twin.build(null))
  return list
}

async function files (dir: string): Promise<string[]> {
  const out: string[] = []
  for (const scope of await readdir(dir).catch(() => [] as string[])) {
    for (const f of await readdir(join(dir, scope))) out.push(`${scope}/${f}`)
  }
  return out.sort()
}

test('import: a ChatGPT export goes through the daemon; importing it again, or its folder, stores nothing new', async (t) => {
  const dir = await tempDir(t)
  const server = await startDataServer(t, { dir, schemasDir: SCHEMAS_DIR })
  const connector = await shippedConnector('chatgpt')
  const { zip, folder } = await writeBothExports(dir, 'chatgpt', chatgptExportFiles(conversations(25)))
  const submit = daemonSubmit({ socketPath: server.socketPath })
  const events: ImportProgress[] = []

  const first = await runImport({ connector, source: zip, submit, onProgress: (e) => events.push(e) })
  assert.equal(first.failure, undefined)
  assert.deepEqual(first.total, { items: 27, stored: 27, duplicate: 0, rejected: 0, waiting: 0 }, '26 conversations and the (empty) shared-links snapshot')
  assert.deepEqual(first.scopes.map((s) => [s.scope, s.stored, s.paths.length]), [['chatgpt.conversations', 26, 26], ['chatgpt.conversations.shared', 1, 1]])
  assert.deepEqual(first.source, { kind: 'zip', location: zip, exportedAt: '2024-05-04T10:20:30Z' })
  assert.deepEqual(first.rejected, [])
  assert.equal(events[0]!.type, 'opened')
  assert.equal(events.filter((e) => e.type === 'item').length, 27)
  const lastItem = events.filter((e) => e.type === 'item').at(-1) as { done: number }
  assert.equal(lastItem.done, 27)

  const stored = await files(server.dataDir)
  assert.equal(stored.length, 27)
  assert.deepEqual([...first.scopes[0]!.paths, ...first.scopes[1]!.paths].sort(), stored)
  const updated0 = new Date((conversations(1)[0]!.update_time as number) * 1000).toISOString()
  const sameInstant = stored.filter((p) => p.startsWith(`chatgpt.conversations/${updated0.slice(0, 19).replaceAll(':', '-')}`))
  assert.equal(sameInstant.length, 2, 'two conversations updated in the same instant are both kept')
  const envelope = JSON.parse(await readFile(join(server.dataDir, stored.find((p) => p.startsWith('chatgpt.conversations/'))!), 'utf8'))
  assert.equal(envelope.scope, 'chatgpt.conversations')
  assert.equal(envelope.version, '1.0')

  const again = await runImport({ connector, source: zip, submit })
  assert.deepEqual(again.total, { items: 27, stored: 0, duplicate: 27, rejected: 0, waiting: 0 })
  const fromFolder = await runImport({ connector, source: folder, submit, concurrency: 1 })
  assert.deepEqual(fromFolder.total, { items: 27, stored: 0, duplicate: 27, rejected: 0, waiting: 0 })
  assert.deepEqual(await files(server.dataDir), stored, 'no new files')
  assert.deepEqual([...again.scopes[0]!.paths, ...again.scopes[1]!.paths].sort(), stored, 'a duplicate still says where its file is')
})

test('import: a Spotify export fills every scope; a broken, an unknown and an empty file are listed with reasons and the rest imported', async (t) => {
  const dir = await tempDir(t)
  const server = await startDataServer(t, { dir, schemasDir: SCHEMAS_DIR })
  const connector = await shippedConnector('spotify')
  const zip = await writeZipExport(dir, 'spotify.zip', {
    'Spotify Account Data/YourLibrary.json': yourLibrary(TRACKS),
    'Spotify Account Data/Playlist1.json': playlistFile(),
    ...accountHistoryFiles(),
    'Spotify Account Data/StreamingHistory_music_2.json': '[{"endTime": "2024-03-01 10:00", "artistName": "Daft Punk", "trackName": "Aerodynamic", "msPlayed": 1000}, {"endTime": ',
    'Spotify Account Data/Inferences.json': { inferences: ['1P_Custom_Coffee_Lovers'] },
    'Spotify Account Data/Hologram2030.json': { a: 1 },
    'Spotify Account Data/Podcasts/no-data.txt': 'No data',
    'Spotify Account Data/cover.jpg': new Uint8Array([0xff, 0xd8, 0xff])
  })
  const submit = daemonSubmit({ socketPath: server.socketPath })
  const summary = await runImport({ connector, source: zip, submit })
  assert.equal(summary.failure, undefined)
  assert.deepEqual(summary.scopes.map((s) => [s.scope, s.stored, s.duplicate, s.rejected]), [
    ['spotify.savedTracks', 1, 0, 0],
    ['spotify.playlists', 1, 0, 0],
    ['spotify.streamingHistory', 3, 0, 0]
  ])
  assert.deepEqual(summary.skipped.map((k) => k.path), [
    'Spotify Account Data/StreamingHistory_music_2.json',
    'Spotify Account Data/Inferences.json',
    'Spotify Account Data/Hologram2030.json',
    'Spotify Account Data/Podcasts/no-data.txt'
  ])
  assert.match(summary.skipped[0]!.reason, /is not valid JSON: .* \(the 1 record\(s\) before the damage were read\)$/)
  assert.equal(summary.skipped[1]!.reason, 'advertising segments Spotify inferred: left out', 'a file the connector knows says why it is left out')
  assert.match(summary.skipped[2]!.reason, /^not read: the spotify connector does not know this file/, 'only an unknown file asks for a report')
  assert.equal(summary.skipped[3]!.reason, 'the export says this category is empty (no-data.txt)')
  assert.deepEqual(summary.notes, [
    '1 play(s) without a time, track or episode skipped (e.g. audiobooks, removed content)',
    '1 media file(s) (photos, videos, audio) are not imported themselves; the imported data refers to them by their path in the export'
  ])
  assert.deepEqual(await files(server.dataDir), [
    'spotify.playlists/2024-05-04T10-20-30Z.json',
    'spotify.savedTracks/2024-05-04T10-20-30Z.json',
    'spotify.streamingHistory/2024-01-31T23-59-00Z.json',
    'spotify.streamingHistory/2024-02-14T08-15-00Z.json',
    'spotify.streamingHistory/2024-03-01T10-00-00Z.json'
  ])
  const again = await runImport({ connector, source: zip, submit })
  assert.deepEqual(again.total, { items: 5, stored: 0, duplicate: 5, rejected: 0, waiting: 0 })
})

test('import: items that break the contract or the schema are rejected with reasons; the rest go through', async (t) => {
  const dir = await tempDir(t)
  const server = await startDataServer(t, { dir, schemasDir: SCHEMAS_DIR, waitingScopes: ['test.later'] })
  const connector = await testPlugin(join(dir, 'plugins'), 'mixed', ['chatgpt.conversations', 'test.unknown', 'test.later'], `
export default {
  async * read (source) {
    const at = source.exportedAt
    yield { scope: 'chatgpt.conversations', collectedAt: at, data: { id: 'ok', title: 'fine', messages: [] }, label: 'good one' }
    yield { scope: 'chatgpt.conversations', collectedAt: at, data: { id: 'bad', title: 7, messages: [{ role: 'robot' }] }, label: 'bad one' }
    yield { scope: 'instagram.profile', collectedAt: at, data: { username: 'x' } }
    yield { scope: 'chatgpt.conversations', collectedAt: '2024-01-01', data: { id: 'x', title: '', messages: [] } }
    yield { scope: 'chatgpt.conversations', collectedAt: at, data: [1, 2] }
    yield { scope: 'test.unknown', collectedAt: at, data: { anything: true } }
    yield { scope: 'test.later', collectedAt: at, data: { anything: true } }
  }
}
`)
  const zip = await writeZipExport(dir, 'x.zip', { 'a.json': '{}' })
  const summary = await runImport({ connector, source: zip, submit: daemonSubmit({ socketPath: server.socketPath }), concurrency: 1 })
  assert.equal(summary.failure, undefined)
  assert.deepEqual(summary.total, { items: 7, stored: 1, duplicate: 0, rejected: 5, waiting: 1 })
  assert.deepEqual(summary.scopes.map((s) => [s.scope, s.stored, s.rejected, s.waiting]), [
    ['chatgpt.conversations', 1, 3, 0],
    ['test.unknown', 0, 1, 0],
    ['test.later', 0, 0, 1],
    ['instagram.profile', 0, 1, 0]
  ], 'declared scopes first, then an undeclared one an item used')
  const reasons = Object.fromEntries(summary.rejected.map((r) => [r.label ?? `${r.scope} ${r.collectedAt}`, r.reasons]))
  assert.deepEqual(reasons['bad one'], [
    '/title: must be string',
    '/messages/0: must have required property \'id\'',
    '/messages/0: must have required property \'text\'',
    '/messages/0: must have required property \'contentType\'',
    '/messages/0/role: must be one of ["user","assistant","tool"]'
  ], 'the daemon\'s schema reasons come back one per line')
  assert.deepEqual(reasons['instagram.profile 2024-05-04T10:20:30Z'], ['scope instagram.profile is not declared in connector.json'])
  assert.match(reasons['chatgpt.conversations 2024-01-01']![0]!, /^collectedAt "2024-01-01" must be ISO 8601 UTC/)
  assert.deepEqual(reasons['chatgpt.conversations 2024-05-04T10:20:30Z'], ['data must be a JSON object'])
  assert.deepEqual(reasons['test.unknown 2024-05-04T10:20:30Z'], ['NO_SCHEMA_FOR_SCOPE: no schema is known for scope test.unknown'])
  assert.deepEqual(server.submissions.map((s) => [s.scope, s.status]), [
    ['chatgpt.conversations', 201], ['chatgpt.conversations', 400], ['test.unknown', 404], ['test.later', 202]
  ], 'items broken locally never reach the daemon')
})

test('import: a connector that fails midway stops the import; what was submitted is counted', async (t) => {
  const dir = await tempDir(t)
  const server = await startDataServer(t, { dir, schemasDir: SCHEMAS_DIR })
  const connector = await testPlugin(join(dir, 'plugins'), 'flaky', ['chatgpt.conversations'], `
export default {
  async * read (source, opts) {
    opts.note('starting')
    for (let i = 0; i < 2; i++) yield { scope: 'chatgpt.conversations', collectedAt: '2024-01-0' + (i + 1) + 'T00:00:00Z', data: { id: 'c' + i, title: '', messages: [] } }
    await source.readJson('missing.json')
  }
}
`)
  const zip = await writeZipExport(dir, 'x.zip', { 'a.json': '{}' })
  const summary = await runImport({ connector, source: zip, submit: daemonSubmit({ socketPath: server.socketPath }) })
  assert.deepEqual(summary.total, { items: 2, stored: 2, duplicate: 0, rejected: 0, waiting: 0 })
  assert.equal(summary.failure?.code, 'NOT_FOUND')
  assert.match(summary.failure!.message, /no entry missing\.json/)
  assert.deepEqual(summary.notes, ['starting'])

  const thrower = await testPlugin(join(dir, 'plugins2'), 'thrower', ['chatgpt.conversations'], `
export default { async * read () { throw new TypeError('cannot read properties of undefined') } }
`)
  const s2 = await runImport({ connector: thrower, source: zip, submit: daemonSubmit({ socketPath: server.socketPath }) })
  assert.deepEqual(s2.failure, { code: 'PLUGIN_INVALID', message: 'connector thrower failed while reading the export: cannot read properties of undefined' })
})

test('import: the daemon going away stops the import with DAEMON_NOT_RUNNING', async (t) => {
  const dir = await tempDir(t)
  const server = await startDataServer(t, { dir, schemasDir: SCHEMAS_DIR })
  const connector = await shippedConnector('chatgpt')
  const zip = await writeZipExport(dir, 'c.zip', chatgptExportFiles(conversations(30)))
  const through = daemonSubmit({ socketPath: server.socketPath })
  let calls = 0
  const submit: Submit = async (item) => {
    if (++calls === 5) await server.close()
    return await through(item)
  }
  const summary = await runImport({ connector, source: zip, submit, concurrency: 1 })
  assert.equal(summary.failure?.code, 'DAEMON_NOT_RUNNING', summary.failure?.message)
  assert.equal(summary.total.stored, 4)
  assert.ok(summary.total.items < 31, 'reading stopped early')
})

test('import: at most `concurrency` submits are in flight, and the connector is not read ahead of them', async (t) => {
  const dir = await tempDir(t)
  const connector = await testPlugin(join(dir, 'plugins'), 'many', ['chatgpt.conversations'], `
export const pulled = { count: 0 }
export default {
  async * read () {
    for (let i = 0; i < 40; i++) {
      pulled.count++
      yield { scope: 'chatgpt.conversations', collectedAt: new Date(Date.UTC(2024, 0, 1, 0, 0, i)).toISOString(), data: { id: 'c' + i, title: '', messages: [] } }
    }
  }
}
`)
  const { pulled } = await import(join(connector.dir, 'index.js')) as { pulled: { count: number } }
  let inFlight = 0
  let maxInFlight = 0
  let maxAhead = 0
  let settled = 0
  const submit: Submit = async () => {
    inFlight++
    maxInFlight = Math.max(maxInFlight, inFlight)
    maxAhead = Math.max(maxAhead, pulled.count - settled)
    await new Promise((resolve) => setTimeout(resolve, 2))
    inFlight--
    settled++
    return { status: 'stored', path: 'x' }
  }
  const zip = await writeZipExport(dir, 'x.zip', { 'a.json': '{}' })
  const summary = await runImport({ connector, source: zip, submit, concurrency: 3 })
  assert.equal(summary.total.stored, 40)
  assert.equal(maxInFlight, 3)
  assert.ok(maxAhead <= 3, `read at most 3 items ahead of the daemon (was ${maxAhead})`)
})

test('import: an export that cannot be opened fails before anything is submitted', async (t) => {
  const dir = await tempDir(t)
  const server = await startDataServer(t, { dir, schemasDir: SCHEMAS_DIR })
  const connector = await shippedConnector('chatgpt')
  const submit = daemonSubmit({ socketPath: server.socketPath })
  await assert.rejects(runImport({ connector, source: join(dir, 'missing.zip'), submit }), (err) => isHearthError(err, 'NOT_FOUND'))
  await writeFile(join(dir, 'fake.zip'), 'not a zip at all')
  await assert.rejects(runImport({ connector, source: join(dir, 'fake.zip'), submit }), (err) => isHearthError(err, 'EXPORT_UNREADABLE'))
  assert.deepEqual(server.submissions, [])
})
