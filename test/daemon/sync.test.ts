// Device sync between real daemons on loopback, same owner, on one local chain: files flow both
// ways and converge, only the writer registers, another owner learns nothing; files travel along
// a line of devices without looping. (A fresh device restoring from the chain: restore-chain.test.ts.)
import { test } from 'node:test'
import assert from 'node:assert/strict'
import { readFile } from 'node:fs/promises'
import { join } from 'node:path'
import { generatePrivateKey } from 'viem/accounts'
import { startDaemonProcess, runCli } from '../support/daemon.js'
import { startTestChain, testChainClient } from '../support/anvil.js'
import { waitFor } from '../support/data-files.js'
import { chainArgs, ownerHome } from '../support/chain-daemon.js'
import { identityHome, SYNC_ENV, syncAddress, allVersions, postAll } from '../support/sync-daemons.js'

test('two daemons of one owner converge; only the writer registers; another owner cannot connect', async (t) => {
  const chain = await startTestChain(t)
  const client = testChainClient(chain)
  const key = generatePrivateKey()
  const a = await startDaemonProcess(t, { home: await ownerHome(t, key, chain), env: SYNC_ENV, args: chainArgs(chain) })
  const b = await startDaemonProcess(t, { home: await ownerHome(t, key, chain), env: SYNC_ENV, args: [...chainArgs(chain), '--set', `sync.peers=["${syncAddress(a)}"]`] })

  await postAll(a, 'instagram.profile', Array.from({ length: 500 }, (_, i) => ({ username: `a${i}` })))
  const onB = await waitFor('500 files on B', async () => {
    const v = await allVersions(b, 'instagram.profile')
    return v.length === 500 ? v : null
  }, 180_000)
  const onA = await allVersions(a, 'instagram.profile')
  assert.deepEqual(onB.map((v) => v.url).sort(), onA.map((v) => v.url).sort(), 'the same ciphertexts')
  assert.ok(onB.every((v) => v.origin === 'peer'))
  for (const v of onB.slice(0, 20)) {
    const original = onA.find((x) => x.url === v.url)
    assert.deepEqual(await readFile(join(b.home.data, v.path)), await readFile(join(a.home.data, original.path)), 'decrypted identically')
  }

  // writes on both sides at once converge
  await Promise.all([
    postAll(a, 'github.profile', Array.from({ length: 20 }, (_, i) => ({ login: `a${i}`, id: i + 1, created_at: '2020-01-01T00:00:00Z' }))),
    postAll(b, 'github.profile', Array.from({ length: 20 }, (_, i) => ({ login: `b${i}`, id: 100 + i, created_at: '2020-01-01T00:00:00Z' })))
  ])
  await waitFor('40 github files on both', async () => (await allVersions(a, 'github.profile')).length === 40 && (await allVersions(b, 'github.profile')).length === 40, 120_000)

  // every file is registered once, by the device that wrote it
  await waitFor('all 540 registered on chain', async () => Number(await client.filesCount()) >= 540, 120_000)
  await new Promise((r) => setTimeout(r, 2000))
  assert.equal(Number(await client.filesCount()), 540, 'B registered nothing twice')
  const peers = await runCli(b.home, ['peers', '--json'])
  assert.equal(peers.code, 0, peers.stderr)
  assert.ok(JSON.parse(peers.stdout).peers.some((p: any) => p.connected === true))

  // a daemon of another owner cannot connect to A, and learns nothing
  const other = await startDaemonProcess(t, { home: await ownerHome(t, generatePrivateKey(), chain), env: SYNC_ENV, args: [...chainArgs(chain), '--set', `sync.peers=["${syncAddress(a)}"]`] })
  await new Promise((r) => setTimeout(r, 5000))
  const otherPeers = (await other.request({ path: '/v1/peers' })).json
  assert.ok(otherPeers.peers.every((p: any) => p.connected !== true), JSON.stringify(otherPeers.peers))
  assert.deepEqual((await other.request({ path: '/v1/data' })).json.scopes, [])

  // a deletion on A propagates to B as a tombstone
  assert.equal((await a.request({ method: 'DELETE', path: '/v1/data/github.profile' })).status, 200)
  await waitFor('deletion on B', async () => (await allVersions(b, 'github.profile')).length === 0, 60_000)
})

test('three daemons in a line A-B-C: C gets A\'s files through B, and nothing loops', async (t) => {
  const key = generatePrivateKey()
  const home = async (): Promise<string> => await identityHome(t, key)
  const a = await startDaemonProcess(t, { home: await home(), env: SYNC_ENV })
  const b = await startDaemonProcess(t, { home: await home(), env: SYNC_ENV, args: ['--set', `sync.peers=["${syncAddress(a)}"]`] })
  const c = await startDaemonProcess(t, { home: await home(), env: SYNC_ENV, args: ['--set', `sync.peers=["${syncAddress(b)}"]`] })
  await postAll(a, 'instagram.profile', Array.from({ length: 30 }, (_, i) => ({ username: `line${i}` })))
  await postAll(c, 'github.profile', [{ login: 'from-c', id: 3, created_at: '2020-01-01T00:00:00Z' }], 1)
  await waitFor('A\'s files on C', async () => (await allVersions(c, 'instagram.profile')).length === 30, 120_000)
  await waitFor('C\'s file on A', async () => (await allVersions(a, 'github.profile')).length === 1, 120_000)
  // A and C never connected to each other
  const aPeers = (await a.request({ path: '/v1/peers' })).json
  const cId = (await c.request({ path: '/v1/peers' })).json.peerId
  assert.ok(!aPeers.peers.some((p: any) => p.peerId === cId && p.connected === true))
  // quiet: once converged, more rounds fetch nothing
  const before = (await b.request({ path: '/v1/peers' })).json.stats.fetched
  const round = await runCli(b.home, ['sync', '--json'])
  assert.equal(round.code, 0, round.stderr)
  assert.ok(JSON.parse(round.stdout).rounds.every((r: any) => r.totals.fetched === 0))
  assert.equal((await b.request({ path: '/v1/peers' })).json.stats.fetched, before)
})
