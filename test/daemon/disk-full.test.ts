// Issue 12, item 6: a full disk. The home (and the daemon's log file) live on a small tmpfs that
// the test fills; without the right to mount one the test is skipped, saying why.
import { test } from 'node:test'
import assert from 'node:assert/strict'
import { readdir, unlink } from 'node:fs/promises'
import { join } from 'node:path'
import { startDaemonProcess } from '../support/daemon.js'
import { waitFor } from '../support/data-files.js'
import { fill, smallDisk } from '../support/small-disk.js'
import { openDatabase } from '../../src/db/database.js'
import { openFileIndex } from '../../src/db/file-index.js'

test('disk full: POSTs answer 507 STORAGE_FULL, no temp is left, the log on the full disk does not freeze the daemon, and all works again once space returns', async (t) => {
  const disk = await smallDisk(t, 48)
  if (disk === null) { t.skip('cannot mount a tmpfs here (needs root or CAP_SYS_ADMIN)'); return }
  const home = join(disk, 'home')
  const log = join(disk, 'daemon.log')
  let d = await startDaemonProcess(t, { home, stderrFile: process.env.HEARTH_DEBUG_LOG ?? log, env: { HEARTH_LOG_LEVEL: 'debug' } })
  const first = await d.request({ method: 'POST', path: '/v1/data/instagram.profile', body: { username: 'before' } })
  assert.equal(first.status, 201, first.body.toString())

  const filler = await fill(disk)
  for (let i = 0; i < 5; i++) {
    const full = await d.request({ method: 'POST', path: '/v1/data/instagram.profile', body: { username: `full${i}`, bio: 'x'.repeat(2000) } })
    assert.equal(full.status, 507, full.body.toString())
    assert.equal(full.json.error.errorCode, 'STORAGE_FULL')
  }
  assert.deepEqual((await readdir(join(home, 'data', 'instagram.profile'))).filter((n) => n.endsWith('.tmp')), [])
  // every request above logged at debug into the full disk; the daemon still answers at once
  const started = Date.now()
  assert.equal((await d.request({ path: '/health' })).status, 200)
  assert.ok(Date.now() - started < 5_000)

  await unlink(filler)
  const after = await waitFor('a POST stored after space returned', async () => {
    const r = await d.request({ method: 'POST', path: '/v1/data/instagram.profile', body: { username: 'after' } })
    return r.status === 201 ? r : null
  }, 30_000)
  assert.equal(after.json.status, 'stored')
  const versions = (await d.request({ path: '/v1/data/instagram.profile/versions' })).json.versions
  assert.deepEqual(versions.map((v: any) => v.state), ['stored', 'stored'])
  assert.equal((await d.request({ path: '/v1/data/instagram.profile' })).json.data.username, 'after')
  await d.stop()
  // what was acknowledged is in the index itself, not only restored by the next start's scan of
  // the data folder (LevelDB's log, torn by the failed writes, once lost the POST after them)
  const db = await openDatabase(join(home, 'index'))
  const recorded = (await (await openFileIndex({ db })).versions('instagram.profile')).map((v) => v.path)
  await db.close()
  assert.deepEqual(recorded, versions.map((v: any) => v.path))

  // a start on a full disk says what is wrong
  const again = await fill(disk)
  await assert.rejects(startDaemonProcess(t, { home, timeoutMs: 60_000 }), /STORAGE_FULL.*(disk is full|no space left)/is)
  await unlink(again)
  d = await startDaemonProcess(t, { home })
  assert.equal((await d.request({ path: '/v1/data/instagram.profile' })).json.data.username, 'after')
})
