// A transfer cut by SIGKILL resumes where it stopped: the receiving device runs in a child
// process, is killed halfway through a large set, restarts, and finishes without fetching any
// ciphertext it had already handled.
import { test } from 'node:test'
import assert from 'node:assert/strict'
import { randomBytes } from 'node:crypto'
import { readFile } from 'node:fs/promises'
import { join } from 'node:path'
import { openDatabase } from '../../src/db/database.js'
import { openFileIndex } from '../../src/db/file-index.js'
import type { FileRecord } from '../../src/db/types.js'
import { tempDir } from '../support/tmp.js'
import { OWNER_KEY, instant, startDevice, testOwner } from '../support/sync-device.js'
import { peerCommand, spawnPeer } from '../support/sync-process.js'

const FILES = 150
const BLOB = 120 * 1024

async function heldCids (dir: string): Promise<Set<string>> {
  const db = await openDatabase(join(dir, 'index'))
  try {
    const index = await openFileIndex({ db })
    const out = new Set<string>()
    for (const r of await index.all({ limit: 10_000 })) if (r.cid !== null) out.add(r.cid)
    return out
  } finally {
    await db.close()
  }
}

test('B killed mid-transfer restarts and finishes without refetching what it has', async (t) => {
  const dir = await tempDir(t)
  const owner = await testOwner()
  const a = await startDevice({ dir: join(dir, 'a'), owner })
  t.after(async () => { await a.stop() })
  const written: FileRecord[] = []
  for (let i = 0; i < FILES; i++) {
    written.push(await a.writeLocal('instagram.profile', { username: `u${i}`, blob: randomBytes(BLOB * 3 / 4).toString('base64') }, instant(i)))
  }
  const bDir = join(dir, 'b')
  const config = { dir: bDir, ownerKey: OWNER_KEY, peers: a.addrs() }

  const first = spawnPeer(t, peerCommand(config))
  await first.until('B to hold a quarter of the files', (e) => e.event === 'count' && (e.count as number) >= FILES / 4, 120_000)
  first.child.kill('SIGKILL')
  assert.equal((await first.exited).signal, 'SIGKILL')
  const servedBeforeKill = a.gets.length

  const held = await heldCids(bDir)
  assert.ok(held.size >= FILES / 4 && held.size < FILES, `killed mid-transfer with ${held.size}/${FILES} files handled`)

  const second = spawnPeer(t, peerCommand(config))
  await second.until('B to hold every file', (e) => e.event === 'count' && e.count === FILES, 120_000)
  second.child.kill('SIGTERM')
  assert.equal((await second.exited).code, 0)

  const servedAfterRestart = a.gets.slice(servedBeforeKill)
  const refetched = servedAfterRestart.filter((cid) => held.has(cid))
  assert.deepEqual(refetched, [], 'no ciphertext B had handled before the kill crossed the wire again')
  assert.equal(new Set(a.gets).size, FILES)
  // only what was in flight when B died can be fetched twice: the default window of 64 requests
  // plus the files read but not yet received (the batch being received and the one gathering)
  assert.ok(a.gets.length <= FILES + 64 + 2 * 64, `at most one window and two batches of in-flight fetches were repeated (${a.gets.length - FILES})`)
  assert.equal(servedBeforeKill + servedAfterRestart.length, a.gets.length)

  const final = await heldCids(bDir)
  assert.equal(final.size, FILES)
  for (const r of written) {
    assert.deepEqual(await readFile(join(bDir, 'data', r.path)), await readFile(join(a.dataDir, r.path)), r.path)
  }
})
