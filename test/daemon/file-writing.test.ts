// The daemon has one file-writer thread and one `syncfs` helper shell, shared by storage, ingest
// and sync (src/daemon/foundation.ts): each worker thread is an isolate of several MB while it
// runs, and a second helper would fork the daemon again on storage's first large add.
import test from 'node:test'
import assert from 'node:assert/strict'
import { readFile, readdir } from 'node:fs/promises'
import { join } from 'node:path'
import { startDaemonProcess } from '../support/daemon.js'
import { tempDir } from '../support/tmp.js'
import { createFileWriter } from '../../src/storage/file-writer.js'

async function threadCount (pid: number | 'self'): Promise<number> {
  return Number(/Threads:\s+(\d+)/.exec(await readFile(`/proc/${pid}/status`, 'utf8'))![1])
}

/** The daemon's child processes running `sh` (the syncfs helper). */
async function shellChildren (pid: number): Promise<number> {
  const children = (await readFile(`/proc/${pid}/task/${pid}/children`, 'utf8')).trim().split(/\s+/).filter((c) => c !== '')
  let shells = 0
  for (const child of children) if ((await readFile(`/proc/${child}/comm`, 'utf8').catch(() => '')).trim() === 'sh') shells++
  return shells
}

async function countFiles (dir: string): Promise<number> {
  return (await readdir(dir, { recursive: true, withFileTypes: true }).catch(() => [])).filter((e) => e.isFile()).length
}

/** How many OS threads one running file-writer thread adds in this process (its worker, and under tsx its loader's). */
async function threadsOfOneWriter (dir: string): Promise<number> {
  const writer = createFileWriter({ idleMs: 60_000 })
  const before = await threadCount('self')
  await writer.writeBlocks([{ path: join(dir, 'probe'), bytes: new Uint8Array([1]) }]) // on the thread (a create may run before it is up)
  const running = await threadCount('self') - before
  await writer.close()
  return running
}

test('a POST\'s data file and its deferred block are written by one shared writer thread, and a large add uses the one warmed syncfs helper', async (t) => {
  const perWriter = await threadsOfOneWriter(await tempDir(t))
  assert.ok(perWriter >= 1, 'a writer thread shows in /proc')
  const d = await startDaemonProcess(t)
  const pid = d.child.pid!
  assert.equal(await shellChildren(pid), 1, 'the syncfs helper is started with the daemon, before any request needs it')
  const idle = await threadCount(pid)
  const blocksBefore = await countFiles(d.home.blocks)
  for (let i = 0; i < 3; i++) {
    // over SMALL_BLOCK_MAX_BYTES: a deferred block file (a smaller one goes into LevelDB with its pin)
    const posted = await d.request({ method: 'POST', path: '/v1/data/instagram.profile', body: { username: `writer${i}`, bio: 'x'.repeat(40_000) } })
    assert.equal(posted.status, 201, JSON.stringify(posted.json))
  }
  // the journal's checkpoint writes the deferred blocks through the writer shortly after the answers
  const deadline = Date.now() + 10_000
  while (await countFiles(d.home.blocks) < blocksBefore + 3 && Date.now() < deadline) await new Promise((resolve) => setTimeout(resolve, 50))
  assert.ok(await countFiles(d.home.blocks) >= blocksBefore + 3, 'the blocks were written')
  assert.equal(await threadCount(pid) - idle, perWriter, 'data files and blocks share one writer thread')

  // a multi-block file (over 8 blocks of 256 KiB) is made durable by syncfs: through the same helper
  const large = await d.request({ method: 'POST', path: '/v1/data/instagram.profile', body: { username: 'large', bio: 'x'.repeat(3 * 1024 * 1024) } })
  assert.equal(large.status, 201, JSON.stringify(large.json))
  assert.equal(await shellChildren(pid), 1, 'storage syncs through the daemon\'s one helper')
  assert.equal(await d.stop(), 0)
})
