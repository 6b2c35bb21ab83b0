// The index database after writes that failed on a full disk (src/db/torn-log.ts): LevelDB's log
// is torn by them, so what is written after must not be acknowledged before the log is rolled over
// — else a restart loses it. On a small tmpfs of its own (skipped where none can be mounted).
import { test } from 'node:test'
import assert from 'node:assert/strict'
import { unlink } from 'node:fs/promises'
import { join } from 'node:path'
import { openDatabase, type HearthDatabase, type Sublevel } from '../../src/db/database.js'
import { isHearthError } from '../../src/errors.js'
import { fill, smallDisk } from '../support/small-disk.js'

async function putSynced (db: HearthDatabase, sub: Sublevel<unknown>, key: string, value: unknown): Promise<void> {
  await db.batch([{ type: 'put', sublevel: sub, key, value }], { sync: true })
}

test('writes acknowledged after a full disk tore the log survive a restart; until space returns they fail with STORAGE_FULL and reads go on', async (t) => {
  const disk = await smallDisk(t, 24)
  if (disk === null) { t.skip('cannot mount a tmpfs here (needs root or CAP_SYS_ADMIN)'); return }
  const dir = join(disk, 'index')
  let db = await openDatabase(dir)
  let sub = db.sublevel('records')
  await putSynced(db, sub, 'before', { n: 1 })

  const filler = await fill(disk)
  const big = 'x'.repeat(48 * 1024) // larger than what the log's buffer can still take
  const refused = await putSynced(db, sub, 'full', { big }).then(() => null, (err: unknown) => err)
  assert.ok(refused !== null, 'a write on the full disk fails')
  // the log is torn: the next write is refused rather than written into it
  const again = await putSynced(db, sub, 'still-full', { n: 2 }).then(() => null, (err: unknown) => err)
  assert.ok(isHearthError(again, 'STORAGE_FULL'), `STORAGE_FULL, got ${String(again)}`)
  assert.deepEqual(await sub.get('before'), { n: 1 }, 'reads go on')

  await unlink(filler)
  await putSynced(db, sub, 'after', { n: 3 })
  for (let i = 0; i < 20; i++) await putSynced(db, sub, `later-${i}`, { i })
  await db.close()

  db = await openDatabase(dir)
  t.after(async () => { await db.close() })
  sub = db.sublevel('records')
  assert.deepEqual(await sub.get('before'), { n: 1 })
  assert.deepEqual(await sub.get('after'), { n: 3 }, 'the write acknowledged after the tear survived the restart')
  assert.deepEqual(await sub.get('later-19'), { i: 19 })
  assert.equal(await sub.get('full'), undefined)
  assert.equal(await sub.get('still-full'), undefined)
})

test('a table LevelDB could not write on the full disk left it refusing every write: once space returns the next write opens it again, its namespaces too', async (t) => {
  const disk = await smallDisk(t, 24)
  if (disk === null) { t.skip('cannot mount a tmpfs here (needs root or CAP_SYS_ADMIN)'); return }
  const dir = join(disk, 'index')
  // a small memtable: its flushes into tables come often, and fail once the disk is full
  let db = await openDatabase(dir, { writeBufferSize: 64 * 1024 })
  let sub = db.sublevel('records')
  const filler = await fill(disk, 150 * 1024)
  let stored = 0
  let refused: unknown = null
  for (let i = 0; i < 3000 && refused === null; i++) {
    await putSynced(db, sub, `k${i}`, 'y'.repeat(4000)).then(() => { stored++ }, (err: unknown) => { refused = err })
  }
  assert.ok(stored > 0 && refused !== null, `some writes stored (${stored}), then refused`)
  await unlink(filler)
  await putSynced(db, sub, 'after', { n: 1 })
  assert.equal(await sub.get('k0'), 'y'.repeat(4000), 'what was stored before is still read through the same namespace')
  await db.close()

  db = await openDatabase(dir)
  t.after(async () => { await db.close() })
  sub = db.sublevel('records')
  assert.deepEqual(await sub.get('after'), { n: 1 })
  assert.equal(await sub.get(`k${stored - 1}`), 'y'.repeat(4000), 'every write acknowledged before the disk filled')
})
