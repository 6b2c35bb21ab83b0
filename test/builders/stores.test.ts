// The builder stores on a real LevelDB: access requests, grants, the replay cache and the
// access log (paging by time, filters, retention), including across a reopen.
import { test } from 'node:test'
import assert from 'node:assert/strict'
import { openDatabase, type HearthDatabase, type ValueEncoding } from '../../src/db/database.js'
import { isHearthError } from '../../src/errors.js'
import { openAccessRequests } from '../../src/builders/access-requests.js'
import { openAccessLog, type NewAccessLogEntry } from '../../src/builders/access-log.js'
import { openGrantStore } from '../../src/builders/grant-store.js'
import { openReplayCache } from '../../src/builders/replay-cache.js'
import { openBuilderRegistry } from '../../src/builders/builder-registry.js'
import type { GrantRecord } from '../../src/builders/types.js'
import { tempDir } from '../support/tmp.js'

const A = '0x70997970C51812dc3A010C7d01b50e0d17dc79C8' as const
const B = '0x3C44CdDdB6a900fa2b585dd299e03d12FA4293BC' as const

test('access requests: bounded pending per builder, newest first, decided once', async (t) => {
  const db = await openDatabase(await tempDir(t))
  t.after(async () => { await db.close() })
  const store = openAccessRequests(db)
  const input = { builder: A, scopes: ['a.b'], expiresAt: 0, appUrl: null, purpose: 'test' }
  const first = await store.create(input, { maxPendingPerBuilder: 2 })
  const second = await store.create(input, { maxPendingPerBuilder: 2 })
  await assert.rejects(store.create(input, { maxPendingPerBuilder: 2 }), (e: unknown) => isHearthError(e, 'ACCESS_REQUEST_LIMIT'))
  await store.create({ ...input, builder: B }, { maxPendingPerBuilder: 2 })
  assert.deepEqual((await store.list({ status: 'pending' })).map((r) => r.builder), [B, A, A])
  const denied = await store.decide(first.id, 'denied', null)
  assert.equal(denied.status, 'denied')
  await assert.rejects(store.decide(first.id, 'approved', 'grant_x'), (e: unknown) => isHearthError(e, 'CONFLICT'))
  await assert.rejects(store.decide('req_nope', 'denied', null), (e: unknown) => isHearthError(e, 'NOT_FOUND'))
  await store.create(input, { maxPendingPerBuilder: 2 }) // a slot was freed
  assert.equal((await store.list({ status: 'denied' }))[0]?.id, first.id)
  assert.equal((await store.get(second.id))?.status, 'pending')
  const page = await store.list({ limit: 2 })
  assert.equal(page.length, 2)
  assert.equal((await store.list({ limit: 10, before: page[1]!.id })).length, 2)
})

test('grants: lookups by id, permission id and builder; read counts survive a reopen', async (t) => {
  const dir = await tempDir(t)
  let db = await openDatabase(dir)
  let grants = openGrantStore(db)
  const g: GrantRecord = {
    grantId: 'grant_00000000000000000001', requestId: null, builder: A, scopes: ['a.*'], expiresAt: 0, grant: '{}', nonce: '0', granteeId: '1',
    signature: '0x00', domain: 'local', createdAt: new Date().toISOString(), revokedAt: null, permissionId: null, chain: 'local', chainError: null
  }
  await grants.put(g)
  await grants.update(g.grantId, (r) => ({ ...r, permissionId: '7', chain: 'on-chain' }))
  assert.equal((await grants.byPermissionId('7'))?.grantId, g.grantId)
  assert.equal((await grants.byBuilder(A.toLowerCase())).length, 1)
  assert.deepEqual(await grants.byBuilder(B), [])
  const ops = await Promise.all([grants.readOp(g.grantId), grants.readOp(g.grantId), grants.readOp(g.grantId)])
  for (const op of ops) await db.batch([op])
  assert.equal(await grants.reads(g.grantId), 3)
  await db.close()
  db = await openDatabase(dir)
  t.after(async () => { await db.close() })
  grants = openGrantStore(db)
  assert.equal(await grants.reads(g.grantId), 3)
  assert.equal((await grants.get(g.grantId))?.chain, 'on-chain')
  const registry = openBuilderRegistry(db)
  await registry.put({ address: A.toLowerCase() as typeof A, publicKey: 'pk', appUrl: null, owner: B, registeredAt: '', granteeId: null })
  await registry.setGranteeId(A, '4')
  assert.equal((await registry.get(A))?.granteeId, '4')
  assert.equal((await registry.get(A))?.address, A)
})

test('grants: concurrent reads of a grant whose count LevelDB loads out of order are counted in the order asked, so the batch committed last holds every read and a reopen keeps them', async (t) => {
  const dir = await tempDir(t)
  const real = await openDatabase(dir)
  // LevelDB answers reads from a thread pool, in whatever order its threads finish (a loaded
  // machine, the Node 22 run of issue 29): here the first load of the count answers last
  let loads = 0
  const db: HearthDatabase = {
    ...real,
    sublevel<V> (name: string | string[], opts?: { valueEncoding?: ValueEncoding }) {
      const sub = real.sublevel<V>(name, opts)
      if (String(name) !== 'builders,grant-reads') return sub
      const get = sub.get.bind(sub)
      return Object.assign(sub, {
        async get (key: string) {
          const value = await get(key)
          if (loads++ === 0) await new Promise((resolve) => setTimeout(resolve, 100))
          return value
        }
      }) as typeof sub
    }
  }
  const grants = openGrantStore(db)
  const id = 'grant_00000000000000000002'
  const ops = await Promise.all([grants.readOp(id), grants.readOp(id), grants.readOp(id)])
  assert.deepEqual(ops.map((op) => op.type === 'put' ? op.value : null), [1, 2, 3], 'in the order asked')
  for (const op of ops) await real.batch([op]) // in that order, as the access log commits them
  await real.close()
  const reopened = await openDatabase(dir)
  t.after(async () => { await reopened.close() })
  assert.equal(await openGrantStore(reopened).reads(id), 3)
})

test('the replay cache refuses a request key until it expires, also after a reopen', async (t) => {
  const dir = await tempDir(t)
  let db = await openDatabase(dir)
  let cache = openReplayCache(db)
  const exp = Date.now() + 60_000
  assert.equal(cache.claim('0xab', exp), true)
  assert.equal(cache.claim('0xab', exp), false)
  assert.equal(cache.claim('0xold', Date.now() - 1), true)
  await db.batch([cache.persistOp('0xab', exp), cache.persistOp('0xold', Date.now() - 1)])
  await db.close()
  db = await openDatabase(dir)
  t.after(async () => { await db.close() })
  cache = openReplayCache(db)
  await cache.load()
  assert.equal(cache.claim('0xab', exp), false)
  assert.equal(cache.claim('0xold', exp), true)
  await cache.prune(exp + 1)
  assert.equal(cache.size, 0)
})

test('the access log pages by time and cursor, filters by builder and scope, and drops whole days', async (t) => {
  const db = await openDatabase(await tempDir(t))
  t.after(async () => { await db.close() })
  const log = openAccessLog(db)
  const entry = (over: Partial<NewAccessLogEntry>): NewAccessLogEntry => ({ builder: A, grantId: 'g', scope: 'a.b', action: 'read', status: 200, errorCode: null, bytes: 10, ip: '127.0.0.1', userAgent: null, ...over })
  const written = []
  for (let i = 0; i < 25; i++) written.push(await log.append(entry({ builder: i % 2 === 0 ? A : B, scope: i % 3 === 0 ? 'c.d' : 'a.b', bytes: i })))
  // ids are unique and in append order
  assert.deepEqual(written.map((e) => e.logId), [...written.map((e) => e.logId)].sort())
  assert.equal(new Set(written.map((e) => e.logId)).size, 25)

  const all: number[] = []
  let cursor: string | undefined
  for (;;) {
    const page = await log.query({ limit: 7, ...(cursor !== undefined ? { cursor } : {}) })
    all.push(...page.entries.map((e) => e.bytes))
    if (page.next === null) break
    cursor = page.next
  }
  assert.deepEqual(all, [...Array(25).keys()])
  const desc = await log.query({ order: 'desc', limit: 3 })
  assert.deepEqual(desc.entries.map((e) => e.bytes), [24, 23, 22])
  assert.deepEqual((await log.query({ order: 'desc', limit: 3, cursor: desc.next! })).entries.map((e) => e.bytes), [21, 20, 19])

  const ofA = await log.query({ builder: A.toLowerCase(), limit: 100 })
  assert.deepEqual(ofA.entries.map((e) => e.bytes), [0, 2, 4, 6, 8, 10, 12, 14, 16, 18, 20, 22, 24])
  const aOnCD = await log.query({ builder: A, scope: 'c.d', limit: 2 })
  assert.deepEqual(aOnCD.entries.map((e) => e.bytes), [0, 6])
  assert.deepEqual((await log.query({ builder: A, scope: 'c.d', limit: 10, cursor: aOnCD.next! })).entries.map((e) => e.bytes), [12, 18, 24])
  assert.deepEqual((await log.query({ scope: 'c.d', order: 'desc', limit: 2 })).entries.map((e) => e.bytes), [24, 21])

  const since = Date.parse(written[10]!.at)
  const fromTen = await log.query({ since, limit: 100 })
  assert.ok(fromTen.entries.every((e) => Date.parse(e.at) >= since))
  assert.ok(fromTen.entries.some((e) => e.bytes === 10))
  assert.deepEqual((await log.query({ since: Date.now() + 86_400_000 })).entries, [])

  assert.equal(await log.prune(Date.now() - 86_400_000), 0)
  assert.equal(await log.prune(Date.now() + 2 * 86_400_000), 25)
  assert.deepEqual((await log.query({ builder: A })).entries, [])
})
