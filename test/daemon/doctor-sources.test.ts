// `hearth doctor` brings lost ciphertexts back from the owner's other devices (issue 24, item 7):
// two real daemons of one owner synced on loopback; the second, stopped, loses the blocks and the
// plaintext of files of both origins, and doctor fetches them under the same CIDs from the first
// (running) device over a short-lived sync node of its own. With the first device stopped, doctor
// lists each file as unrepairable, saying the device could not be reached, and exits 1.
import { test } from 'node:test'
import assert from 'node:assert/strict'
import { randomBytes } from 'node:crypto'
import { unlink } from 'node:fs/promises'
import { join } from 'node:path'
import { CID } from 'multiformats/cid'
import { generatePrivateKey } from 'viem/accounts'
import { readStoredBlock, removeStoredBlock } from '../support/stored-blocks.js'
import { startDaemonProcess, runCli } from '../support/daemon.js'
import { waitFor } from '../support/data-files.js'
import { identityHome, SYNC_ENV, syncAddress, allVersions } from '../support/sync-daemons.js'

const cidOf = (v: { url: string }): string => v.url.slice('ipfs://'.length)

test('hearth doctor fetches lost ciphertexts whose plaintext is gone from the owner\'s running device, under the same CIDs; with that device offline it says so and exits 1', async (t) => {
  const key = generatePrivateKey()
  const a = await startDaemonProcess(t, { home: await identityHome(t, key), env: SYNC_ENV })
  const b = await startDaemonProcess(t, { home: await identityHome(t, key), env: SYNC_ENV })
  const aPeer = syncAddress(a).split('/p2p/')[1]!
  const added = await runCli(b.home, ['peers', 'add', syncAddress(a)])
  assert.equal(added.code, 0, added.stderr)
  // small ciphertexts (kept in LevelDB) and one over 32 KiB (a block file of its own), written on A and on B
  for (const username of ['small-a', `big-${randomBytes(24_000).toString('hex')}`]) {
    assert.equal((await a.request({ method: 'POST', path: '/v1/data/instagram.profile', body: { username } })).status, 201)
  }
  assert.equal((await b.request({ method: 'POST', path: '/v1/data/github.profile', body: { login: 'from-b', id: 7, created_at: '2020-01-01T00:00:00Z' } })).status, 201)
  await waitFor('both devices hold all three files', async () =>
    (await allVersions(b, 'instagram.profile')).length === 2 && (await allVersions(a, 'github.profile')).length === 1, 120_000)
  const lost = [...await allVersions(b, 'instagram.profile'), ...await allVersions(b, 'github.profile')]
  assert.equal(await b.stop(), 0)

  const loseAll = async (): Promise<void> => {
    for (const v of lost) {
      await removeStoredBlock(b.home, CID.parse(cidOf(v)))
      await unlink(join(b.home.data, v.path)).catch(() => {})
    }
  }
  await loseAll()
  const doctor = await runCli(b.home, ['doctor'], undefined, SYNC_ENV)
  assert.equal(doctor.code, 0, doctor.stdout + doctor.stderr)
  assert.match(doctor.stdout, /devices: asking 1 known device\(s\) of this owner/)
  assert.match(doctor.stdout, /3 checked, 3 stored again, 0 unrepairable/)
  for (const v of lost) {
    assert.ok(doctor.stdout.includes(`restored ${String(v.path)}: ${cidOf(v)} fetched again from device ${aPeer}`), doctor.stdout)
    const stored = await readStoredBlock(b.home, CID.parse(cidOf(v)))
    assert.ok(stored !== null, `${String(v.path)} stored again`)
  }
  const served = (await a.request({ path: '/v1/peers' })).json.stats
  assert.ok(served.fetchesServed >= 3, `A served ${String(served.fetchesServed)} fetches`)
  assert.equal(JSON.parse((await runCli(b.home, ['doctor', '--json'], undefined, SYNC_ENV)).stdout).restored.length, 0, 'nothing left to repair')

  // the device offline: every file is listed with what the device answered
  assert.equal(await a.stop(), 0)
  await loseAll()
  const offline = await runCli(b.home, ['doctor'], undefined, SYNC_ENV)
  assert.equal(offline.code, 1, offline.stdout)
  assert.match(offline.stdout, /3 checked, 0 stored again, 3 unrepairable/)
  assert.match(offline.stderr, /error STORAGE_NOT_FOUND: 3 stored version\(s\) cannot be repaired: .*no device or gateway had it/)
  for (const v of lost) {
    const line = offline.stdout.split('\n').find((l) => l.startsWith(`  unrepairable ${String(v.path)} (${cidOf(v)}): the ciphertext is missing`))
    assert.ok(line !== undefined, offline.stdout)
    assert.match(line, new RegExp(`device ${aPeer}: STORAGE_UNAVAILABLE`))
    assert.match(line, /no gateway is configured in restore\.gateways/)
  }
  // and with sync off, doctor asks no device and says why
  const syncOff = await runCli(b.home, ['doctor', '--json'])
  assert.equal(syncOff.code, 1)
  for (const u of JSON.parse(syncOff.stdout).unrepairable) assert.match(u.reason, /no device was asked: sync\.enabled is false/)
})
