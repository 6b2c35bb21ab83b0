import { test } from 'node:test'
import assert from 'node:assert/strict'
import { parseSchemaDefinition } from '../../src/registry/definition.js'
import { isHearthError } from '../../src/errors.js'
import type { ResolvedSchema } from '../../src/registry/types.js'
import { definitionDoc, openCache } from '../support/registry-fixtures.js'
import { openKv } from '../../src/db/database.js'
import { createSchemaCache, type SchemaKv } from '../../src/registry/cache.js'

function resolved (id: string, scope: string, definitionUrl: string, version = '1.0.0'): ResolvedSchema {
  return {
    id, ownerAddress: null, name: `${scope} v${version}`, dialect: 'json', definitionUrl, scope, addedAt: '2025-01-01T00:00:00.000Z',
    definition: parseSchemaDefinition(definitionDoc(scope, { version }))
  }
}

test('schemas and latest pointers survive closing and reopening the database', async (t) => {
  const first = await openCache(t)
  const a = resolved('1', 'instagram.profile', 'ipfs://a')
  const b = resolved('2', 'instagram.profile', 'ipfs://b', '2.0.0')
  await first.cache.remember(a)
  await first.cache.remember(b)
  await first.cache.setLatest('instagram.profile', '2', { sticky: true, setAt: '2025-02-02T00:00:00.000Z' })
  await first.close()

  const again = await openCache(t, first.dir)
  assert.deepEqual(await again.cache.byId('1'), a)
  assert.deepEqual(await again.cache.byScope('instagram.profile'), b)
  assert.deepEqual(await again.cache.latest('instagram.profile'), { id: '2', sticky: true, setAt: '2025-02-02T00:00:00.000Z' })
  assert.deepEqual(await again.cache.byDefinitionUrl('ipfs://a'), a)
  assert.equal(await again.cache.byScope('spotify.savedTracks'), null)
  assert.equal(await again.cache.byId('3'), null)
  assert.deepEqual((await again.cache.list()).map((s) => [s.id, s.latest]), [['1', false], ['2', true]])
})

test('inconsistent input is refused: scope mismatches, unknown ids, wrong-scope pointers', async (t) => {
  const { cache } = await openCache(t)
  const lying = { ...resolved('5', 'instagram.profile', 'ipfs://x'), scope: 'spotify.savedTracks' }
  await assert.rejects(cache.remember(lying), (err: unknown) => isHearthError(err, 'SCHEMA_SCOPE_MISMATCH'))
  await assert.rejects(cache.setLatest('instagram.profile', '404'), (err: unknown) => isHearthError(err, 'SCHEMA_NOT_FOUND'))
  await cache.remember(resolved('6', 'instagram.profile', 'ipfs://y'))
  await assert.rejects(cache.setLatest('spotify.savedTracks', '6'), (err: unknown) => isHearthError(err, 'SCHEMA_SCOPE_MISMATCH'))
  await assert.rejects(cache.alias('0x6', 'nope'), (err: unknown) => isHearthError(err, 'SCHEMA_NOT_FOUND'))
  await cache.alias('0x6', '6')
  assert.equal((await cache.byId('0x6'))?.id, '6')
  assert.deepEqual((await cache.list()).map((s) => s.id), ['6'], 'aliases are not listed as schemas')
})

test('the url index prefers a chain id over a local id of the same definition', async (t) => {
  const { cache } = await openCache(t)
  await cache.remember(resolved('9', 'github.profile', 'ipfs://same'))
  await cache.remember(resolved('local:same', 'github.profile', 'ipfs://same'))
  assert.equal((await cache.byDefinitionUrl('ipfs://same'))?.id, '9')
})

test('a known definition URL is looked up in the database once, a miss each time; writes to the URL index keep the kept answer true', async (t) => {
  const { db } = await openCache(t)
  const kv = openKv<unknown>(db, 'schemas')
  const reads: string[] = []
  const cache = createSchemaCache({ ...kv, get: async (key) => { reads.push(key); return await kv.get(key) } })
  assert.equal(await cache.byDefinitionUrl('ipfs://later'), null)
  assert.equal(await cache.byDefinitionUrl('ipfs://later'), null)
  assert.deepEqual(reads.filter((k) => k.startsWith('url/')), ['url/ipfs://later', 'url/ipfs://later'], 'a miss is not kept')
  await cache.remember(resolved('local:later', 'github.profile', 'ipfs://later'))
  reads.length = 0
  assert.equal((await cache.byDefinitionUrl('ipfs://later'))?.id, 'local:later')
  await cache.replaceSchemaId('local:later', '21')
  assert.equal((await cache.byDefinitionUrl('ipfs://later'))?.id, '21')
  assert.deepEqual(reads.filter((k) => k.startsWith('url/')), [], 'the written answer is kept')
  // a fresh cache on the same database finds what was written
  assert.equal((await createSchemaCache(kv).byDefinitionUrl('ipfs://later'))?.id, '21')
})

test('the URL index keeps hits of URLs up to 2 KiB only: unknown URLs, however many or long, neither evict a known one nor stay in memory', async (t) => {
  const { db } = await openCache(t)
  const kv = openKv<unknown>(db, 'schemas')
  const reads: string[] = []
  const cache = createSchemaCache({ ...kv, get: async (key) => { reads.push(key); return await kv.get(key) } }, { memoryEntries: 4 })
  await cache.remember(resolved('local:known', 'github.profile', 'ipfs://known'))
  const long = `ipfs://${'l'.repeat(4096)}`
  await cache.remember(resolved('local:long', 'github.profile', long))
  reads.length = 0
  for (let i = 0; i < 20; i++) assert.equal(await cache.byDefinitionUrl(`https://unknown.example/${i}/${'x'.repeat(i * 1000)}`), null)
  assert.equal((await cache.byDefinitionUrl('ipfs://known'))?.id, 'local:known')
  assert.deepEqual(reads.filter((k) => k === 'url/ipfs://known'), [], 'the known URL is still kept after a flood of misses')
  assert.equal((await cache.byDefinitionUrl(long))?.id, 'local:long')
  assert.equal((await cache.byDefinitionUrl(long))?.id, 'local:long')
  assert.equal(reads.filter((k) => k === `url/${long}`).length, 2, 'a URL over 2 KiB is read each time')
})

/** `kv` with its next get of `key` held, its value already read, until `release()`; `read` settles once it is. */
function holdNextGet (kv: SchemaKv, key: string): { kv: SchemaKv; read: Promise<void>; release: () => void } {
  let release!: () => void
  const gate = new Promise<void>((resolve) => { release = resolve })
  let readDone!: () => void
  const read = new Promise<void>((resolve) => { readDone = resolve })
  let holding = true
  return {
    kv: {
      ...kv,
      async get (k) {
        if (k !== key || !holding) return await kv.get(k)
        holding = false
        const value = await kv.get(k)
        readDone()
        await gate
        return value
      }
    },
    read,
    release
  }
}

test('a read of the database that a write of its key overtook does not keep its older answer over the write\'s (URL index, latest pointer)', async (t) => {
  const { db } = await openCache(t)
  const kv = openKv<unknown>(db, 'schemas')
  const setup = createSchemaCache(kv)
  await setup.remember(resolved('local:a', 'github.profile', 'ipfs://raced'))
  await setup.setLatest('github.profile', 'local:a')

  // a lookup reads local:a; before it returns, the chain id of that definition is remembered
  let held = holdNextGet(kv, 'url/ipfs://raced')
  let cache = createSchemaCache(held.kv)
  const lookup = cache.byDefinitionUrl('ipfs://raced')
  await held.read
  await cache.remember(resolved('7', 'github.profile', 'ipfs://raced'))
  held.release()
  assert.equal((await lookup)?.id, 'local:a', 'the lookup answers what it read')
  assert.equal((await cache.byDefinitionUrl('ipfs://raced'))?.id, '7', 'the write\'s answer is the one kept')

  // a lookup misses; before it returns, a schema at that URL is remembered
  held = holdNextGet(kv, 'url/ipfs://new')
  cache = createSchemaCache(held.kv)
  const miss = cache.byDefinitionUrl('ipfs://new')
  await held.read
  await cache.remember(resolved('local:n', 'github.profile', 'ipfs://new'))
  held.release()
  assert.equal(await miss, null)
  assert.equal((await cache.byDefinitionUrl('ipfs://new'))?.id, 'local:n', 'the miss is not kept over the write')

  // the scope's pointer is read; before it returns, it is set to another schema
  held = holdNextGet(kv, 'latest/github.profile')
  cache = createSchemaCache(held.kv)
  const pointer = cache.latest('github.profile')
  await held.read
  await cache.setLatest('github.profile', '7')
  held.release()
  assert.equal((await pointer)?.id, 'local:a')
  assert.equal((await cache.latest('github.profile'))?.id, '7')
  assert.equal((await cache.byScope('github.profile'))?.id, '7')
})

test('replacing a local id with a chain id moves the record, the pointer and the index, and is repeatable', async (t) => {
  const opened = await openCache(t)
  const { cache } = opened
  const local = resolved('local:bafyabc', 'github.profile', 'ipfs://bafyabc')
  await cache.remember(local)
  await cache.setLatest('github.profile', 'local:bafyabc', { sticky: true })
  const pointer = await cache.latest('github.profile')

  const chain = await cache.replaceSchemaId('local:bafyabc', '12', { ownerAddress: '0xabc', addedAt: '2025-03-03T00:00:00.000Z' })
  assert.deepEqual(chain, { ...local, id: '12', ownerAddress: '0xabc', addedAt: '2025-03-03T00:00:00.000Z' })
  assert.equal((await cache.byScope('github.profile'))?.id, '12')
  assert.deepEqual(await cache.latest('github.profile'), { ...pointer, id: '12' })
  assert.equal((await cache.byId('local:bafyabc'))?.id, '12', 'the old id maps to the new record')
  assert.equal((await cache.byDefinitionUrl('ipfs://bafyabc'))?.id, '12')
  assert.deepEqual((await cache.list()).map((s) => s.id), ['12'])

  // Again (e.g. after a crash, or from another component that saw the registration): same result.
  assert.deepEqual(await cache.replaceSchemaId('local:bafyabc', '12'), chain)
  await opened.close()
  const again = await openCache(t, opened.dir)
  assert.equal((await again.cache.byId('local:bafyabc'))?.id, '12')
  assert.equal((await again.cache.byScope('github.profile'))?.id, '12')

  await assert.rejects(again.cache.replaceSchemaId('12', '13'), (err: unknown) => isHearthError(err, 'INVALID_ARGUMENT'))
  await assert.rejects(again.cache.replaceSchemaId('local:unknown', '13'), (err: unknown) => isHearthError(err, 'SCHEMA_NOT_FOUND'))
  await again.cache.remember(resolved('local:other', 'github.profile', 'ipfs://other'))
  await assert.rejects(again.cache.replaceSchemaId('local:other', '12'), (err: unknown) => isHearthError(err, 'CONFLICT'))
})
