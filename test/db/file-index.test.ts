import { test, type TestContext } from 'node:test'
import assert from 'node:assert/strict'
import { openDatabase, type HearthDatabase } from '../../src/db/database.js'
import { openFileIndex, type FileIndex, type Replaced } from '../../src/db/file-index.js'
import { isHearthError } from '../../src/errors.js'
import { fileRecord } from '../support/db-fixtures.js'
import { tempDir } from '../support/tmp.js'

async function freshIndex (t: TestContext): Promise<{ index: FileIndex; db: HearthDatabase; dir: string }> {
  const dir = await tempDir(t)
  const db = await openDatabase(dir)
  t.after(async () => { await db.close() })
  return { index: await openFileIndex({ db }), db, dir }
}

const paths = (rs: Array<{ path: string }>): string[] => rs.map((r) => r.path)

test('latest and atOrBefore order by instant, with or without milliseconds', async (t) => {
  const { index } = await freshIndex(t)
  // Inserted out of order; string order of the raw values would put 10:00:00Z last of the three.
  await index.put(fileRecord('ig.profile/c.json', '2026-01-21T10:00:01Z'))
  await index.put(fileRecord('ig.profile/a.json', '2026-01-21T10:00:00Z'))
  await index.put(fileRecord('ig.profile/b.json', '2026-01-21T10:00:00.500Z'))
  await index.put(fileRecord('ig.profileX/z.json', '2030-01-01T00:00:00Z'))

  assert.equal((await index.latest('ig.profile'))?.path, 'ig.profile/c.json')
  assert.equal((await index.atOrBefore('ig.profile', '2026-01-21T10:00:00Z'))?.path, 'ig.profile/a.json')
  assert.equal((await index.atOrBefore('ig.profile', '2026-01-21T10:00:00.499Z'))?.path, 'ig.profile/a.json')
  assert.equal((await index.atOrBefore('ig.profile', '2026-01-21T10:00:00.5Z'))?.path, 'ig.profile/b.json')
  assert.equal((await index.atOrBefore('ig.profile', '2026-01-21T10:00:00.999Z'))?.path, 'ig.profile/b.json')
  assert.equal((await index.atOrBefore('ig.profile', '2026-01-21T12:00:01+02:00'))?.path, 'ig.profile/c.json')
  assert.equal((await index.atOrBefore('ig.profile', '2099-01-01T00:00:00Z'))?.path, 'ig.profile/c.json')
  assert.equal(await index.atOrBefore('ig.profile', '2026-01-21T09:59:59.999Z'), null)
  assert.equal(await index.latest('ig'), null)
  assert.equal(await index.latest('nothing.here'), null)
  await assert.rejects(index.atOrBefore('ig.profile', 'noon'), (e: unknown) => isHearthError(e, 'INVALID_ARGUMENT'))
})

test('two files with the same scope and collectedAt are both kept, ordered by path', async (t) => {
  const { index } = await freshIndex(t)
  const at = '2026-01-21T10:00:00Z'
  await index.put(fileRecord('s.x/2026-01-21T10-00-00Z-2.json', at))
  await index.put(fileRecord('s.x/2026-01-21T10-00-00Z.json', at))
  await index.put(fileRecord('s.x/2026-01-21T10-00-00Z-1.json', '2026-01-21T10:00:00.000Z'))
  assert.equal(await index.countVersions('s.x'), 3)
  assert.deepEqual(paths(await index.versions('s.x', { order: 'asc' })),
    ['s.x/2026-01-21T10-00-00Z-1.json', 's.x/2026-01-21T10-00-00Z-2.json', 's.x/2026-01-21T10-00-00Z.json'])
  assert.equal((await index.latest('s.x'))?.path, 's.x/2026-01-21T10-00-00Z.json')
  assert.equal((await index.atOrBefore('s.x', at))?.path, 's.x/2026-01-21T10-00-00Z.json')
})

test('latest and atOrBefore can skip versions that are not in the wanted states', async (t) => {
  const { index } = await freshIndex(t)
  await index.put(fileRecord('s.x/1.json', '2026-01-01T00:00:00Z', { state: 'registered', fileId: '5' }))
  await index.put(fileRecord('s.x/2.json', '2026-01-02T00:00:00Z'))
  for (let i = 0; i < 100; i++) {
    await index.put(fileRecord(`s.x/r${i}.json`, `2026-02-01T00:00:${String(i % 60).padStart(2, '0')}Z`, { state: 'rejected', reasons: ['bad'] }))
  }
  assert.equal((await index.latest('s.x'))?.state, 'rejected')
  assert.equal((await index.latest('s.x', { states: ['stored', 'registered'] }))?.path, 's.x/2.json')
  assert.equal((await index.latest('s.x', { states: ['registered'] }))?.path, 's.x/1.json')
  assert.equal(await index.latest('s.x', { states: ['waiting-schema'] }), null)
  assert.equal((await index.atOrBefore('s.x', '2026-01-01T12:00:00Z', { states: ['stored'] })), null)
  assert.equal((await index.atOrBefore('s.x', '2026-03-01T00:00:00Z', { states: ['stored'] }))?.path, 's.x/2.json')
})

test('versions: paging in both orders, and countVersions', async (t) => {
  const { index } = await freshIndex(t)
  const all = Array.from({ length: 25 }, (_, i) => fileRecord(`v.s/${String(i).padStart(2, '0')}.json`, `2026-01-01T00:00:${String(i).padStart(2, '0')}.${i % 2 === 0 ? '5' : '05'}Z`))
  await index.putMany([...all].reverse())
  assert.equal(await index.countVersions('v.s'), 25)
  assert.equal(await index.countVersions('v.t'), 0)
  const asc = paths(all)
  assert.deepEqual(paths(await index.versions('v.s', { order: 'asc', limit: 10 })), asc.slice(0, 10))
  assert.deepEqual(paths(await index.versions('v.s', { order: 'asc', limit: 10, offset: 20 })), asc.slice(20))
  assert.deepEqual(paths(await index.versions('v.s', { limit: 3 })), asc.slice(-3).reverse())
  assert.deepEqual(paths(await index.versions('v.s', { order: 'desc', limit: 5, offset: 5 })), asc.slice(15, 20).reverse())
  assert.deepEqual(await index.versions('v.s', { limit: 0 }), [])
  assert.deepEqual(await index.versions('v.s', { offset: 100 }), [])
  assert.equal((await index.versions('v.s', { limit: 1000 })).length, 25)
  await assert.rejects(index.versions('v.s', { limit: -1 }), (e: unknown) => isHearthError(e, 'INVALID_ARGUMENT'))
  await assert.rejects(index.versions('v.s', { offset: 1.5 }), (e: unknown) => isHearthError(e, 'INVALID_ARGUMENT'))
})

test('scopes: prefix listing with counts, latest and paging, kept up to date by writes', async (t) => {
  const { index } = await freshIndex(t)
  await index.putMany([
    fileRecord('instagram.profile/1.json', '2026-01-01T00:00:00Z'),
    fileRecord('instagram.profile/2.json', '2026-01-03T00:00:00Z'),
    fileRecord('instagram.posts/1.json', '2026-01-02T00:00:00.250Z'),
    fileRecord('instagramx.a/1.json', '2026-01-02T00:00:00Z'),
    fileRecord('spotify.savedTracks/1.json', '2026-01-05T00:00:00Z'),
    fileRecord('spotify.savedTracks/garbage.json', null, { state: 'rejected', reasons: ['not JSON'] })
  ])
  assert.deepEqual(await index.scopes(), [
    { scope: 'instagram.posts', count: 1, latestCollectedAt: '2026-01-02T00:00:00.250Z' },
    { scope: 'instagram.profile', count: 2, latestCollectedAt: '2026-01-03T00:00:00Z' },
    { scope: 'instagramx.a', count: 1, latestCollectedAt: '2026-01-02T00:00:00Z' },
    { scope: 'spotify.savedTracks', count: 1, latestCollectedAt: '2026-01-05T00:00:00Z' }
  ])
  assert.deepEqual((await index.scopes({ prefix: 'instagram.' })).map((s) => s.scope), ['instagram.posts', 'instagram.profile'])
  assert.deepEqual((await index.scopes({ prefix: 'instagram', limit: 2, offset: 1 })).map((s) => s.scope), ['instagram.profile', 'instagramx.a'])
  assert.deepEqual(await index.scopes({ prefix: 'zzz' }), [])

  // Deleting the latest version moves the summary to the next one; deleting the last drops the scope.
  assert.equal(await index.delete('instagram.profile/2.json'), true)
  assert.deepEqual((await index.scopes({ prefix: 'instagram.profile' }))[0], { scope: 'instagram.profile', count: 1, latestCollectedAt: '2026-01-01T00:00:00Z' })
  await index.delete('instagram.posts/1.json')
  assert.deepEqual((await index.scopes({ prefix: 'instagram.' })).map((s) => s.scope), ['instagram.profile'])
  // Moving a record to another scope moves it between summaries.
  await index.put(fileRecord('instagram.profile/1.json', '2026-01-01T00:00:00Z', { scope: 'instagram.moved' }))
  assert.deepEqual((await index.scopes({ prefix: 'instagram.' })), [{ scope: 'instagram.moved', count: 1, latestCollectedAt: '2026-01-01T00:00:00Z' }])
  assert.equal((await index.verify()).ok, true)
})

test('byCid, byFileId and byState follow the record through its states', async (t) => {
  const { index } = await freshIndex(t)
  const r = fileRecord('s.x/a.json', '2026-01-01T00:00:00Z', { state: 'waiting-schema', cid: null })
  await index.put(r)
  assert.deepEqual(paths(await index.byState('waiting-schema')), ['s.x/a.json'])
  await index.put({ ...r, state: 'stored', cid: 'bafyA' })
  assert.deepEqual(await index.byState('waiting-schema'), [])
  assert.deepEqual(paths(await index.byCid('bafyA')), ['s.x/a.json'])
  assert.equal(await index.byFileId('12'), null)
  await index.put({ ...r, state: 'registered', cid: 'bafyA', fileId: '12' })
  assert.equal((await index.byFileId('12'))?.path, 's.x/a.json')
  assert.equal((await index.byFileId('1'))?.path, undefined)
  assert.deepEqual(paths(await index.byState('registered')), ['s.x/a.json'])
  assert.deepEqual(await index.byState('stored'), [])
  // The same ciphertext indexed under two paths is found under both.
  await index.put(fileRecord('s.x/b.json', '2026-01-02T00:00:00Z', { cid: 'bafyA' }))
  assert.deepEqual(paths(await index.byCid('bafyA')), ['s.x/a.json', 's.x/b.json'])
  assert.deepEqual(await index.byCid('bafyAB'), [])
  await index.delete('s.x/a.json')
  assert.equal(await index.byFileId('12'), null)
  assert.deepEqual(paths(await index.byCid('bafyA')), ['s.x/b.json'])
  await assert.rejects(index.byState('gone' as never), (e: unknown) => isHearthError(e, 'INVALID_ARGUMENT'))
})

test('byState and all page by path', async (t) => {
  const { index } = await freshIndex(t)
  const rs = Array.from({ length: 23 }, (_, i) => fileRecord(`p.q/${String(i).padStart(3, '0')}.json`, null, { state: i % 2 === 0 ? 'rejected' : 'stored', reasons: i % 2 === 0 ? [`reason ${i}`] : undefined }))
  await index.putMany(rs)
  const walk = async (page: (after?: string) => Promise<Array<{ path: string }>>): Promise<string[]> => {
    const out: string[] = []
    let after: string | undefined
    for (;;) {
      const got = await page(after)
      if (got.length === 0) return out
      out.push(...paths(got))
      after = got[got.length - 1].path
    }
  }
  const rejected = await walk(async (after) => await index.byState('rejected', { limit: 5, after }))
  assert.deepEqual(rejected, paths(rs.filter((r) => r.state === 'rejected')))
  assert.deepEqual((await index.byState('rejected', { limit: 1 }))[0].reasons, ['reason 0'])
  assert.deepEqual(await walk(async (after) => await index.all({ limit: 4, after })), paths(rs))
  // Records without collectedAt are not versions but are counted and listed by state.
  assert.equal(await index.countVersions('p.q'), 0)
  assert.deepEqual(await index.scopes(), [])
})

test('counters follow inserts, state changes and deletes, and survive a reopen', async (t) => {
  const { index, db, dir } = await freshIndex(t)
  await index.putMany(Array.from({ length: 10 }, (_, i) => fileRecord(`c.d/${i}.json`, '2026-01-01T00:00:00Z')))
  await index.put(fileRecord('c.d/w.json', null, { state: 'waiting-schema' }))
  await index.put(fileRecord('c.d/3.json', '2026-01-01T00:00:00Z', { state: 'registered', fileId: '3' }))
  await index.put(fileRecord('c.d/4.json', '2026-01-01T00:00:00Z', { state: 'rejected', reasons: ['x'] }))
  assert.equal(await index.delete('c.d/5.json'), true)
  assert.equal(await index.delete('c.d/5.json'), false)
  assert.equal(await index.deleteMany(['c.d/6.json', 'c.d/7.json', 'c.d/none.json']), 2)
  const expected = { 'waiting-schema': 1, 'waiting-storage': 0, rejected: 1, stored: 5, registered: 1, deleted: 0 }
  assert.deepEqual(await index.countsByState(), expected)
  assert.equal(await index.count(), 8)
  await db.close()

  const db2 = await openDatabase(dir)
  t.after(async () => { await db2.close() })
  const again = await openFileIndex({ db: db2 })
  assert.deepEqual(await again.countsByState(), expected)
  const check = await again.verify()
  assert.equal(check.ok, true, check.problems.join('\n'))
  assert.deepEqual(check.counts, expected)
})

test('changesSince: strictly increasing seqs, one entry per path, tombstones, across reopen', async (t) => {
  const { index, db, dir } = await freshIndex(t)
  assert.equal(await index.currentSeq(), 0)
  const a = await index.put(fileRecord('s.x/a.json', '2026-01-01T00:00:00Z'))
  assert.equal(a.seq, 1)
  await index.put(fileRecord('s.x/b.json', '2026-01-02T00:00:00Z'))
  await index.put(fileRecord('s.x/c.json', '2026-01-03T00:00:00Z'))
  // An identical put is not a change.
  assert.equal((await index.put(fileRecord('s.x/a.json', '2026-01-01T00:00:00Z'))).seq, 1)
  assert.equal(await index.currentSeq(), 3)
  // Updating a moves it to the end of the log; deleting b leaves a tombstone.
  await index.put(fileRecord('s.x/a.json', '2026-01-01T00:00:00Z', { state: 'registered', fileId: '1' }))
  await index.delete('s.x/b.json')
  const changes = await index.changesSince(0)
  assert.deepEqual(changes.map((c) => [c.seq, c.path, c.deleted]), [[3, 's.x/c.json', false], [4, 's.x/a.json', false], [5, 's.x/b.json', true]])
  assert.equal(changes[1].record?.fileId, '1')
  assert.deepEqual(changes[2], { seq: 5, path: 's.x/b.json', deleted: true, record: null, cid: fileRecord('s.x/b.json', null).cid, scope: 's.x' })
  assert.deepEqual((await index.changesSince(3)).map((c) => c.seq), [4, 5])
  assert.deepEqual((await index.changesSince(0, 1)).map((c) => c.seq), [3])
  assert.deepEqual(await index.changesSince(5), [])
  await assert.rejects(index.changesSince(-1), (e: unknown) => isHearthError(e, 'INVALID_ARGUMENT'))
  await db.close()

  const db2 = await openDatabase(dir)
  t.after(async () => { await db2.close() })
  const again = await openFileIndex({ db: db2 })
  assert.equal(await again.currentSeq(), 5)
  // Re-adding a deleted path replaces its tombstone; seqs keep growing after the reopen.
  const b = await again.put(fileRecord('s.x/b.json', '2026-01-02T00:00:00Z'))
  assert.equal(b.seq, 6)
  assert.deepEqual((await again.changesSince(0)).map((c) => [c.seq, c.path, c.deleted]), [[3, 's.x/c.json', false], [4, 's.x/a.json', false], [6, 's.x/b.json', false]])
  const check = await again.verify()
  assert.equal(check.ok, true, check.problems.join('\n'))
  assert.equal(check.tombstones, 0)
})

test('revert undoes a write: the earlier record back, or no record and no tombstone; the other writes of its batch with it', async (t) => {
  const { index, db } = await freshIndex(t)
  const journal = db.sublevel<string>('other')
  await journal.put('entry', 'x')
  const earlier = fileRecord('s.x/a.json', '2026-01-01T00:00:00Z', { state: 'rejected', cid: null })
  await index.put(earlier)
  const seq = await index.currentSeq()
  await index.put(fileRecord('s.x/a.json', '2026-01-01T00:00:00Z', { origin: 'peer' }))
  await index.put(fileRecord('s.x/b.json', '2026-01-02T00:00:00Z', { origin: 'peer' }))
  await index.revert('s.x/a.json', earlier)
  await index.revert('s.x/b.json', null, { also: [{ type: 'del', sublevel: journal, key: 'entry' }] })
  const { seq: _seq, ...back } = (await index.get('s.x/a.json'))!
  assert.deepEqual(back, earlier)
  assert.equal(await index.get('s.x/b.json'), null)
  assert.equal(await journal.get('entry'), undefined, 'the other write went with it')
  assert.deepEqual((await index.changesSince(seq)).map((c) => [c.path, c.deleted]), [['s.x/a.json', false]], 'no tombstone of b')
  assert.equal(await index.count(), 1)
  assert.deepEqual(paths(await index.byCid(fileRecord('s.x/b.json', null).cid!)), [])
  assert.equal((await index.scopes())[0]?.count, 1)
  const check = await index.verify()
  assert.equal(check.ok, true, check.problems.join('\n'))
  assert.equal(check.tombstones, 0)
  await assert.rejects(index.revert('s.x/a.json', fileRecord('s.x/c.json', null)), (e: unknown) => isHearthError(e, 'INVALID_ARGUMENT'))
})

test('revert of a write over a deleted path leaves the tombstone of that deletion again (what derive was told it replaces)', async (t) => {
  const { index } = await freshIndex(t)
  const deleted = fileRecord('s.x/a.json', '2026-01-01T00:00:00Z')
  await index.put(deleted)
  await index.delete('s.x/a.json')
  const seq = await index.currentSeq()
  let replaced: Replaced | null = null
  await index.putDerived('s.x/a.json', (_current, r) => { replaced = r; return { record: fileRecord('s.x/a.json', '2026-01-02T00:00:00Z', { origin: 'peer', cid: 'bafkreipeer' }) } })
  assert.deepEqual(replaced, { record: null, tombstone: { cid: deleted.cid, scope: 's.x' } })
  await index.revert('s.x/a.json', replaced)
  assert.equal(await index.get('s.x/a.json'), null)
  // a peer that saw the reverted write, or not even the deletion, is told of the deletion again
  assert.deepEqual((await index.changesSince(seq)).map((c) => [c.path, c.deleted, c.deleted ? c.cid : null]), [['s.x/a.json', true, deleted.cid]])
  assert.deepEqual((await index.changesSince(0)).map((c) => [c.path, c.deleted]), [['s.x/a.json', true]])
  assert.equal(await index.count(), 0)
  const check = await index.verify()
  assert.equal(check.ok, true, check.problems.join('\n'))
  assert.equal(check.tombstones, 1)
  // a path that had neither is left with neither, as before
  let none: Replaced | null = null
  await index.putDerived('s.x/b.json', (_current, r) => { none = r; return { record: fileRecord('s.x/b.json', null) } })
  assert.deepEqual(none, { record: null, tombstone: null })
  await index.revert('s.x/b.json', none)
  assert.equal((await index.verify()).tombstones, 1)
  // a deletion and a write of the same path committed in one batch (queued behind another write)
  await index.put(fileRecord('s.x/c.json', '2026-01-03T00:00:00Z'))
  let sameBatch: Replaced | null = null
  const busy = index.put(fileRecord('s.x/d.json', '2026-01-04T00:00:00Z'))
  const deleting = index.delete('s.x/c.json')
  const writing = index.putDerived('s.x/c.json', (_current, r) => { sameBatch = r; return { record: fileRecord('s.x/c.json', '2026-01-05T00:00:00Z', { cid: 'bafkreiother' }) } })
  await Promise.all([busy, deleting, writing])
  assert.deepEqual(sameBatch, { record: null, tombstone: { cid: fileRecord('s.x/c.json', null).cid, scope: 's.x' } })
})

test('putMany: later entries for a path win, all in one atomic step', async (t) => {
  const { index } = await freshIndex(t)
  await index.putMany([
    fileRecord('m.n/a.json', '2026-01-01T00:00:00Z'),
    fileRecord('m.n/a.json', '2026-01-05T00:00:00Z', { state: 'registered', fileId: '9' }),
    fileRecord('m.n/b.json', '2026-01-02T00:00:00Z')
  ])
  assert.equal((await index.get('m.n/a.json'))?.collectedAt, '2026-01-05T00:00:00Z')
  assert.equal(await index.countVersions('m.n'), 2)
  assert.equal((await index.latest('m.n'))?.path, 'm.n/a.json')
  assert.deepEqual((await index.changesSince(0)).map((c) => [c.seq, c.path]), [[2, 'm.n/a.json'], [3, 'm.n/b.json']])
  // A bad record anywhere in the batch rejects the whole batch.
  await assert.rejects(index.putMany([fileRecord('m.n/c.json', '2026-01-01T00:00:00Z'), fileRecord('m.n/d.json', 'then')]),
    (e: unknown) => isHearthError(e, 'INVALID_ARGUMENT'))
  assert.equal(await index.get('m.n/c.json'), null)
  assert.equal(await index.count(), 2)
  assert.equal((await index.verify()).ok, true)
})

test('concurrent puts, updates and deletes of different paths keep every index consistent', async (t) => {
  const { index } = await freshIndex(t)
  const n = 300
  const at = (i: number): string => `2026-01-01T00:${String(Math.floor(i / 60) % 60).padStart(2, '0')}:${String(i % 60).padStart(2, '0')}.${String(i % 7)}Z`
  await Promise.all(Array.from({ length: n }, async (_, i) => await index.put(fileRecord(`k.l${i % 3}/${i}.json`, at(i)))))
  await Promise.all(Array.from({ length: n }, async (_, i) => {
    if (i % 5 === 0) return await index.delete(`k.l${i % 3}/${i}.json`)
    if (i % 5 === 1) return await index.put(fileRecord(`k.l${i % 3}/${i}.json`, at(i), { state: 'registered', fileId: String(i) }))
    return await index.put(fileRecord(`k.l${i % 3}/${i}.json`, at(i)))
  }))
  const check = await index.verify()
  assert.equal(check.ok, true, check.problems.join('\n'))
  assert.deepEqual(check.counts, { 'waiting-schema': 0, 'waiting-storage': 0, rejected: 0, stored: 180, registered: 60, deleted: 0 })
  assert.equal(await index.currentSeq(), n + 120)
  const seqs = (await index.changesSince(0, 10_000)).map((c) => c.seq)
  assert.equal(seqs.length, n)
  assert.ok(seqs.every((s, i) => i === 0 || s > seqs[i - 1]))
  assert.equal((await index.scopes()).reduce((sum, s) => sum + s.count, 0), 240)
})

test('bad input is a typed error and changes nothing', async (t) => {
  const { index } = await freshIndex(t)
  await index.put(fileRecord('g.h/ok.json', '2026-01-01T00:00:00Z'))
  for (const bad of [
    fileRecord('g.h/x.json', '2026-01-01'),
    { ...fileRecord('g.h/x.json', null), state: 'unknown' },
    { ...fileRecord('g.h/x.json', null), path: 'a\u0000b' },
    { ...fileRecord('g.h/x.json', null), scope: '' }
  ]) {
    await assert.rejects(index.put(bad as never), (e: unknown) => isHearthError(e, 'INVALID_ARGUMENT'))
  }
  assert.equal(await index.get(''), null)
  assert.equal(await index.count(), 1)
  assert.equal(await index.currentSeq(), 1)
  assert.equal((await index.verify()).ok, true)
})

test('verify finds damage to indexes and counters; rebuild repairs it', async (t) => {
  const { index, db } = await freshIndex(t)
  await index.putMany(Array.from({ length: 40 }, (_, i) => fileRecord(`r.s${i % 4}/${i}.json`, `2026-01-01T00:00:${String(i).padStart(2, '0')}Z`, i % 3 === 0 ? { state: 'registered', fileId: String(i) } : {})))
  await index.delete('r.s0/0.json')
  assert.equal((await index.verify()).ok, true)

  // Damage the namespaces behind the index's back, as a bug or a bad disk could.
  const raw = (sub: string, enc: 'json' | 'utf8' = 'json') => db.sublevel<unknown>(['files', sub], { valueEncoding: enc })
  const scopeKeys = await raw('scope', 'utf8').keys({ limit: 1 }).all()
  await raw('scope', 'utf8').del(scopeKeys[0])
  await raw('state', 'utf8').put('stored\u0000r.s9/ghost.json', '')
  await raw('meta').put('count:stored', 999)
  await raw('sum').put('r.s1', { count: 1, latestCollectedAt: '2026-01-01T00:00:00Z', latestPath: 'r.s1/1.json' })
  await raw('log').put('0000000000000999', { path: 'r.s1/1.json' })
  await raw('cid', 'utf8').put('bafkstray\u0000r.s1/1.json', '')
  const lost = await index.get('r.s2/2.json')
  await raw('log').del(String(lost?.seq).padStart(16, '0'))

  const broken = await index.verify()
  assert.equal(broken.ok, false)
  const text = broken.problems.join('\n')
  for (const expected of ['scope index lacks', 'state index has a stray entry', 'cid index has a stray entry', 'counter stored is 999',
    'summary counts 1', 'change log lacks', 'change log seq 999 is past the counter', 'stale change log entry 999']) {
    assert.ok(text.includes(expected), `${expected} in:\n${text}`)
  }

  const seqBefore = await index.currentSeq()
  const fixed = await index.rebuild()
  assert.equal(fixed.ok, true, fixed.problems.join('\n'))
  assert.equal(fixed.records, 39)
  assert.equal(await index.countVersions('r.s1'), 10)
  assert.equal((await index.countsByState()).stored, fixed.counts.stored)
  // The record whose log entry was lost is announced again under a new seq.
  const after = await index.changesSince(seqBefore)
  assert.deepEqual(after.map((c) => c.path), ['r.s2/2.json'])
  assert.ok(after[0].seq > seqBefore)
})

test('each walks every record, or every record in a state, a page at a time', async (t) => {
  const { index } = await freshIndex(t)
  const rs = Array.from({ length: 23 }, (_, i) => fileRecord(`p.q/${String(i).padStart(3, '0')}.json`, null, { state: i % 3 === 0 ? 'rejected' : 'stored', reasons: i % 3 === 0 ? ['bad'] : undefined }))
  await index.putMany(rs)
  const collect = async (it: AsyncIterable<{ path: string }>): Promise<string[]> => { const out: string[] = []; for await (const r of it) out.push(r.path); return out }
  assert.deepEqual(await collect(index.each({ pageSize: 4 })), paths(rs))
  assert.deepEqual(await collect(index.each()), paths(rs))
  assert.deepEqual(await collect(index.each({ state: 'rejected', pageSize: 2 })), paths(rs.filter((r) => r.state === 'rejected')))
  assert.deepEqual(await collect(index.each({ state: 'registered' })), [])
  assert.deepEqual(await collect(index.each({ pageSize: 0 })), [])
  // stopping early is fine, and a record written past the page already read is still seen
  const seen: string[] = []
  for await (const r of index.each({ pageSize: 5 })) {
    seen.push(r.path)
    if (seen.length === 3) await index.put(fileRecord('p.q/zzz.json', null))
    if (seen.length === 30) break
  }
  assert.equal(seen.length, 24)
  assert.equal(seen.at(-1), 'p.q/zzz.json')
  await assert.rejects(collect(index.each({ pageSize: -1 })), (e: unknown) => isHearthError(e, 'INVALID_ARGUMENT'))
})

test('putDerived makes the record from the current one inside the write, with its archived copy in the same batch; a failing derive fails only its own caller', async (t) => {
  const { index } = await freshIndex(t)
  const at = '2026-01-21T10:00:00Z'
  const old = fileRecord('s.x/a.json', at, { origin: 'peer' })
  await index.put(old)
  const seen: Array<string | null> = []
  const derive = (path: string, cid: string) => (current: ReturnType<typeof fileRecord> | null) => {
    seen.push(current?.cid ?? null)
    const record = fileRecord(path, at, { cid, origin: current?.origin ?? 'local' })
    return current === null ? { record } : { record, archived: { ...current, path: `${current.path}#${current.cid}` } }
  }
  const fresh = index.putDerived('s.x/b.json', derive('s.x/b.json', 'bafkfresh'))
  const [again, failed, elsewhere] = await Promise.allSettled([
    index.putDerived('s.x/a.json', derive('s.x/a.json', 'bafknew')),
    index.putDerived('s.x/c.json', () => { throw new Error('no record for you') }),
    index.putDerived('s.x/d.json', () => ({ record: fileRecord('s.x/e.json', at) }))
  ])
  assert.equal((await fresh).cid, 'bafkfresh')
  assert.equal(again.status, 'fulfilled')
  assert.equal(again.status === 'fulfilled' && again.value.origin, 'peer', 'made from the current record')
  assert.equal(failed.status, 'rejected')
  assert.equal(elsewhere.status, 'rejected', 'a record for another path is refused')
  assert.deepEqual(seen.sort(), [null, old.cid].sort())
  assert.equal((await index.get(`s.x/a.json#${old.cid!}`))?.cid, old.cid, 'the archived copy')
  assert.equal(await index.get('s.x/c.json'), null)
  assert.deepEqual(paths(await index.versions('s.x', { order: 'asc' })), ['s.x/a.json', `s.x/a.json#${old.cid!}`, 's.x/b.json'])
  assert.equal((await index.verify()).ok, true)
})

test('scope summaries kept from one batch to the next (no read of them) stay what a fresh read gives, through deletes, a rebuild and a reopen', async (t) => {
  const { index, db } = await freshIndex(t)
  const at = (s: number): string => `2026-01-21T10:00:${String(s).padStart(2, '0')}Z`
  for (let i = 0; i < 6; i++) await index.put(fileRecord(`a.x/${i}.json`, at(i)))
  await index.put(fileRecord('b.x/0.json', at(30)))
  await index.delete('a.x/5.json')
  await index.delete('b.x/0.json')
  assert.equal(await index.countVersions('a.x'), 5)
  assert.equal(await index.countVersions('b.x'), 0)
  assert.equal((await index.latest('a.x'))?.path, 'a.x/4.json', 'the summary moved back to the newest left')
  await index.rebuild()
  await index.put(fileRecord('a.x/9.json', at(9)))
  await index.put(fileRecord('b.x/1.json', at(1)))
  assert.equal((await index.verify()).ok, true)
  const again = await openFileIndex({ db })
  assert.deepEqual(await again.scopes(), await index.scopes())
  assert.deepEqual((await index.scopes()).map((s) => [s.scope, s.count, s.latestCollectedAt]), [['a.x', 6, at(9)], ['b.x', 1, at(1)]])
})
