// Large files between two real daemons on loopback: multi-block ciphertexts arrive with the same
// CIDs and decrypt to identical data files, decrypted on the receiver's worker thread (its sync
// status counts the jobs), next to small files received the usual way; a restart keeps them all.
import { test } from 'node:test'
import assert from 'node:assert/strict'
import { randomBytes } from 'node:crypto'
import { readFile } from 'node:fs/promises'
import { join } from 'node:path'
import { generatePrivateKey } from 'viem/accounts'
import { startDaemonProcess } from '../support/daemon.js'
import { waitFor } from '../support/data-files.js'
import { identityHome, SYNC_ENV, syncAddress, allVersions, postAll } from '../support/sync-daemons.js'

test('multi-MB files sync decrypted on the receiver\'s worker, identical, and survive its restart', async (t) => {
  const key = generatePrivateKey()
  const a = await startDaemonProcess(t, { home: await identityHome(t, key), env: SYNC_ENV })
  const large = Array.from({ length: 3 }, (_, i) => ({ username: `big${i}`, bio: randomBytes(1_200_000 + i * 300_000).toString('base64') }))
  const small = Array.from({ length: 20 }, (_, i) => ({ username: `small${i}` }))
  await postAll(a, 'instagram.profile', [...large, ...small], 4)
  const onA = await allVersions(a, 'instagram.profile')
  assert.equal(onA.length, 23)

  const bHome = await identityHome(t, key)
  let b = await startDaemonProcess(t, { home: bHome, env: SYNC_ENV, args: ['--set', `sync.peers=["${syncAddress(a)}"]`] })
  const onB = await waitFor('23 files on B', async () => {
    const v = await allVersions(b, 'instagram.profile')
    return v.length === 23 ? v : null
  }, 180_000)
  assert.deepEqual(onB.map((v) => v.url).sort(), onA.map((v) => v.url).sort(), 'the same ciphertexts (CIDs)')
  for (const v of onB) {
    const original = onA.find((x) => x.url === v.url)
    assert.deepEqual(await readFile(join(b.home.data, v.path)), await readFile(join(a.home.data, original.path)), `${v.path} decrypted identically`)
  }
  const workers = (await b.request({ path: '/v1/peers' })).json.decryptionWorkers
  assert.ok(workers.finished >= 3, `the three large files were decrypted on the worker: ${JSON.stringify(workers)}`)
  assert.equal(workers.failed, 0)

  await b.stop()
  b = await startDaemonProcess(t, { home: bHome, env: SYNC_ENV })
  const again = await allVersions(b, 'instagram.profile')
  assert.deepEqual(again.map((v) => v.url).sort(), onA.map((v) => v.url).sort(), 'all 23 still there after a restart')
})
