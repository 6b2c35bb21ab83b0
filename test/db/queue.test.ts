import { test } from 'node:test'
import assert from 'node:assert/strict'
import { openDatabase } from '../../src/db/database.js'
import { createDurableQueue } from '../../src/db/queue.js'
import { isHearthError } from '../../src/errors.js'
import { tempDir } from '../support/tmp.js'

interface Job { path: string }

test('enqueue is idempotent per key; due lists oldest first; ack removes', async (t) => {
  const db = await openDatabase(await tempDir(t))
  t.after(async () => { await db.close() })
  const q = createDurableQueue<Job>(db, 'registrations')
  await q.enqueue('c', { path: 'c' })
  await q.enqueue('a', { path: 'a' })
  await q.enqueue('b', { path: 'b' })
  await q.enqueue('a', { path: 'second a' })
  assert.equal(await q.size(), 3)
  const now = Date.now() + 1
  assert.deepEqual((await q.due(10, now)).map((e) => e.key), ['c', 'a', 'b'])
  assert.deepEqual((await q.due(2, now)).map((e) => e.key), ['c', 'a'])
  assert.deepEqual(await q.due(0, now), [])
  assert.deepEqual((await q.get('a'))?.item, { path: 'a' })
  const entry = await q.get('b')
  assert.deepEqual(Object.keys(entry ?? {}).sort(), ['attempts', 'item', 'key', 'notBefore'])
  await q.ack('a')
  await q.ack('a')
  assert.equal(await q.get('a'), null)
  assert.equal(await q.size(), 2)
  // Not due before it was enqueued.
  assert.deepEqual(await q.due(10, 0), [])
})

test('enqueueMany queues in order in one batch, keeping entries already queued and the first of repeated keys', async (t) => {
  const db = await openDatabase(await tempDir(t))
  t.after(async () => { await db.close() })
  const q = createDurableQueue<Job>(db, 'pins')
  await q.enqueue('b', { path: 'b first' })
  await q.enqueueMany([{ key: 'c', item: { path: 'c' } }, { key: 'b', item: { path: 'b again' } }, { key: 'a', item: { path: 'a' } }, { key: 'c', item: { path: 'c again' } }])
  await q.enqueueMany([])
  assert.equal(await q.size(), 3)
  assert.deepEqual((await q.due(10, Date.now() + 1)).map((e) => [e.key, e.item.path]), [['b', 'b first'], ['c', 'c'], ['a', 'a']])
  await q.enqueue('d', { path: 'd' })
  assert.deepEqual((await q.due(10, Date.now() + 1)).map((e) => e.key), ['b', 'c', 'a', 'd'])
  await assert.rejects(q.enqueueMany([{ key: 'e', item: { path: 'e' } }, { key: '', item: { path: 'bad' } }]), (err) => isHearthError(err) && err.code === 'INVALID_ARGUMENT')
  assert.equal(await q.get('e'), null, 'a refused batch queues nothing')
})

test('retryLater delays an entry, counts attempts and keeps the error; order is notBefore then enqueue order', async (t) => {
  const db = await openDatabase(await tempDir(t))
  t.after(async () => { await db.close() })
  const q = createDurableQueue<Job>(db, 'upstream')
  for (const k of ['one', 'two', 'three']) await q.enqueue(k, { path: k })
  const start = Date.now()
  await q.retryLater('one', 60_000, 'chain unreachable')
  await q.retryLater('two', 60_000, 'chain unreachable')
  await q.retryLater('ghost', 10, 'nothing')
  const one = await q.get('one')
  assert.equal(one?.attempts, 1)
  assert.equal(one?.lastError, 'chain unreachable')
  assert.ok((one?.notBefore ?? 0) >= start + 60_000)
  assert.deepEqual((await q.due(10)).map((e) => e.key), ['three'])
  const later = start + 120_000
  assert.deepEqual((await q.due(10, later)).map((e) => e.key), ['three', 'one', 'two'])
  // A later notBefore sorts later whatever the enqueue order: 'one' now waits longer than 'two'.
  await q.retryLater('one', 90_000, 'again')
  assert.equal((await q.get('one'))?.attempts, 2)
  assert.deepEqual((await q.due(10, later)).map((e) => e.key), ['three', 'two', 'one'])
  assert.deepEqual((await q.due(10, start + 75_000)).map((e) => e.key), ['three', 'two'])
  assert.equal(await q.size(), 3)
  await assert.rejects(q.retryLater('one', -5, 'x'), (e: unknown) => isHearthError(e, 'INVALID_ARGUMENT'))
  await assert.rejects(q.due(-1), (e: unknown) => isHearthError(e, 'INVALID_ARGUMENT'))
  await assert.rejects(q.enqueue('', { path: '' }), (e: unknown) => isHearthError(e, 'INVALID_ARGUMENT'))
})

test('a queue survives reopen, and queues with different names are separate', async (t) => {
  const dir = await tempDir(t)
  let db = await openDatabase(dir)
  const q = createDurableQueue<Job>(db, 'registrations')
  const other = createDurableQueue<string>(db, 'schemas')
  await q.enqueue('x', { path: 'x' })
  await q.enqueue('y', { path: 'y' })
  await q.retryLater('x', 1000, 'offline')
  await other.enqueue('x', 'schema job')
  await db.close()

  db = await openDatabase(dir)
  t.after(async () => { await db.close() })
  const q2 = createDurableQueue<Job>(db, 'registrations')
  const other2 = createDurableQueue<string>(db, 'schemas')
  assert.equal(await q2.size(), 2)
  assert.equal(await other2.size(), 1)
  assert.equal((await other2.get('x'))?.item, 'schema job')
  const x = await q2.get('x')
  assert.equal(x?.attempts, 1)
  assert.equal(x?.lastError, 'offline')
  assert.deepEqual((await q2.due(10, (x?.notBefore ?? 0) + 1)).map((e) => e.key), ['y', 'x'])
  // A new entry is due now, so before the delayed 'x'.
  await q2.enqueue('z', { path: 'z' })
  assert.deepEqual((await q2.due(10, (x?.notBefore ?? 0) + 1)).map((e) => e.key), ['y', 'z', 'x'])
  assert.equal(await q2.size(), 3)
  assert.throws(() => createDurableQueue(db, 'bad name!'), (e: unknown) => isHearthError(e, 'INVALID_ARGUMENT'))
})

test('concurrent enqueues and acks keep size exact', async (t) => {
  const db = await openDatabase(await tempDir(t))
  t.after(async () => { await db.close() })
  const q = createDurableQueue<number>(db, 'burst')
  await Promise.all(Array.from({ length: 200 }, async (_, i) => await q.enqueue(`k${i % 150}`, i)))
  assert.equal(await q.size(), 150)
  await Promise.all(Array.from({ length: 100 }, async (_, i) => await q.ack(`k${i}`)))
  assert.equal(await q.size(), 50)
  const due = await q.due(1000, Date.now() + 1)
  assert.equal(due.length, 50)
  assert.deepEqual(new Set(due.map((e) => e.key)), new Set(Array.from({ length: 50 }, (_, i) => `k${i + 100}`)))
})
