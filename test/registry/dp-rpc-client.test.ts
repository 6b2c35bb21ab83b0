import { test } from 'node:test'
import assert from 'node:assert/strict'
import { createDpRpcResolver } from '../../src/registry/dp-rpc-client.js'
import { createDefinitionFetcher } from '../../src/registry/fetch-definition.js'
import { serializeDefinition, parseSchemaDefinition } from '../../src/registry/definition.js'
import { isHearthError, type ErrorCode } from '../../src/errors.js'
import type { StorageBackend } from '../../src/storage/types.js'
import { definitionDoc, startDpRpcDouble, startStorage, type DpRpcDouble } from '../support/registry-fixtures.js'

const OWNER = '0xFCAd0B19bB29D4674531d6f115237E16AfCE377c'

async function pinDefinition (storage: StorageBackend, scope: string, overrides: Record<string, unknown> = {}): Promise<string> {
  return `ipfs://${await storage.add(serializeDefinition(parseSchemaDefinition(definitionDoc(scope, overrides))))}`
}

async function setup (t: Parameters<typeof startStorage>[0], timeoutMs = 1000): Promise<{ storage: StorageBackend; service: DpRpcDouble; resolver: ReturnType<typeof createDpRpcResolver> }> {
  const storage = await startStorage(t)
  const service = await startDpRpcDouble(t)
  const resolver = createDpRpcResolver({
    baseUrl: service.baseUrl,
    timeoutMs,
    fetchDefinition: createDefinitionFetcher({ storage, timeoutMs: 10_000, allowHttp: true, allowPrivateAddresses: true }) // local storage: generous for a loaded machine
  })
  return { storage, service, resolver }
}

async function rejectsWith (work: Promise<unknown>, code: ErrorCode, message: RegExp): Promise<void> {
  await assert.rejects(work, (err: unknown) => {
    assert.ok(isHearthError(err, code), `expected ${code}, got ${String(err)}`)
    assert.match(err.message, message)
    return true
  })
}

test('a scope and an id resolve to the service record plus the verified definition; hex ids stay as given', async (t) => {
  const { storage, service, resolver } = await setup(t)
  const v1 = await pinDefinition(storage, 'instagram.profile')
  const v2 = await pinDefinition(storage, 'instagram.profile', { version: '2.0.0' })
  service.schemas.push(
    { id: '0x1a', ownerAddress: OWNER, name: 'Instagram Profile', dialect: 'json', definitionUrl: v1, scope: 'instagram.profile', addedAt: '2025-01-01T00:00:00Z' },
    { id: '0x2b', ownerAddress: OWNER, name: 'Instagram Profile', dialect: 'json', definitionUrl: v2, scope: 'instagram.profile', addedAt: 1_750_000_000 }
  )

  const newest = await resolver.byScope('instagram.profile')
  assert.ok(newest !== null)
  assert.equal(newest.id, '0x2b')
  assert.equal(newest.definitionUrl, v2)
  assert.equal(newest.ownerAddress, OWNER)
  assert.equal(newest.addedAt, new Date(1_750_000_000_000).toISOString(), 'unix seconds become ISO')
  assert.equal(newest.definition.version, '2.0.0')
  assert.equal(newest.definition.scope, 'instagram.profile')

  const byHex = await resolver.byId('0x1a')
  assert.equal(byHex?.id, '0x1a')
  assert.equal(byHex?.definition.version, '1.0.0')
  // The service also answers the decimal spelling; the id is reported as the service spells it.
  const byDecimal = await resolver.byId('26')
  assert.equal(byDecimal?.id, '0x1a')
  assert.deepEqual(service.requests.slice(0, 3), ['/v1/schemas?scope=instagram.profile', '/v1/schemas/0x1a', '/v1/schemas/26'])
})

test('404 means unknown (null); local ids are never asked for', async (t) => {
  const { service, resolver } = await setup(t)
  assert.equal(await resolver.byScope('nobody.knows'), null)
  assert.equal(await resolver.byId('0x99'), null)
  assert.equal(await resolver.byId('local:bafkreigh2akiscaildcqabsyg3dfr6chu3fgpregiymsck7e7aqa4s52zy'), null)
  assert.deepEqual(service.requests, ['/v1/schemas?scope=nobody.knows', '/v1/schemas/0x99'])
  await rejectsWith(resolver.byScope('Bad.Scope'), 'INVALID_SCOPE', /segment 1/)
})

test('a service error, a garbage answer, a hang and a dead service are DPRPC_UNAVAILABLE', async (t) => {
  const { service, resolver } = await setup(t, 300)
  service.mode = 'error'
  await rejectsWith(resolver.byScope('instagram.profile'), 'DPRPC_UNAVAILABLE', /HTTP 500/)
  service.mode = 'garbage'
  await rejectsWith(resolver.byId('0x1'), 'DPRPC_UNAVAILABLE', /not JSON/)
  service.mode = 'hang'
  const started = Date.now()
  await rejectsWith(resolver.byScope('instagram.profile'), 'DPRPC_UNAVAILABLE', /no answer within 300 ms/)
  assert.ok(Date.now() - started < 5000)
  await service.stop()
  // A pooled keep-alive connection the server closed may fail first as a socket error.
  await rejectsWith(resolver.byScope('instagram.profile'), 'DPRPC_UNAVAILABLE', /request failed: (ECONNREFUSED|UND_ERR_SOCKET)/)
  await rejectsWith(resolver.byScope('instagram.profile'), 'DPRPC_UNAVAILABLE', /request failed: ECONNREFUSED/)
})

test('a malformed record is refused rather than trusted', async (t) => {
  const { service, resolver } = await setup(t)
  service.schemas.push({ id: '0x1', ownerAddress: null, name: 'x', dialect: 'json', definitionUrl: '', scope: 'a.b', addedAt: null })
  await rejectsWith(resolver.byScope('a.b'), 'DPRPC_UNAVAILABLE', /malformed answer: data.definitionUrl/)
})

test('a definition whose scope differs from the record is SCHEMA_SCOPE_MISMATCH', async (t) => {
  const { storage, service, resolver } = await setup(t)
  const spotify = await pinDefinition(storage, 'spotify.savedTracks')
  service.schemas.push({ id: '0x7', ownerAddress: OWNER, name: 'Instagram Profile', dialect: 'json', definitionUrl: spotify, scope: 'instagram.profile', addedAt: null })
  await rejectsWith(resolver.byScope('instagram.profile'), 'SCHEMA_SCOPE_MISMATCH', /listed for scope instagram.profile but its definition .* is for spotify.savedTracks/)
  await rejectsWith(resolver.byId('0x7'), 'SCHEMA_SCOPE_MISMATCH', /spotify.savedTracks/)
})

test('definitions over https-style URLs, unsupported dialects and broken definitions', async (t) => {
  const { service, resolver } = await setup(t)
  service.documents.set('profile.json', JSON.stringify(definitionDoc('github.profile')))
  service.documents.set('broken.json', JSON.stringify(definitionDoc('github.repos', { dialect: 'sqlite' })))
  service.schemas.push(
    { id: '0x10', ownerAddress: null, name: 'GitHub', dialect: 'json', definitionUrl: `${service.baseUrl}/defs/profile.json`, scope: 'github.profile', addedAt: null },
    { id: '0x11', ownerAddress: null, name: 'refiner', dialect: 'sqlite', definitionUrl: `${service.baseUrl}/defs/profile.json`, scope: 'github.refined', addedAt: null },
    { id: '0x12', ownerAddress: null, name: 'broken', dialect: 'json', definitionUrl: `${service.baseUrl}/defs/broken.json`, scope: 'github.repos', addedAt: null },
    { id: '0x13', ownerAddress: null, name: 'gone', dialect: 'json', definitionUrl: `${service.baseUrl}/defs/gone.json`, scope: 'github.gone', addedAt: null }
  )
  const resolved = await resolver.byScope('github.profile')
  assert.equal(resolved?.definition.scope, 'github.profile')
  await rejectsWith(resolver.byScope('github.refined'), 'INVALID_SCHEMA_DEFINITION', /dialect sqlite/)
  await rejectsWith(resolver.byScope('github.repos'), 'INVALID_SCHEMA_DEFINITION', /dialect must be "json"/)
  await rejectsWith(resolver.byScope('github.gone'), 'DEFINITION_UNAVAILABLE', /HTTP 404/)
})

test('a base URL with a path prefix keeps it; a non-http base URL is a config error', async (t) => {
  const { storage } = await setup(t)
  const fetchDefinition = createDefinitionFetcher({ storage })
  assert.throws(() => createDpRpcResolver({ baseUrl: 'ftp://x', fetchDefinition }), (err: unknown) => isHearthError(err, 'CONFIG_INVALID'))
  assert.throws(() => createDpRpcResolver({ baseUrl: 'not a url', fetchDefinition }), (err: unknown) => isHearthError(err, 'CONFIG_INVALID'))
  const service = await startDpRpcDouble(t)
  const prefixed = createDpRpcResolver({ baseUrl: `${service.baseUrl}/api`, fetchDefinition })
  assert.equal(await prefixed.byScope('a.b'), null) // the double has no /api routes: 404
  assert.deepEqual(service.requests, ['/api/v1/schemas?scope=a.b'])
})
