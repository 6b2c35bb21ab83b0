import { test } from 'node:test'
import assert from 'node:assert/strict'
import { openDatabase, openKv } from '../../src/db/database.js'
import { isHearthError, toErrorBody, unwrapHearthError } from '../../src/errors.js'
import { garbleTableData } from '../support/garble-index.js'
import { tempDir } from '../support/tmp.js'

test('kv namespaces are separate, typed and persistent across reopen', async (t) => {
  const dir = await tempDir(t)
  let db = await openDatabase(dir)
  const schemas = openKv<{ id: number }>(db, 'schemas')
  const cursors = openKv<number>(db, 'cursors')
  await schemas.put('a', { id: 1 })
  await cursors.put('a', 42)
  assert.deepEqual(await schemas.get('a'), { id: 1 })
  assert.equal(await cursors.get('a'), 42)
  assert.equal(await schemas.get('missing'), undefined)
  await db.close()

  db = await openDatabase(dir)
  t.after(async () => { await db.close() })
  assert.deepEqual(await openKv(db, 'schemas').get('a'), { id: 1 })
  assert.equal(await openKv(db, 'cursors').get('a'), 42)
  await openKv(db, 'cursors').del('a')
  assert.equal(await openKv(db, 'cursors').get('a'), undefined)
  await assert.rejects(openKv(db, 'x').put('k', undefined), (e: unknown) => isHearthError(e, 'INVALID_ARGUMENT'))
})

test('kv entries: prefix, limit, reverse, key order', async (t) => {
  const db = await openDatabase(await tempDir(t))
  t.after(async () => { await db.close() })
  const kv = openKv<string>(db, 'peers')
  for (const k of ['peer:b', 'peer:a', 'peer:c', 'peerx', 'other', 'peer:é']) await kv.put(k, k.toUpperCase())
  const collect = async (o?: Parameters<typeof kv.entries>[0]): Promise<string[]> => {
    const out: string[] = []
    for await (const [k] of kv.entries(o)) out.push(k)
    return out
  }
  assert.deepEqual(await collect(), ['other', 'peer:a', 'peer:b', 'peer:c', 'peer:é', 'peerx'])
  assert.deepEqual(await collect({ prefix: 'peer:' }), ['peer:a', 'peer:b', 'peer:c', 'peer:é'])
  assert.deepEqual(await collect({ prefix: 'peer:', limit: 2 }), ['peer:a', 'peer:b'])
  assert.deepEqual(await collect({ prefix: 'peer:', reverse: true, limit: 2 }), ['peer:é', 'peer:c'])
  for await (const [k, v] of kv.entries({ prefix: 'peer:a' })) assert.equal(v, k.toUpperCase())
})

test('sublevels: a batch across namespaces is atomic, and names are checked', async (t) => {
  const db = await openDatabase(await tempDir(t))
  t.after(async () => { await db.close() })
  const a = db.sublevel<{ n: number }>('alpha')
  const b = db.sublevel<string>(['beta', 'inner'], { valueEncoding: 'utf8' })
  await db.batch([
    { type: 'put', sublevel: a, key: 'k', value: { n: 1 } },
    { type: 'put', sublevel: b, key: 'k', value: 'text' }
  ])
  assert.deepEqual(await a.get('k'), { n: 1 })
  assert.equal(await b.get('k'), 'text')
  assert.equal(await db.sublevel('beta').get('k'), undefined)
  // A value the JSON encoding cannot take fails the whole batch, leaving both namespaces alone.
  const cyclic: Record<string, unknown> = {}
  cyclic.self = cyclic
  await assert.rejects(db.batch([
    { type: 'del', sublevel: b, key: 'k' },
    { type: 'put', sublevel: a, key: 'k', value: cyclic }
  ]))
  assert.equal(await b.get('k'), 'text')
  for (const bad of ['', 'has space', 'a!b', '\u00e9']) {
    assert.throws(() => db.sublevel(bad), (e: unknown) => isHearthError(e, 'INVALID_ARGUMENT'), bad)
  }
})

test('a second open of the same database is refused with DAEMON_LOCKED', async (t) => {
  const dir = await tempDir(t)
  const db = await openDatabase(dir)
  t.after(async () => { await db.close() })
  await assert.rejects(openDatabase(dir), (e: unknown) => isHearthError(e, 'DAEMON_LOCKED'))
})

test('a table garbled while the database is open: reads that meet it fail with INDEX_CORRUPT naming hearth doctor, the damage is remembered, the rest still works', async (t) => {
  const dir = await tempDir(t)
  let db = await openDatabase(dir)
  const kv = openKv<{ n: number; pad: string }>(db, 'things')
  for (let i = 0; i < 3000; i++) await kv.put(`k${String(i).padStart(5, '0')}`, { n: i, pad: 'x'.repeat(40) })
  await db.close()
  // reopening turns the log into a table file
  db = await openDatabase(dir)
  t.after(async () => { await db.close() })
  assert.equal(db.damage(), null)
  assert.ok(await garbleTableData(dir) >= 1)

  const things = openKv<{ n: number }>(db, 'things')
  const failures: unknown[] = []
  for (let i = 0; i < 3000; i += 100) {
    try { await things.get(`k${String(i).padStart(5, '0')}`) } catch (err) { failures.push(err) }
  }
  try { for await (const _ of things.entries()) { /* read through */ } } catch (err) { failures.push(err) }
  assert.ok(failures.length > 0, 'the garbled blocks were read')
  for (const err of failures) {
    assert.ok(isHearthError(err, 'INDEX_CORRUPT'), String(err))
    assert.equal(err.status, 503)
    assert.match(err.message, /hearth doctor/)
  }
  const damage = db.damage()
  assert.equal(damage?.errorCode, 'INDEX_CORRUPT')
  assert.match(damage!.message, /Corruption/)
  // what the damage does not touch: new writes and their reads
  const fresh = openKv<number>(db, 'fresh')
  await fresh.put('a', 1)
  assert.equal(await fresh.get('a'), 1)
})

test('a stored value that no longer parses is INDEX_CORRUPT too, on get and on iteration', async (t) => {
  const db = await openDatabase(await tempDir(t))
  t.after(async () => { await db.close() })
  await db.sublevel<string>(['kv', 'things'], { valueEncoding: 'utf8' }).put('bad', '{"n": 1, garbled')
  const things = openKv<unknown>(db, 'things')
  const asCode = (err: unknown): string | undefined => { const e = unwrapHearthError(err); return isHearthError(e) ? e.code : undefined }
  await assert.rejects(things.get('bad'), (err: unknown) => asCode(err) === 'INDEX_CORRUPT' && toErrorBody(err).error.code === 503)
  await assert.rejects((async () => { for await (const _ of things.entries()) { /* read through */ } })(), (err: unknown) => asCode(err) === 'INDEX_CORRUPT')
  assert.match(db.damage()?.message ?? '', /not JSON/)
})

test('getMany (and getManySync, answered on the thread) reads keys of several sublevels in one call: each value decoded by its own sublevel, undefined where absent; byte-valued sublevels refused; a value that no longer parses is INDEX_CORRUPT', async (t) => {
  const db = await openDatabase(await tempDir(t))
  t.after(async () => { await db.close() })
  const json = db.sublevel<{ n: number }>('alpha')
  const nested = db.sublevel<{ deep: boolean }>(['beta', 'inner'])
  const text = db.sublevel<string>('gamma', { valueEncoding: 'utf8' })
  const bytes = db.sublevel<Uint8Array>('delta', { valueEncoding: 'view' })
  await db.batch([
    { type: 'put', sublevel: json, key: 'k', value: { n: 1 } },
    { type: 'put', sublevel: json, key: 'k2', value: { n: 2 } },
    { type: 'put', sublevel: nested, key: 'k', value: { deep: true } },
    { type: 'put', sublevel: text, key: 'k', value: '{"n": 3}' },
    { type: 'put', sublevel: bytes, key: 'k', value: Uint8Array.of(1, 2, 3) }
  ])
  const reads = [
    { sublevel: json, key: 'k' },
    { sublevel: text, key: 'k' },
    { sublevel: nested, key: 'k' },
    { sublevel: json, key: 'missing' },
    { sublevel: db.sublevel('beta'), key: 'k' },
    { sublevel: json, key: 'k2' },
    { sublevel: json, key: 'k' }
  ]
  const expected = [{ n: 1 }, '{"n": 3}', { deep: true }, undefined, undefined, { n: 2 }, { n: 1 }]
  assert.deepEqual(await db.getMany([]), [])
  assert.deepEqual(db.getManySync([]), [])
  assert.deepEqual(await db.getMany(reads), expected, 'JSON and text values side by side, in the order asked, a nested namespace apart from its parent')
  assert.deepEqual(db.getManySync(reads), expected, 'the same answered on the thread')
  // the root reads text: a namespace of bytes is refused, alone or among text ones, before anything is read
  for (const reads of [[{ sublevel: bytes, key: 'k' }], [{ sublevel: json, key: 'k' }, { sublevel: bytes, key: 'k' }]]) {
    await assert.rejects(db.getMany(reads), (err: unknown) => isHearthError(err, 'INVALID_ARGUMENT'))
    assert.throws(() => db.getManySync(reads), (err: unknown) => isHearthError(err, 'INVALID_ARGUMENT'))
  }
  assert.deepEqual([...(await bytes.get('k'))!], [1, 2, 3], 'read on its own')
  // a stored value that no longer parses fails the whole read as damage
  await db.sublevel<string>('alpha', { valueEncoding: 'utf8' }).put('bad', '{"n": 1, garbled')
  await assert.rejects(db.getMany([{ sublevel: json, key: 'k' }, { sublevel: json, key: 'bad' }]), (err: unknown) => isHearthError(unwrapHearthError(err), 'INDEX_CORRUPT'))
  assert.throws(() => db.getManySync([{ sublevel: json, key: 'bad' }]), (err: unknown) => isHearthError(unwrapHearthError(err), 'INDEX_CORRUPT'))
  assert.match(db.damage()?.message ?? '', /not JSON/)
})

test('a read that meets the database closed (the daemon stopping, or it opened again after a failed write) answers 503 STORAGE_UNAVAILABLE, not 500', async (t) => {
  const db = await openDatabase(await tempDir(t))
  const kv = openKv<number>(db, 'things')
  await kv.put('a', 1)
  const iterator = kv.entries()[Symbol.asyncIterator]()
  await db.close()
  for (const read of [kv.get('a'), iterator.next()]) {
    await assert.rejects(read, (err: unknown) => {
      const body = toErrorBody(err).error
      return body.code === 503 && body.errorCode === 'STORAGE_UNAVAILABLE'
    })
  }
})
