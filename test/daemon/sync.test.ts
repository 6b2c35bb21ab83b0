// Device sync between real daemons on loopback, same owner, on one local chain: files flow both
// ways and converge, only the writer registers, another owner learns nothing; a fresh device
// restores the data folder from the chain and storage alone.
import { test, before } from 'node:test'
import assert from 'node:assert/strict'
import { readFile, readdir } from 'node:fs/promises'
import { join } from 'node:path'
import { generatePrivateKey } from 'viem/accounts'
import { startDaemonProcess, runCli, type DaemonProcess } from '../support/daemon.js'
import { startTestChain, testChainClient } from '../support/anvil.js'
import { ensureIpfsInstalled, startIpfsDaemon } from '../support/ipfs-daemon.js'
import { waitFor } from '../support/data-files.js'
import { chainArgs, ownerHome } from '../support/chain-daemon.js'
import { identityHome } from '../support/sync-daemons.js'

before(async () => { await ensureIpfsInstalled() }, { timeout: 20 * 60_000 })

const SYNC_ENV = { HEARTH_SYNC: 'true', HEARTH_MDNS: 'false', HEARTH_SYNC_LISTEN: '/ip4/127.0.0.1/tcp/0' }

function syncAddress (d: DaemonProcess): string {
  return /sync\s+peer \S+ on (\S+)/.exec(d.output())![1]!
}

async function allVersions (d: DaemonProcess, scope: string): Promise<any[]> {
  const r = await d.request({ path: `/v1/data/${scope}/versions?limit=1000` })
  return r.status === 200 ? r.json.versions : []
}

async function post (d: DaemonProcess, scope: string, bodies: object[], concurrency = 8): Promise<void> {
  let next = 0
  await Promise.all(Array.from({ length: concurrency }, async () => {
    while (next < bodies.length) {
      const body = bodies[next++]!
      const r = await d.request({ method: 'POST', path: `/v1/data/${scope}`, body })
      assert.equal(r.status, 201, r.body.toString())
    }
  }))
}

test('two daemons of one owner converge; only the writer registers; another owner cannot connect', async (t) => {
  const chain = await startTestChain(t)
  const client = testChainClient(chain)
  const key = generatePrivateKey()
  const a = await startDaemonProcess(t, { home: await ownerHome(t, key, chain), env: SYNC_ENV, args: chainArgs(chain) })
  const b = await startDaemonProcess(t, { home: await ownerHome(t, key, chain), env: SYNC_ENV, args: [...chainArgs(chain), '--set', `sync.peers=["${syncAddress(a)}"]`] })

  await post(a, 'instagram.profile', Array.from({ length: 500 }, (_, i) => ({ username: `a${i}` })))
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
    post(a, 'github.profile', Array.from({ length: 20 }, (_, i) => ({ login: `a${i}`, id: i + 1, created_at: '2020-01-01T00:00:00Z' }))),
    post(b, 'github.profile', Array.from({ length: 20 }, (_, i) => ({ login: `b${i}`, id: 100 + i, created_at: '2020-01-01T00:00:00Z' })))
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

test('a fresh device with only the identity restores the data folder from the chain and storage', async (t) => {
  const chain = await startTestChain(t)
  const ipfs = await startIpfsDaemon(t)
  const key = generatePrivateKey()
  const kubo = { HEARTH_STORAGE: 'kubo', HEARTH_KUBO_URL: ipfs.apiUrl }
  const a = await startDaemonProcess(t, { home: await ownerHome(t, key, chain), env: kubo, args: chainArgs(chain) })
  await post(a, 'instagram.profile', Array.from({ length: 30 }, (_, i) => ({ username: `r${i}`, bio: `ünïcødé ${i}` })), 4)
  await post(a, 'github.profile', [{ login: 'octo', id: 1, created_at: '2020-01-01T00:00:00Z' }], 1)
  await waitFor('all registered', async () => {
    const v = [...await allVersions(a, 'instagram.profile'), ...await allVersions(a, 'github.profile')]
    return v.length === 31 && v.every((x) => x.state === 'registered')
  }, 90_000)
  await a.stop()

  const fresh = await startDaemonProcess(t, { home: await ownerHome(t, key, chain), env: kubo, args: chainArgs(chain) })
  const restored = await runCli(fresh.home, ['restore', '--json'])
  assert.equal(restored.code, 0, restored.stderr + restored.stdout)
  const summary = JSON.parse(restored.stdout)
  assert.equal(summary.found, 31)
  assert.equal(summary.written, 31)

  for (const scope of ['instagram.profile', 'github.profile']) {
    const mine = (await readdir(join(a.home.data, scope))).sort()
    assert.deepEqual((await readdir(join(fresh.home.data, scope))).sort(), mine)
    for (const name of mine) assert.deepEqual(await readFile(join(fresh.home.data, scope, name)), await readFile(join(a.home.data, scope, name)), `${scope}/${name} byte for byte`)
  }
  const versions = await allVersions(fresh, 'instagram.profile')
  assert.ok(versions.every((v) => v.state === 'registered' && v.fileId !== null && v.origin === 'chain'))

  // idempotent: a second restore writes nothing
  const again = JSON.parse((await runCli(fresh.home, ['restore', '--json'])).stdout)
  assert.equal(again.written, 0)
  const client = testChainClient(chain)
  assert.equal(Number(await client.filesCount()), 31, 'the restored device registered nothing')
})

test('three daemons in a line A-B-C: C gets A\'s files through B, and nothing loops', async (t) => {
  const key = generatePrivateKey()
  const home = async (): Promise<string> => await identityHome(t, key)
  const a = await startDaemonProcess(t, { home: await home(), env: SYNC_ENV })
  const b = await startDaemonProcess(t, { home: await home(), env: SYNC_ENV, args: ['--set', `sync.peers=["${syncAddress(a)}"]`] })
  const c = await startDaemonProcess(t, { home: await home(), env: SYNC_ENV, args: ['--set', `sync.peers=["${syncAddress(b)}"]`] })
  await post(a, 'instagram.profile', Array.from({ length: 30 }, (_, i) => ({ username: `line${i}` })))
  await post(c, 'github.profile', [{ login: 'from-c', id: 3, created_at: '2020-01-01T00:00:00Z' }], 1)
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
