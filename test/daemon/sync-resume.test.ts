// Batched receive between real daemons survives a SIGKILL of the receiver in the middle of a
// batch: after a restart on the same home it finishes the set, every file exactly once (no second
// copy under a suffixed name, one index record per ciphertext), byte for byte the sender's, its
// ciphertext stored.
import { test } from 'node:test'
import assert from 'node:assert/strict'
import { readFile, readdir } from 'node:fs/promises'
import { join } from 'node:path'
import { generatePrivateKey } from 'viem/accounts'
import { startDaemonProcess, type DaemonProcess } from '../support/daemon.js'
import { waitFor } from '../support/data-files.js'
import { SYNC_ENV, identityHome, syncAddress } from '../support/sync-daemons.js'
const FILES = 600
const SCOPE = 'instagram.profile'

async function versions (d: DaemonProcess): Promise<any[]> {
  const r = await d.request({ path: `/v1/data/${SCOPE}/versions?limit=1000` })
  return r.status === 200 ? r.json.versions : []
}

async function storedCount (d: DaemonProcess): Promise<number> {
  const counts = (await d.request({ path: '/v1/status' })).json.files.counts
  return (counts.stored ?? 0) + (counts.registered ?? 0)
}

test('a receiver killed mid-batch restarts and finishes the set without duplicates', async (t) => {
  const key = generatePrivateKey()
  const home = async (): Promise<string> => await identityHome(t, key)
  const a = await startDaemonProcess(t, { home: await home(), env: SYNC_ENV })
  let next = 0
  await Promise.all(Array.from({ length: 8 }, async () => {
    while (next < FILES) {
      const i = next++
      const r = await a.request({ method: 'POST', path: `/v1/data/${SCOPE}`, body: { username: `k${i}`, bio: 'x'.repeat(900) } })
      assert.equal(r.status, 201, r.body.toString())
    }
  }))
  const bHome = await home()
  const args = ['--set', `sync.peers=["${syncAddress(a)}"]`]
  const first = await startDaemonProcess(t, { home: bHome, env: SYNC_ENV, args })
  // killed as soon as the first files are indexed: batches are being received then
  const deadline = Date.now() + 120_000
  let held = 0
  while (held === 0 && Date.now() < deadline) {
    held = await storedCount(first)
    if (held === 0) await new Promise((resolve) => setTimeout(resolve, 5))
  }
  await first.kill('SIGKILL')
  assert.ok(held > 0 && held < FILES, `killed mid-transfer (${held} of ${FILES} indexed)`)

  const second = await startDaemonProcess(t, { home: bHome, env: SYNC_ENV, args })
  await waitFor('B to hold every file', async () => (await storedCount(second)) === FILES, 180_000)
  await new Promise((resolve) => setTimeout(resolve, 500))
  const onB = await versions(second)
  const onA = await versions(a)
  assert.equal(onB.length, FILES, 'one record per file')
  assert.deepEqual(onB.map((v) => v.url).sort(), onA.map((v) => v.url).sort(), 'the same ciphertexts, each once')
  const names = (await readdir(join(bHome, 'data', SCOPE))).filter((n) => !n.startsWith('.'))
  assert.equal(names.length, FILES, 'no second copy of any file in the data folder')
  for (const v of onB) {
    const original = onA.find((x) => x.url === v.url)
    assert.deepEqual(await readFile(join(bHome, 'data', v.path)), await readFile(join(a.home.data, original.path)), v.path)
    // its ciphertext is stored on B too (kept in memory until a checkpoint when received: the journal's replay wrote those the kill lost)
    const cid = String(v.url).replace(/^ipfs:\/\//, '')
    const [mine, theirs] = await Promise.all([second.request({ path: `/v1/storage/${cid}` }), a.request({ path: `/v1/storage/${cid}` })])
    assert.equal(mine.status, 200, `${v.path}: ${mine.body.toString()}`)
    assert.deepEqual(mine.body, theirs.body, v.path)
  }
  await second.stop()
  await a.stop()
})
