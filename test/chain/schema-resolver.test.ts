import { test, type TestContext } from 'node:test'
import assert from 'node:assert/strict'
import { createServer } from 'node:http'
import type { AddressInfo } from 'node:net'
import { createChainSchemaResolver, parseSchemaId } from '../../src/chain/schema-resolver.js'
import { openDatabase, openKv } from '../../src/db/database.js'
import { HearthError, isHearthError } from '../../src/errors.js'
import { parseSchemaDefinition } from '../../src/registry/definition.js'
import { createDefinitionFetcher } from '../../src/registry/fetch-definition.js'
import { startTestChain, testChainClient } from '../support/anvil.js'
import { tempDir } from '../support/tmp.js'

function definition (scope: string, version: string): string {
  return JSON.stringify({
    name: `${scope} ${version}`, version, scope, dialect: 'json',
    schema: { type: 'object', properties: { v: { type: 'string' } }, required: ['v'] }
  })
}

/** Definitions served over real HTTP on 127.0.0.1 (the https:// path of the definition fetcher). */
async function definitionServer (t: TestContext) {
  const documents = new Map<string, string>()
  const hits = new Map<string, number>()
  let unavailable = new Set<string>()
  const server = createServer((req, res) => {
    const path = req.url ?? ''
    hits.set(path, (hits.get(path) ?? 0) + 1)
    const body = documents.get(path)
    if (unavailable.has(path)) { res.writeHead(503).end(); return }
    if (body === undefined) { res.writeHead(404).end(); return }
    res.writeHead(200, { 'content-type': 'application/json' }).end(body)
  })
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve))
  t.after(async () => { await new Promise((resolve) => server.close(resolve)) })
  const base = `http://127.0.0.1:${(server.address() as AddressInfo).port}`
  return {
    url: (path: string) => `${base}${path}`,
    serve: (path: string, body: string) => { documents.set(path, body) },
    hits: (path: string) => hits.get(path) ?? 0,
    setUnavailable: (paths: string[]) => { unavailable = new Set(paths) }
  }
}

async function setup (t: TestContext) {
  const chain = await startTestChain(t)
  const client = testChainClient(chain, { requestTimeoutMs: 2_000 })
  const defs = await definitionServer(t)
  const db = await openDatabase(await tempDir(t))
  t.after(async () => { await db.close() })
  const kv = openKv<unknown>(db, 'chain-schemas')
  const resolver = createChainSchemaResolver({
    chain: client,
    fetchDefinition: createDefinitionFetcher({
      storage: { get: async () => { throw new HearthError('STORAGE_NOT_FOUND', 'this test serves definitions over HTTP only') } },
      timeoutMs: 2_000,
      allowHttp: true,
      allowPrivateAddresses: true
    }),
    parseDefinition: (bytes) => parseSchemaDefinition(bytes),
    kv,
    refreshIntervalMs: 0
  })
  const add = async (path: string, body: string | null): Promise<bigint> => {
    if (body !== null) defs.serve(path, body)
    return (await client.addSchema('schema', 'json', defs.url(path))).schemaId
  }
  return { chain, client, defs, kv, resolver, add }
}

test('byId reads the schema on chain and takes its scope from the definition', async (t) => {
  const { resolver, add, defs } = await setup(t)
  const id = await add('/profile-1.json', definition('instagram.profile', '1.0.0'))
  const resolved = await resolver.byId(id.toString())
  assert.equal(resolved?.id, '1')
  assert.equal(resolved?.scope, 'instagram.profile')
  assert.equal(resolved?.definitionUrl, defs.url('/profile-1.json'))
  assert.equal(resolved?.definition.version, '1.0.0')
  assert.equal(resolved?.name, 'schema')
  assert.equal((await resolver.byId('0x1'))?.id, '1', 'hex ids are the same schema')

  assert.equal(await resolver.byId('2'), null, 'unknown id')
  assert.equal(await resolver.byId('0'), null)
  assert.equal(await resolver.byId('local:bafy'), null)
  assert.equal(await resolver.byId('not a number'), null)

  await resolver.byId('1')
  assert.equal(defs.hits('/profile-1.json'), 1, 'a resolved definition is cached for good')
})

test('a definition that declares another scope than the caller expects is SCHEMA_SCOPE_MISMATCH', async (t) => {
  const { resolver, add } = await setup(t)
  const id = await add('/saved.json', definition('spotify.savedTracks', '1.0.0'))
  assert.equal((await resolver.byIdForScope(id.toString(), 'spotify.savedTracks'))?.scope, 'spotify.savedTracks')
  await assert.rejects(resolver.byIdForScope(id.toString(), 'instagram.profile'), (err: unknown) =>
    isHearthError(err, 'SCHEMA_SCOPE_MISMATCH') && err.details?.definitionScope === 'spotify.savedTracks' && err.details?.expectedScope === 'instagram.profile')
  assert.equal(await resolver.byIdForScope('99', 'instagram.profile'), null)
  assert.equal(await resolver.byScope('instagram.profile'), null, 'byScope never returns a schema of another scope')
})

test('byScope finds the newest schema of a scope by indexing SchemaAdded incrementally', async (t) => {
  const { resolver, add, defs, kv, client } = await setup(t)
  await add('/p1.json', definition('instagram.profile', '1.0.0'))
  await add('/tracks.json', definition('spotify.savedTracks', '1.0.0'))
  await add('/p2.json', definition('instagram.profile', '2.0.0'))
  await add('/broken.json', '{"name": "no scope here"}')
  await add('/later.json', definition('youtube.watchLater', '1.0.0'))
  defs.setUnavailable(['/later.json'])

  assert.equal((await resolver.byScope('instagram.profile'))?.id, '3')
  assert.equal((await resolver.byScope('instagram.profile'))?.definition.version, '2.0.0')
  assert.equal((await resolver.byScope('spotify.savedTracks'))?.id, '2')
  assert.equal(await resolver.byScope('youtube.watchLater'), null, 'its definition could not be fetched yet')
  assert.equal(await resolver.byScope('nobody.hasThis'), null)
  const scanned = await kv.get('meta:lastBlock')
  assert.equal(scanned, (await client.blockNumber()).toString())

  defs.setUnavailable([])
  await add('/p3.json', definition('instagram.profile', '3.0.0'))
  assert.equal((await resolver.byScope('instagram.profile'))?.id, '6', 'new schemas are picked up')
  assert.equal((await resolver.byScope('youtube.watchLater'))?.id, '5', 'a definition that failed to fetch is retried')
  assert.equal(defs.hits('/p1.json'), 1, 'known definitions are not fetched again')
  assert.equal(defs.hits('/broken.json'), 1, 'an invalid definition is skipped for good')
})

test('offline, byScope answers from the index and says unavailable when it knows nothing', async (t) => {
  const { resolver, add, chain } = await setup(t)
  await add('/p1.json', definition('instagram.profile', '1.0.0'))
  assert.equal((await resolver.byScope('instagram.profile'))?.id, '1')
  await chain.kill()
  assert.equal((await resolver.byScope('instagram.profile'))?.id, '1')
  assert.equal((await resolver.byId('1'))?.scope, 'instagram.profile')
  await assert.rejects(resolver.byScope('spotify.savedTracks'), (err: unknown) => isHearthError(err, 'CHAIN_UNAVAILABLE'))
  await assert.rejects(resolver.byId('2'), (err: unknown) => isHearthError(err, 'CHAIN_UNAVAILABLE'))
})

test('schema ids parse from decimal and hex only', () => {
  assert.equal(parseSchemaId('12'), 12n)
  assert.equal(parseSchemaId('0x0c'), 12n)
  assert.equal(parseSchemaId('local:bafy'), null)
  assert.equal(parseSchemaId(''), null)
  assert.equal(parseSchemaId('-1'), null)
  assert.equal(parseSchemaId('1'.repeat(79)), null)
})
