// Issue 12, item 6: a full disk. The home (and the daemon's log file) live on a small tmpfs that
// the test fills; without the right to mount one the test is skipped, saying why.
import { test, type TestContext } from 'node:test'
import assert from 'node:assert/strict'
import { execFileSync } from 'node:child_process'
import { mkdtemp, open, readdir, rm, unlink } from 'node:fs/promises'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { startDaemonProcess } from '../support/daemon.js'
import { waitFor } from '../support/data-files.js'

async function smallDisk (t: TestContext, megabytes: number): Promise<string | null> {
  const dir = await mkdtemp(join(tmpdir(), 'hearth-disk-'))
  try {
    execFileSync('mount', ['-t', 'tmpfs', '-o', `size=${megabytes}m,mode=0700`, 'tmpfs', dir], { stdio: 'ignore' })
  } catch {
    await rm(dir, { recursive: true, force: true })
    return null
  }
  t.after(async () => {
    execFileSync('umount', ['-l', dir], { stdio: 'ignore' })
    await rm(dir, { recursive: true, force: true })
  })
  return dir
}

/** Writes a filler file until the disk refuses; returns its path. */
async function fill (dir: string): Promise<string> {
  const path = join(dir, 'filler')
  const fh = await open(path, 'a')
  const chunk = Buffer.alloc(64 * 1024)
  try {
    for (;;) await fh.write(chunk)
  } catch (err) {
    if ((err as NodeJS.ErrnoException).code !== 'ENOSPC') throw err
  }
  // the last partial chunk
  try { for (;;) await fh.write(Buffer.alloc(512)) } catch {}
  try { for (;;) await fh.write(Buffer.alloc(1)) } catch {}
  await fh.close()
  return path
}

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

  // a start on a full disk says what is wrong
  const again = await fill(disk)
  await assert.rejects(startDaemonProcess(t, { home, timeoutMs: 60_000 }), /STORAGE_FULL.*(disk is full|no space left)/is)
  await unlink(again)
  d = await startDaemonProcess(t, { home })
  assert.equal((await d.request({ path: '/v1/data/instagram.profile' })).json.data.username, 'after')
})
