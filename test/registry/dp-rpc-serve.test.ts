import { test } from 'node:test'
import assert from 'node:assert/strict'
import { createServer } from 'node:http'
import type { AddressInfo } from 'node:net'
import { answerDpRpcRequest } from '../../src/registry/dp-rpc-serve.js'
import { dpRpcRoute, parseDpRpcSchema, toDpRpcBody } from '../../src/registry/dp-rpc-shape.js'
import { createDpRpcResolver } from '../../src/registry/dp-rpc-client.js'
import { createDefinitionFetcher } from '../../src/registry/fetch-definition.js'
import { createSchemaRegistry } from '../../src/registry/resolver.js'
import { parseSchemaDefinition, serializeDefinition } from '../../src/registry/definition.js'
import { definitionDoc, openCache, startStorage } from '../support/registry-fixtures.js'

const OWNER = '0xFCAd0B19bB29D4674531d6f115237E16AfCE377c'

test('routes: the two lookup endpoints, bad scopes and ids, other paths', () => {
  assert.deepEqual(dpRpcRoute('/v1/schemas?scope=spotify.savedTracks'), { kind: 'byScope', scope: 'spotify.savedTracks' })
  assert.deepEqual(dpRpcRoute('/v1/schemas/?scope=a.b'), { kind: 'byScope', scope: 'a.b' })
  assert.deepEqual(dpRpcRoute('/v1/schemas/0x1a'), { kind: 'byId', id: '0x1a' })
  assert.deepEqual(dpRpcRoute('/v1/schemas/local%3Abafyabc'), { kind: 'byId', id: 'local:bafyabc' })
  assert.deepEqual(dpRpcRoute('/v1/schemas'), { kind: 'bad-request', reason: 'exactly one scope query parameter is required' })
  assert.deepEqual(dpRpcRoute('/v1/schemas?scope=a.b&scope=c.d'), { kind: 'bad-request', reason: 'exactly one scope query parameter is required' })
  assert.deepEqual(dpRpcRoute('/v1/schemas?scope=A.b'), { kind: 'bad-request', reason: 'scope segment 1 (source) must match ^[a-z0-9][a-z0-9_]*$' })
  assert.deepEqual(dpRpcRoute('/v1/schemas/%E0%A4%A'), { kind: 'bad-request', reason: 'the schema id is not valid percent-encoding' })
  assert.equal(dpRpcRoute('/v1/schemas/1/extra'), null)
  assert.equal(dpRpcRoute('/v1/data/a.b'), null)
})

test('record ⇄ wire shape: the definition never travels, numbers and missing fields are normalised', () => {
  const definition = parseSchemaDefinition(definitionDoc('a.b'))
  const body = toDpRpcBody({ id: '4', ownerAddress: OWNER, name: 'n', dialect: 'json', definitionUrl: 'ipfs://x', scope: 'a.b', addedAt: null, definition } as never,
    { source: 'chain', extra: { chainId: 1480 } })
  assert.deepEqual(body, {
    data: { id: '4', ownerAddress: OWNER, name: 'n', dialect: 'json', definitionUrl: 'ipfs://x', scope: 'a.b', addedAt: null },
    proof: { chainId: 1480, source: 'chain', schemaId: '4', definitionUrl: 'ipfs://x', local: false }
  })
  assert.deepEqual(parseDpRpcSchema({ id: 12, name: 'n', dialect: 'json', definitionUrl: 'u', scope: 'a.b', addedAt: 1_700_000_000_000 }), {
    record: { id: '12', ownerAddress: null, name: 'n', dialect: 'json', definitionUrl: 'u', scope: 'a.b', addedAt: '2023-11-14T22:13:20.000Z' }
  })
  assert.deepEqual(parseDpRpcSchema({ id: '1', name: 'n', dialect: 'json', definitionUrl: 'u', scope: 'a' }), { problem: 'data.scope has 1 segment; a scope has 2 or 3' })
  assert.deepEqual(parseDpRpcSchema(null), { problem: 'data is not an object' })
  assert.deepEqual(parseDpRpcSchema({ id: 1.5 }), { problem: 'data.id is not a schema id' })
})

test('a daemon serves the lookup endpoints from its cache, and another daemon resolves through them', async (t) => {
  const storage = await startStorage(t)
  const { cache } = await openCache(t)
  const serving = createSchemaRegistry({ cache, sources: [] })
  const local = await serving.addLocalSchema(definitionDoc('instagram.profile'), { storage })
  const spotify = parseSchemaDefinition(definitionDoc('spotify.savedTracks'))
  const spotifyUrl = `ipfs://${await storage.add(serializeDefinition(spotify))}`
  await serving.remember({ id: '0x5', ownerAddress: OWNER, name: 'Spotify', dialect: 'json', definitionUrl: spotifyUrl, scope: 'spotify.savedTracks', addedAt: null, definition: spotify }, { latest: true })

  const server = createServer((req, res) => {
    void answerDpRpcRequest(cache, req.url ?? '/').then((answer) => {
      res.writeHead(answer?.status ?? 404, { 'content-type': 'application/json' })
      res.end(JSON.stringify(answer?.body ?? { error: 'no route' }))
    })
  })
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve))
  t.after(async () => {
    server.closeAllConnections()
    await new Promise<void>((resolve) => server.close(() => resolve()))
  })
  const base = `http://127.0.0.1:${(server.address() as AddressInfo).port}`

  const byScope = await (await fetch(`${base}/v1/schemas?scope=instagram.profile`)).json() as Record<string, any>
  assert.equal(byScope.data.id, local.schema.id)
  assert.deepEqual(byScope.proof, { source: 'hearth-cache', schemaId: local.schema.id, definitionUrl: local.schema.definitionUrl, local: true })
  const missing = await fetch(`${base}/v1/schemas?scope=nobody.here`)
  assert.equal(missing.status, 404)
  assert.equal((await missing.json() as Record<string, any>).error.errorCode, 'NO_SCHEMA_FOR_SCOPE')
  const bad = await fetch(`${base}/v1/schemas?scope=Nope`)
  assert.equal(bad.status, 400)
  assert.equal((await bad.json() as Record<string, any>).error.errorCode, 'INVALID_SCOPE')
  const unknownId = await fetch(`${base}/v1/schemas/0x99`)
  assert.equal(unknownId.status, 404)
  assert.equal((await unknownId.json() as Record<string, any>).error.errorCode, 'SCHEMA_NOT_FOUND')

  // Another daemon (same storage content, as after sync) uses this one as its lookup service.
  const { cache: otherCache } = await openCache(t)
  const other = createSchemaRegistry({
    cache: otherCache,
    sources: [createDpRpcResolver({ baseUrl: base, fetchDefinition: createDefinitionFetcher({ storage }) })]
  })
  const resolved = await other.byScope('instagram.profile')
  assert.equal(resolved?.id, local.schema.id)
  assert.deepEqual(resolved?.definition, local.schema.definition)
  const chain = await other.byId('0x5')
  assert.equal(chain?.ownerAddress, OWNER)
  assert.deepEqual(chain?.definition, spotify)
  assert.equal((await other.byScope('spotify.savedTracks', { refresh: 'never' })), null, 'learned by id only')
  assert.equal((await other.byScope('spotify.savedTracks'))?.id, '0x5')
})
