import { test, type TestContext } from 'node:test'
import assert from 'node:assert/strict'
import { createDpRpcResolver } from '../../src/registry/dp-rpc-client.js'
import { createDefinitionFetcher } from '../../src/registry/fetch-definition.js'
import { parseSchemaDefinition, serializeDefinition } from '../../src/registry/definition.js'
import { createSchemaRegistry, type ResolvedEvent, type SchemaRegistry } from '../../src/registry/resolver.js'
import { isHearthError } from '../../src/errors.js'
import type { StorageBackend } from '../../src/storage/types.js'
import { definitionDoc, openCache, startDpRpcDouble, startStorage, type DpRpcDouble, type ServiceSchema } from '../support/registry-fixtures.js'

const OWNER = '0xFCAd0B19bB29D4674531d6f115237E16AfCE377c'
const REFRESH_MS = 60_000
const RETRY_MS = 5_000

interface World {
  storage: StorageBackend
  service: DpRpcDouble
  registry: SchemaRegistry
  events: ResolvedEvent[]
  clock: { now: number }
  cacheDir: string
  closeCache: () => Promise<void>
  pin: (scope: string, overrides?: Record<string, unknown>) => Promise<string>
  publish: (id: string, scope: string, definitionUrl: string, addedAt?: string | null) => ServiceSchema
}

async function world (t: TestContext, opts: { cacheDir?: string } = {}): Promise<World> {
  const storage = await startStorage(t)
  const service = await startDpRpcDouble(t)
  const opened = await openCache(t, opts.cacheDir)
  const clock = { now: Date.parse('2026-01-21T10:00:00Z') }
  const events: ResolvedEvent[] = []
  const source = createDpRpcResolver({ baseUrl: service.baseUrl, timeoutMs: 500, fetchDefinition: createDefinitionFetcher({ storage, timeoutMs: 10_000 }) })
  const registry = createSchemaRegistry({
    cache: opened.cache, sources: [source], refreshMs: REFRESH_MS, retryMs: RETRY_MS, now: () => clock.now, onResolved: (e) => events.push(e)
  })
  return {
    storage, service, registry, events, clock, cacheDir: opened.dir, closeCache: opened.close,
    pin: async (scope, overrides = {}) => `ipfs://${await storage.add(serializeDefinition(parseSchemaDefinition(definitionDoc(scope, overrides))))}`,
    publish: (id, scope, definitionUrl, addedAt = null) => {
      const record: ServiceSchema = { id, ownerAddress: OWNER, name: `${scope} schema`, dialect: 'json', definitionUrl, scope, addedAt }
      service.schemas.push(record)
      return record
    }
  }
}

test('resolution goes cache → DP RPC, remembers the answer and does not ask again until the refresh is due', async (t) => {
  const w = await world(t)
  const url = await w.pin('instagram.profile')
  w.publish('0x1', 'instagram.profile', url, '2025-01-01T00:00:00Z')

  const first = await w.registry.byScope('instagram.profile')
  assert.equal(first?.id, '0x1')
  assert.equal(first?.definition.scope, 'instagram.profile')
  assert.deepEqual(w.events.map((e) => [e.schema.id, e.origin, e.latest]), [['0x1', 'dp-rpc', true]])

  const before = w.service.requests.length
  assert.equal((await w.registry.byScope('instagram.profile'))?.id, '0x1')
  assert.equal((await w.registry.byId('0x1'))?.definitionUrl, url)
  assert.equal(w.service.requests.length, before, 'answered from the cache')
  assert.deepEqual(w.registry.sourceStatus().map((s) => [s.name, s.ok]), [['dp-rpc', true]])

  // A newer schema is published; once the refresh is due the scope moves to it.
  const v2 = await w.pin('instagram.profile', { version: '2.0.0' })
  w.publish('0x2', 'instagram.profile', v2, '2025-06-01T00:00:00Z')
  assert.equal((await w.registry.byScope('instagram.profile'))?.id, '0x1', 'not yet due')
  w.clock.now += REFRESH_MS
  assert.equal((await w.registry.byScope('instagram.profile'))?.id, '0x2')
  assert.equal((await w.registry.byScope('instagram.profile', { refresh: 'never' }))?.id, '0x2')
  assert.deepEqual(w.events.map((e) => [e.schema.id, e.latest]), [['0x1', true], ['0x2', true]])
  assert.deepEqual((await w.registry.list()).map((s) => [s.id, s.latest]), [['0x1', false], ['0x2', true]])
})

test('when the service is down the cache answers; with nothing cached the answer is null, not an error', async (t) => {
  const w = await world(t)
  const url = await w.pin('spotify.savedTracks')
  w.publish('0x5', 'spotify.savedTracks', url)
  assert.equal((await w.registry.byScope('spotify.savedTracks'))?.id, '0x5')

  await w.service.stop()
  w.clock.now += REFRESH_MS
  assert.equal((await w.registry.byScope('spotify.savedTracks'))?.id, '0x5')
  assert.equal((await w.registry.byScope('spotify.savedTracks', { refresh: 'force' }))?.id, '0x5')
  assert.equal((await w.registry.byId('0x5'))?.id, '0x5')
  const status = w.registry.sourceStatus()[0]!
  assert.equal(status.ok, false)
  assert.match(status.error!, /^DPRPC_UNAVAILABLE: /)

  assert.equal(await w.registry.byScope('chatgpt.conversations'), null)
  assert.equal(await w.registry.byId('0x77'), null)
  await assert.rejects(w.registry.byScope('not a scope'), (err: unknown) => isHearthError(err, 'INVALID_SCOPE'))
})

test('what was resolved keeps resolving offline after a restart', async (t) => {
  const w = await world(t)
  const url = await w.pin('github.profile')
  w.publish('0x9', 'github.profile', url)
  assert.equal((await w.registry.byScope('github.profile'))?.id, '0x9')
  await w.service.stop()
  await w.closeCache()

  const restarted = await world(t, { cacheDir: w.cacheDir })
  await restarted.service.stop() // this run's service is down from the start
  const offline = await restarted.registry.byScope('github.profile')
  assert.equal(offline?.id, '0x9')
  assert.equal(offline?.definitionUrl, url)
  assert.equal(offline?.definition.scope, 'github.profile')
})

test('an unknown scope is asked again only after the retry delay; concurrent lookups share one request', async (t) => {
  const w = await world(t)
  const lookups = await Promise.all(Array.from({ length: 5 }, async () => await w.registry.byScope('reddit.comments')))
  assert.deepEqual(lookups, [null, null, null, null, null])
  assert.equal(w.service.requests.length, 1)
  assert.equal(await w.registry.byScope('reddit.comments'), null)
  assert.equal(w.service.requests.length, 1, 'negative answer remembered for the retry delay')

  const url = await w.pin('reddit.comments')
  w.publish('0x3', 'reddit.comments', url)
  w.clock.now += RETRY_MS
  assert.equal((await w.registry.byScope('reddit.comments'))?.id, '0x3')
  assert.equal(w.service.requests.length, 2)
})

test('an id asked in decimal and answered in hex resolves under both spellings', async (t) => {
  const w = await world(t)
  const url = await w.pin('linkedin.profile')
  w.publish('0x1a', 'linkedin.profile', url)
  assert.equal((await w.registry.byId('26'))?.id, '0x1a')
  const asked = w.service.requests.length
  assert.equal((await w.registry.byId('26'))?.id, '0x1a')
  assert.equal((await w.registry.byId('0x1a'))?.id, '0x1a')
  assert.equal(w.service.requests.length, asked)
  // Learning a schema by id does not make it its scope's latest.
  assert.equal(await w.registry.byScope('linkedin.profile', { refresh: 'never' }), null)
})

test('sources are tried in order; one that fails or answers a mismatching definition is skipped', async (t) => {
  const storage = await startStorage(t)
  const bad = await startDpRpcDouble(t)
  const good = await startDpRpcDouble(t)
  const { cache } = await openCache(t)
  const fetchDefinition = createDefinitionFetcher({ storage })
  const pin = async (scope: string): Promise<string> => `ipfs://${await storage.add(serializeDefinition(parseSchemaDefinition(definitionDoc(scope))))}`
  bad.schemas.push({ id: '0x1', ownerAddress: null, name: 'liar', dialect: 'json', definitionUrl: await pin('spotify.savedTracks'), scope: 'youtube.history', addedAt: null })
  good.schemas.push({ id: '0x2', ownerAddress: null, name: 'yt', dialect: 'json', definitionUrl: await pin('youtube.history'), scope: 'youtube.history', addedAt: null })
  const registry = createSchemaRegistry({
    cache,
    sources: [
      createDpRpcResolver({ name: 'bad', baseUrl: bad.baseUrl, fetchDefinition }),
      createDpRpcResolver({ name: 'good', baseUrl: good.baseUrl, fetchDefinition })
    ]
  })
  assert.equal((await registry.byScope('youtube.history'))?.id, '0x2')
  const status = registry.sourceStatus()
  assert.equal(status[0]!.ok, false)
  assert.match(status[0]!.error!, /^SCHEMA_SCOPE_MISMATCH/)
  assert.equal(status[1]!.ok, true)
  assert.equal(await cache.byId('0x1'), null, 'nothing from the lying source was remembered')
})

test('a local schema is pinned in canonical form, usable at once as local:<cid>, and adding it again changes nothing', async (t) => {
  const w = await world(t)
  await w.service.stop() // fully offline
  const doc = definitionDoc('google.searchHistory')
  const added = await w.registry.addLocalSchema(JSON.stringify(doc, null, 2), { storage: w.storage })
  assert.equal(added.added, true)
  assert.equal(added.latest, true)
  const cid = added.schema.definitionUrl.slice('ipfs://'.length)
  assert.equal(added.schema.id, `local:${cid}`)
  assert.equal(added.schema.ownerAddress, null)
  assert.deepEqual(await w.storage.get(cid), serializeDefinition(parseSchemaDefinition(doc)))
  assert.equal(await w.storage.has(cid), true)

  assert.equal((await w.registry.byScope('google.searchHistory'))?.id, added.schema.id)
  assert.equal((await w.registry.byId(added.schema.id))?.id, added.schema.id)
  assert.equal((await w.registry.byDefinitionUrl(added.schema.definitionUrl))?.id, added.schema.id)

  // The same definition with another key order or whitespace is the same CID.
  const reordered = Object.fromEntries(Object.entries(doc).reverse())
  const again = await w.registry.addLocalSchema(reordered, { storage: w.storage })
  assert.deepEqual(again, { schema: added.schema, added: false, latest: true })
  assert.equal(w.events.length, 1)

  await assert.rejects(w.registry.addLocalSchema({ ...doc, scope: 'Bad' }, { storage: w.storage }),
    (err: unknown) => isHearthError(err, 'INVALID_SCHEMA_DEFINITION'))
})

test('an explicit local choice is kept against an older service answer and yields to a newer one', async (t) => {
  const w = await world(t)
  const v1 = await w.pin('instagram.posts')
  w.publish('0x1', 'instagram.posts', v1, '2025-01-01T00:00:00Z')
  assert.equal((await w.registry.byScope('instagram.posts'))?.id, '0x1')

  const local = await w.registry.addLocalSchema(definitionDoc('instagram.posts', { version: '2.0.0' }), { storage: w.storage })
  assert.equal((await w.registry.byScope('instagram.posts'))?.id, local.schema.id)
  w.clock.now += REFRESH_MS
  assert.equal((await w.registry.byScope('instagram.posts'))?.id, local.schema.id, 'the lagging service does not switch back to v1')

  const v3 = await w.pin('instagram.posts', { version: '3.0.0' })
  w.publish('0x3', 'instagram.posts', v3, new Date(w.clock.now + 1000).toISOString())
  w.clock.now += REFRESH_MS
  assert.equal((await w.registry.byScope('instagram.posts'))?.id, '0x3', 'a schema registered after the choice wins')
})

test('when a source reveals the chain id of a local schema, the local id is replaced everywhere', async (t) => {
  const w = await world(t)
  const local = await w.registry.addLocalSchema(definitionDoc('github.profile'), { storage: w.storage })
  w.publish('0x42', 'github.profile', local.schema.definitionUrl, '2020-01-01T00:00:00Z')
  w.clock.now += REFRESH_MS
  const now = await w.registry.byScope('github.profile')
  assert.equal(now?.id, '0x42')
  assert.equal(now?.ownerAddress, OWNER)
  assert.equal((await w.registry.byId(local.schema.id))?.id, '0x42')
  const replaced = w.events.find((e) => e.replacedId !== undefined)
  assert.deepEqual(replaced && [replaced.schema.id, replaced.replacedId, replaced.latest], ['0x42', local.schema.id, true])
  assert.deepEqual((await w.registry.list()).map((s) => s.id), ['0x42'])

  // Adding the definition again now finds the chain schema, not a new local one.
  const again = await w.registry.addLocalSchema(definitionDoc('github.profile'), { storage: w.storage })
  assert.deepEqual([again.schema.id, again.added, again.latest], ['0x42', false, true])
})

test('replaceSchemaId (the chain module registered a local schema) makes the chain id answer for the scope', async (t) => {
  const w = await world(t)
  await w.service.stop()
  const local = await w.registry.addLocalSchema(definitionDoc('youtube.history'), { storage: w.storage })
  const chain = await w.registry.replaceSchemaId(local.schema.id, '7', { ownerAddress: OWNER, addedAt: '2026-01-21T10:00:05.000Z' })
  assert.equal(chain.id, '7')
  assert.equal((await w.registry.byScope('youtube.history'))?.id, '7')
  assert.equal((await w.registry.byId(local.schema.id))?.id, '7')
  assert.deepEqual(w.events.at(-1) && [w.events.at(-1)!.origin, w.events.at(-1)!.replacedId, w.events.at(-1)!.latest], ['replace', local.schema.id, true])
})

test('a shipped (non-sticky) local schema does not displace a chain schema or an explicit choice', async (t) => {
  const w = await world(t)
  const url = await w.pin('spotify.streamingHistory')
  w.publish('0x8', 'spotify.streamingHistory', url)
  assert.equal((await w.registry.byScope('spotify.streamingHistory'))?.id, '0x8')
  const shipped = await w.registry.addLocalSchema(definitionDoc('spotify.streamingHistory', { version: '9.9.9' }), { storage: w.storage, sticky: false })
  assert.deepEqual([shipped.added, shipped.latest], [true, false])
  assert.equal((await w.registry.byScope('spotify.streamingHistory', { refresh: 'never' }))?.id, '0x8')

  // With no schema yet, a shipped one becomes latest; a newer shipped version replaces it.
  await w.service.stop()
  const s1 = await w.registry.addLocalSchema(definitionDoc('reddit.comments'), { storage: w.storage, sticky: false })
  const s2 = await w.registry.addLocalSchema(definitionDoc('reddit.comments', { version: '1.1.0' }), { storage: w.storage, sticky: false })
  assert.deepEqual([s1.latest, s2.latest], [true, true])
  assert.equal((await w.registry.byScope('reddit.comments'))?.id, s2.schema.id)
  // Re-installing the older shipped one (every start) changes nothing.
  const again = await w.registry.addLocalSchema(definitionDoc('reddit.comments'), { storage: w.storage, sticky: false })
  assert.deepEqual([again.added, again.latest], [false, false])
  assert.equal((await w.registry.byScope('reddit.comments'))?.id, s2.schema.id)
})

test('remember() records what other components learn; a throwing listener does not break resolution', async (t) => {
  const w = await world(t)
  await w.service.stop()
  const unsubscribe = w.registry.onResolved(() => { throw new Error('listener bug') })
  const definition = parseSchemaDefinition(definitionDoc('chatgpt.conversations'))
  await w.registry.remember({ id: '3', ownerAddress: OWNER, name: 'c', dialect: 'json', definitionUrl: 'ipfs://x', scope: 'chatgpt.conversations', addedAt: null, definition }, { latest: true })
  unsubscribe()
  assert.equal((await w.registry.byScope('chatgpt.conversations'))?.id, '3')
  assert.deepEqual(w.events.map((e) => [e.schema.id, e.origin, e.latest]), [['3', 'remember', true]])
})

test('withSources gives a view over the same cache and listeners that never asks the main sources', async (t) => {
  const w = await world(t)
  const url = await w.pin('instagram.profile')
  w.publish('0x1', 'instagram.profile', url)
  const serving = w.registry.withSources([])
  assert.equal(await serving.byScope('instagram.profile'), null)
  assert.equal(w.service.requests.length, 0)
  assert.equal((await w.registry.byScope('instagram.profile'))?.id, '0x1')
  assert.equal((await serving.byScope('instagram.profile'))?.id, '0x1', 'shares the cache')
  await serving.addLocalSchema(definitionDoc('github.profile'), { storage: w.storage })
  assert.deepEqual(w.events.map((e) => [e.schema.scope, e.origin]), [['instagram.profile', 'dp-rpc'], ['github.profile', 'local']])
  assert.equal(w.service.requests.length, 1)
})

test('an answer contradicting the cache is reported, not recorded, and the cache still answers', async (t) => {
  const w = await world(t)
  const a = await w.pin('youtube.history', { version: '1.0.0' })
  w.publish('0x5', 'youtube.history', a)
  assert.equal((await w.registry.byId('0x5'))?.definitionUrl, a)
  const local = await w.registry.addLocalSchema(definitionDoc('youtube.history', { version: '2.0.0' }), { storage: w.storage })
  // The service now claims 0x5 is the local definition: id 0x5 cannot mean two definitions.
  w.service.schemas.splice(0, 1, { ...w.service.schemas[0]!, definitionUrl: local.schema.definitionUrl })
  assert.equal((await w.registry.byScope('youtube.history'))?.id, local.schema.id)
  assert.equal((await w.registry.byId('0x5'))?.definitionUrl, a)
  assert.match(w.registry.sourceStatus()[0]!.error!, /^CONFLICT: /)
})
