// `hearth connectors` and `hearth import` end to end: the real daemon (child process, real socket,
// shipped schemas, embedded IPFS) receives what the shipped connectors read from fixture exports.
import assert from 'node:assert/strict'
import { mkdir, readdir, stat, writeFile } from 'node:fs/promises'
import { join } from 'node:path'
import { PassThrough } from 'node:stream'
import { test } from 'node:test'
import { EXIT, type Command } from '../../src/cli/command.js'
import { connectorsCommand, importCommand, listConnectorsBody } from '../../src/cli/commands/connectors.js'
import { connectorDirs, loadConnectors } from '../../src/connectors/loader.js'
import { homeLayout, type HomeLayout } from '../../src/home.js'
import { startDaemonProcess } from '../support/daemon.js'
import { tempDir } from '../support/tmp.js'
import { chatgptExportFiles, simpleConversation } from './fixtures/chatgpt.js'
import { writeBothExports, writeZipExport } from './fixtures/exports.js'
import { categoryFiles, instagramExportFiles } from './fixtures/instagram.js'

interface Ran { code: number; out: string; err: string }

async function run (command: Command, home: HomeLayout, args: string[]): Promise<Ran> {
  const stdout = new PassThrough()
  const stderr = new PassThrough()
  let out = ''
  let err = ''
  stdout.on('data', (c: Buffer) => { out += c.toString() })
  stderr.on('data', (c: Buffer) => { err += c.toString() })
  const code = await command.run({ home, args, stdout, stderr, stdin: new PassThrough(), env: { HEARTH_HOME: home.root } })
  return { code, out, err }
}

async function userPlugin (home: HomeLayout, id: string, connectorJson: unknown, index: string): Promise<void> {
  const dir = join(home.root, 'plugins', id)
  await mkdir(dir, { recursive: true })
  await writeFile(join(dir, 'connector.json'), typeof connectorJson === 'string' ? connectorJson : JSON.stringify(connectorJson))
  await writeFile(join(dir, 'index.js'), index)
}

test('hearth connectors lists shipped and the owner\'s connectors, and reports broken ones', async (t) => {
  const home = homeLayout(await tempDir(t))
  await userPlugin(home, 'notes', {
    connectorId: 'notes', displayName: 'My notes', version: '0.1.0',
    scopes: [{ scope: 'notes.items', label: 'My notes', description: 'Notes from my notes app' }]
  }, 'export default { async * read () {} }\n')
  await userPlugin(home, 'broken', '{"connectorId": ', 'export default {}\n')

  const text = await run(connectorsCommand, home, [])
  assert.equal(text.code, EXIT.OK)
  assert.match(text.out, /^chatgpt {2}ChatGPT 1\.2\.0\n {2}chatgpt\.conversations {2}Your ChatGPT conversations\n {4}Every conversation/m)
  assert.match(text.out, /^ {2}spotify\.savedTracks {2}Your saved Spotify tracks$/m)
  assert.match(text.out, /^notes {2}My notes 0\.1\.0$/m)
  assert.match(text.err, /^plugin broken not loaded: PLUGIN_INVALID: .*connector\.json is not valid JSON/m)

  const json = await run(connectorsCommand, home, ['--json'])
  assert.equal(json.code, EXIT.OK)
  const body = JSON.parse(json.out)
  assert.deepEqual(body, JSON.parse(JSON.stringify(listConnectorsBody(await loadConnectors(connectorDirs(home))))))
  assert.deepEqual(body.connectors.map((c: { connectorId: string }) => c.connectorId), ['chatgpt', 'google-maps', 'instagram', 'notes', 'reddit', 'spotify', 'twitter', 'youtube'])
  assert.deepEqual(body.errors.map((e: { id: string; code: string }) => [e.id, e.code]), [['broken', 'PLUGIN_INVALID']])

  assert.equal((await run(connectorsCommand, home, ['extra'])).code, EXIT.USAGE)
})

test('hearth import without a daemon, with an unknown or broken connector, or bad arguments', async (t) => {
  const home = homeLayout(await tempDir(t))
  await userPlugin(home, 'broken', { connectorId: 'broken', displayName: 'B', version: '1', scopes: [] }, '')
  const zip = await writeZipExport(home.root, 'c.zip', chatgptExportFiles([]))

  const noDaemon = await run(importCommand, home, ['chatgpt', zip])
  assert.equal(noDaemon.code, EXIT.NOT_RUNNING)
  assert.match(noDaemon.err, /^error DAEMON_NOT_RUNNING: /)

  const unknown = await run(importCommand, home, ['tiktok', zip])
  assert.equal(unknown.code, EXIT.NOT_FOUND)
  assert.match(unknown.err, /^error NOT_FOUND: no connector "tiktok"; installed: chatgpt, google-maps, instagram, reddit, spotify, twitter, youtube\n/)

  const broken = await run(importCommand, home, ['broken', zip])
  assert.equal(broken.code, EXIT.FAILURE)
  assert.match(broken.err, /^error PLUGIN_INVALID: .*scopes must be a non-empty array/)

  assert.equal((await run(importCommand, home, ['chatgpt'])).code, EXIT.USAGE)
  assert.equal((await run(importCommand, home, ['chatgpt', zip, '--concurrency', '0'])).code, EXIT.USAGE)
  assert.equal((await run(importCommand, home, ['chatgpt', zip, '--bogus'])).code, EXIT.USAGE)
})

test('hearth import through the real daemon: counts, file paths, re-import stores nothing, bad exports and rejections', async (t) => {
  const d = await startDaemonProcess(t)
  const home = d.home
  const exports = await tempDir(t)
  const { zip, folder } = await writeBothExports(exports, 'instagram-jane', instagramExportFiles({
    profile: { username: 'jane.doe', name: 'Jane Dœ 🌸', bio: '東京 ☕' },
    posts: [[{ media: [{ uri: 'media/posts/202401/1.jpg', creation_timestamp: 1704100000, title: 'New year ✨' }] }]]
  }))

  const first = await run(importCommand, home, ['instagram', zip])
  assert.equal(first.code, EXIT.OK, first.err + first.out)
  assert.match(first.err, /^reading .*instagram-jane\.zip \(zip, \d+ entries, exported 2024-05-04T10:20:30Z\)$/m)
  assert.match(first.out, /^ {2}instagram\.profile +1 +0 +0 +0$/m)
  // the progress line's last count is the summary's, however fast the import was
  assert.match(first.err, /^ {2}2 items: 2 stored, 0 duplicate, 0 rejected, 0 waiting for a schema$/m)
  assert.match(first.out, /^ {2}instagram\.posts +1 +0 +0 +0$/m)
  const profileFile = join(home.data, 'instagram.profile', '2024-05-04T10-20-30Z.json')
  const postsFile = join(home.data, 'instagram.posts', '2024-05-04T10-20-30Z.json')
  assert.ok(first.out.includes(`\n  ${profileFile}\n`), first.out)
  assert.ok(first.out.includes(`\n  ${postsFile}\n`), first.out)
  assert.ok((await stat(profileFile)).isFile())
  assert.match(first.out, /^not imported:\n {2}start_here\.html: the export's own index page$/m)
  assert.match(first.out, /^ {2}- 1 media file\(s\) \(photos, videos, audio\) are not imported themselves/m)

  const latest = await d.request({ path: '/v1/data/instagram.profile' })
  assert.equal(latest.status, 200)
  assert.deepEqual(latest.json.data, { username: 'jane.doe', name: 'Jane Dœ 🌸', bio: '東京 ☕' })

  for (const source of [zip, folder]) {
    const again = await run(importCommand, home, ['instagram', source, '--json'])
    assert.equal(again.code, EXIT.OK, again.err)
    const summary = JSON.parse(again.out)
    assert.deepEqual(summary.total, { items: 2, stored: 0, duplicate: 2, rejected: 0, waiting: 0 })
    assert.deepEqual(summary.scopes.map((s: { paths: string[] }) => s.paths).slice(0, 2), [[profileFile], [postsFile]])
    assert.deepEqual(summary.skipped, [{ path: 'start_here.html', reason: "the export's own index page" }])
  }
  assert.deepEqual(await readdir(join(home.data, 'instagram.profile')), ['2024-05-04T10-20-30Z.json'])
  const versions = await d.request({ path: '/v1/data/instagram.posts/versions' })
  assert.equal(versions.json.total, 1, 'the daemon indexed one version only')

  // a conversation export through the same daemon, folder form
  const chat = await writeBothExports(exports, 'chatgpt', chatgptExportFiles([
    simpleConversation('conv-1', 'Hello 👋', 1704067200, [['hi', 'hello!']]),
    simpleConversation('conv-2', '你好', 1704070000, [['再见', '👋']])
  ]))
  const chatImport = await run(importCommand, home, ['chatgpt', chat.folder, '--json'])
  assert.equal(chatImport.code, EXIT.OK, chatImport.err)
  assert.deepEqual(JSON.parse(chatImport.out).scopes.map((s: { scope: string; stored: number }) => [s.scope, s.stored]), [['chatgpt.conversations', 2], ['chatgpt.conversations.shared', 1]])

  // an export in two parts, given as both archives and as the folder holding them
  await mkdir(join(exports, 'parts'))
  const part1 = await writeZipExport(join(exports, 'parts'), 'instagram-jane-part1.zip', categoryFiles('2025', { followers: [['friend.one', 1717000000]] }))
  const part2 = await writeZipExport(join(exports, 'parts'), 'instagram-jane-part2.zip', categoryFiles('2025', { following: [['café.tokyo', 1717000100]] }))
  const parts = await run(importCommand, home, ['instagram', part1, part2, '--json'])
  assert.equal(parts.code, EXIT.OK, parts.err)
  const partsSummary = JSON.parse(parts.out)
  assert.equal(partsSummary.source.parts.length, 2)
  assert.deepEqual(partsSummary.scopes.filter((s: { stored: number }) => s.stored > 0).map((s: { scope: string }) => s.scope), ['instagram.followers', 'instagram.following'])
  const partsFolder = await run(importCommand, home, ['instagram', join(exports, 'parts'), '--json'])
  assert.deepEqual(JSON.parse(partsFolder.out).total, { items: 2, stored: 0, duplicate: 2, rejected: 0, waiting: 0 })

  const corrupt = join(exports, 'corrupt.zip')
  await writeFile(corrupt, 'PK\u0003\u0004 not really a zip')
  const bad = await run(importCommand, home, ['chatgpt', corrupt])
  assert.equal(bad.code, EXIT.FAILURE)
  assert.match(bad.err, /^error EXPORT_UNREADABLE: .*corrupt\.zip is not a readable zip archive/m)

  // a connector whose items the daemon refuses: reasons are printed, exit code 1
  await userPlugin(home, 'sloppy', {
    connectorId: 'sloppy', displayName: 'Sloppy', version: '1.0.0',
    scopes: [{ scope: 'instagram.profile', label: 'Profile', description: 'A profile without a username' }]
  }, 'export default { async * read (source) { yield { scope: "instagram.profile", collectedAt: source.exportedAt, data: { name: "no username" }, label: "nameless" } } }\n')
  const rejected = await run(importCommand, home, ['sloppy', zip])
  assert.equal(rejected.code, EXIT.FAILURE)
  assert.match(rejected.out, /^rejected:\n {2}instagram\.profile 2024-05-04T10:20:30Z \(nameless\)\n {4}- must have required property 'username'$/m)
})
