import assert from 'node:assert/strict'
import { access, mkdir, readFile, writeFile } from 'node:fs/promises'
import { join } from 'node:path'
import { test } from 'node:test'
import { listConnectorsBody } from '../../src/cli/commands/connectors.js'
import { Router } from '../../src/api/router.js'
import { connectorDirs, findConnector, loadConnectors, scanConnectors, shippedPluginsDir } from '../../src/connectors/loader.js'
import { addConnectorRoutes } from '../../src/api/routes/connectors.js'
import { checkConnectorMetadata } from '../../src/connectors/metadata.js'
import { homeLayout } from '../../src/home.js'
import { tempDir } from '../support/tmp.js'
import { PLUGINS_DIR, SCHEMAS_DIR } from './fixtures/run.js'

const META = (id: string, scopes: unknown = [{ scope: `${id}.things`, label: 'Things', description: 'Some things' }]): Record<string, unknown> =>
  ({ connectorId: id, displayName: id.toUpperCase(), version: '0.1.0', scopes })
const GOOD_MODULE = 'export default { async * read (source) { yield { scope: "x.things", collectedAt: source.exportedAt, data: {} } } }\n'

async function plugin (root: string, name: string, files: Record<string, string | Record<string, unknown>>): Promise<void> {
  await mkdir(join(root, name), { recursive: true })
  for (const [file, content] of Object.entries(files)) {
    await writeFile(join(root, name, file), typeof content === 'string' ? content : JSON.stringify(content))
  }
}

test('loader: the shipped connectors load, and their listing is what GET /v1/connectors serves', async () => {
  assert.equal(shippedPluginsDir(), PLUGINS_DIR)
  const loaded = await loadConnectors(PLUGINS_DIR)
  assert.deepEqual(loaded.errors, [])
  assert.deepEqual(loaded.connectors.map((c) => c.id), ['chatgpt', 'google-maps', 'instagram', 'reddit', 'spotify', 'twitter', 'youtube'])
  const body = listConnectorsBody(loaded)
  assert.deepEqual(body.connectors.map((c) => [c.connectorId, c.displayName, c.scopes.map((s) => s.scope)]), [
    ['chatgpt', 'ChatGPT', ['chatgpt.conversations', 'chatgpt.conversations.shared']],
    ['google-maps', 'Google Maps Timeline (Location History)', ['googlemaps.visits', 'googlemaps.activities', 'googlemaps.locations']],
    ['instagram', 'Instagram', ['instagram.profile', 'instagram.posts', 'instagram.followers', 'instagram.following', 'instagram.likes', 'instagram.saved', 'instagram.comments', 'instagram.stories', 'instagram.profilePhotos', 'instagram.conversations']],
    ['reddit', 'Reddit', ['reddit.posts', 'reddit.comments', 'reddit.saved', 'reddit.votes', 'reddit.subscriptions']],
    ['spotify', 'Spotify', ['spotify.savedTracks', 'spotify.playlists', 'spotify.streamingHistory']],
    ['twitter', 'X (Twitter)', ['twitter.tweets', 'twitter.likes', 'twitter.directMessages', 'twitter.followers', 'twitter.following']],
    ['youtube', 'YouTube (Google Takeout)', ['youtube.history', 'youtube.searches', 'youtube.subscriptions', 'youtube.playlists', 'youtube.likes', 'youtube.comments']]
  ])
  for (const c of body.connectors) {
    assert.match(c.version, /^\d+\.\d+\.\d+$/)
    for (const s of c.scopes) {
      assert.deepEqual(Object.keys(s), ['scope', 'label', 'description', ...(s.optional === true ? ['optional'] : [])])
      assert.ok(s.label.length > 0 && s.description.length > 20, `${s.scope} has words for a consent screen`)
      const shipped = JSON.parse(await readFile(join(SCHEMAS_DIR, `${s.scope}.json`), 'utf8')) as { scope: string; description: string }
      assert.equal(shipped.scope, s.scope, `${s.scope} has a shipped schema`)
      assert.ok(shipped.description.length > 20)
    }
  }
  assert.deepEqual(body.errors, [])
  assert.equal(JSON.stringify(body), JSON.stringify(JSON.parse(JSON.stringify(body))), 'plain JSON')
})

test('loader: each broken plugin is reported with PLUGIN_INVALID and the others still load', async (t) => {
  const root = await tempDir(t)
  await plugin(root, 'good', { 'connector.json': META('good'), 'index.js': GOOD_MODULE })
  await plugin(root, 'esm', { 'connector.json': META('esm'), 'index.mjs': GOOD_MODULE })
  await plugin(root, 'nojson', { 'index.js': GOOD_MODULE })
  await plugin(root, 'badjson', { 'connector.json': '{"connectorId": "badjson",', 'index.js': GOOD_MODULE })
  await plugin(root, 'badscopes', {
    'connector.json': META('badscopes', [
      { scope: 'Bad.scope', label: 'x', description: 'x' },
      { scope: 'ok.scope', label: '', description: 'x' },
      { scope: 'ok.twice', label: 'a', description: 'a' },
      { scope: 'ok.twice', label: 'b', description: 'b' },
      { scope: 'ok.maybe', label: 'c', description: 'c', optional: 'yes' }
    ]),
    'index.js': GOOD_MODULE
  })
  await plugin(root, 'mismatch', { 'connector.json': META('other'), 'index.js': GOOD_MODULE })
  await plugin(root, 'noindex', { 'connector.json': META('noindex') })
  await plugin(root, 'throws', { 'connector.json': META('throws'), 'index.js': 'throw new Error("boom at import")\n' })
  await plugin(root, 'syntax', { 'connector.json': META('syntax'), 'index.js': 'export default {\n' })
  await plugin(root, 'noread', { 'connector.json': META('noread'), 'index.js': 'export default { reed () {} }\n' })
  await plugin(root, '_disabled', { 'connector.json': '{' })
  await plugin(root, '.hidden', { 'connector.json': '{' })
  await writeFile(join(root, 'README.md'), '# my plugins')

  const loaded = await loadConnectors(root)
  assert.deepEqual(loaded.connectors.map((c) => c.id), ['esm', 'good'])
  assert.equal(findConnector(loaded, 'good')?.dir, join(root, 'good'))
  const byId = Object.fromEntries(loaded.errors.map((e) => [e.id, e]))
  assert.deepEqual(Object.keys(byId).sort(), ['badjson', 'badscopes', 'mismatch', 'noindex', 'nojson', 'noread', 'syntax', 'throws'])
  for (const e of loaded.errors) {
    assert.equal(e.code, 'PLUGIN_INVALID')
    assert.ok(e.message.startsWith(join(root, e.id) + ': '), 'the message names the plugin folder')
  }
  assert.match(byId.nojson!.message, /no connector\.json$/)
  assert.match(byId.badjson!.message, /connector\.json is not valid JSON/)
  assert.match(byId.badscopes!.message, /scopes\[0\]\.scope "Bad\.scope" segment 1 \(source\) must match/)
  assert.match(byId.badscopes!.message, /scopes\[1\]\.label must be a non-empty string/)
  assert.match(byId.badscopes!.message, /scopes\[3\]\.scope "ok\.twice" is listed twice/)
  assert.match(byId.badscopes!.message, /scopes\[4\]\.optional must be true or false/)
  assert.match(byId.mismatch!.message, /connectorId "other" must equal the plugin folder's name "mismatch"/)
  assert.match(byId.noindex!.message, /no index\.js \/ index\.mjs \/ index\.ts/)
  assert.match(byId.throws!.message, /index\.js failed to load: boom at import/)
  assert.match(byId.syntax!.message, /index\.js failed to load/)
  assert.match(byId.noread!.message, /must export default an object with a read\(source, opts\) function/)

  const body = listConnectorsBody(loaded)
  assert.deepEqual(body.errors.map((e) => e.id).sort(), Object.keys(byId).sort())
})

test('loader: several folders — shipped first, the owner\'s <home>/plugins next; a repeated id is an error, a missing folder is not', async (t) => {
  const a = await tempDir(t)
  const b = await tempDir(t)
  await plugin(a, 'good', { 'connector.json': META('good'), 'index.js': GOOD_MODULE })
  await plugin(b, 'good', { 'connector.json': META('good'), 'index.js': GOOD_MODULE })
  await plugin(b, 'mine', { 'connector.json': META('mine'), 'index.js': GOOD_MODULE })
  const loaded = await loadConnectors([a, join(a, 'does-not-exist'), b])
  assert.deepEqual(loaded.connectors.map((c) => [c.id, c.dir]), [['good', join(a, 'good')], ['mine', join(b, 'mine')]])
  assert.equal(loaded.errors.length, 1)
  assert.match(loaded.errors[0]!.message, /a connector "good" is already loaded from/)

  const home = homeLayout(a)
  assert.deepEqual(connectorDirs(home), [PLUGINS_DIR, join(a, 'plugins')])
})

test('metadata: connector.json problems are all listed at once', () => {
  assert.deepEqual(checkConnectorMetadata([], 'x'), { ok: false, problems: ['connector.json must hold a JSON object'] })
  assert.deepEqual(checkConnectorMetadata({ connectorId: 'Bad Id', displayName: '', version: 1, scopes: [] }, 'x'), {
    ok: false,
    problems: [
      'connectorId "Bad Id" must match ^[a-z0-9][a-z0-9_-]*$',
      'displayName must be a non-empty string',
      'version must be a non-empty string',
      'scopes must be a non-empty array'
    ]
  })
  assert.deepEqual(checkConnectorMetadata({ ...META('x'), scopes: ['x.y', { scope: 'x.y', label: 'L' }], extra: 'kept out' }, 'x'), {
    ok: false,
    problems: ['scopes[0] must be an object', 'scopes[1].description must be a string']
  })
  assert.deepEqual(checkConnectorMetadata({ ...META('x'), future: true }, 'x'), {
    ok: true,
    metadata: { connectorId: 'x', displayName: 'X', version: '0.1.0', scopes: [{ scope: 'x.things', label: 'Things', description: 'Some things' }] }
  }, 'unknown fields are allowed and not carried over')
})

test('GET /v1/connectors lists what is installed without running any plugin code', async (t) => {
  const root = await tempDir(t)
  const marker = join(root, 'ran')
  await plugin(root, 'eager', {
    'connector.json': META('eager'),
    'index.js': `import { writeFileSync } from 'node:fs'\nwriteFileSync(${JSON.stringify(marker)}, 'x')\nexport default { async * read () {} }\n`
  })
  await plugin(root, 'broken', { 'connector.json': META('broken', []), 'index.js': GOOD_MODULE })
  const router = new Router()
  addConnectorRoutes(router, { dirs: [PLUGINS_DIR, root] })
  const { handler, params } = router.match('GET', '/v1/connectors')
  assert.deepEqual(params, {})
  const reply = await handler({ method: 'GET', url: new URL('http://hearth/v1/connectors'), params } as Parameters<typeof handler>[0])
  assert.equal(reply.status, 200)
  const body = reply.body as ReturnType<typeof listConnectorsBody>
  assert.deepEqual(body, listConnectorsBody(await scanConnectors([PLUGINS_DIR, root])))
  assert.deepEqual(body.connectors.map((c) => c.connectorId), ['chatgpt', 'eager', 'google-maps', 'instagram', 'reddit', 'spotify', 'twitter', 'youtube'])
  assert.deepEqual(body.errors.map((e) => [e.id, e.code]), [['broken', 'PLUGIN_INVALID']])
  await assert.rejects(access(marker), 'scanning never imports a plugin')

  await loadConnectors(root)
  await access(marker)
})
