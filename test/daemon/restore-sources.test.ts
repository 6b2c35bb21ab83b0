// `hearth restore` on the default embedded storage, with real daemons on a local chain: the
// ciphertexts a fresh device lacks come from a configured IPFS gateway (a trustless-gateway
// simulator on loopback serving the first device's real blocks, a 1 MB+ multi-block file among
// them), every block verified; a lying gateway is refused and nothing of it stored; a hanging one
// is bounded; when no source has a file, restore lists what it tried, says what to do and exits 1.
// And from another device of the owner, over sync; and `hearth doctor` from a gateway when the
// plaintext of a lost ciphertext is gone too.
import { test } from 'node:test'
import assert from 'node:assert/strict'
import { randomBytes } from 'node:crypto'
import { cp, readFile, readdir, unlink } from 'node:fs/promises'
import { join } from 'node:path'
import { CID } from 'multiformats/cid'
import { generatePrivateKey } from 'viem/accounts'
import { overwriteStoredBlock, readStoredBlock, removeStoredBlock } from '../support/stored-blocks.js'
import { startDaemonProcess, runCli, type DaemonProcess } from '../support/daemon.js'
import { startTestChain } from '../support/anvil.js'
import { chainArgs, ownerHome } from '../support/chain-daemon.js'
import { waitFor } from '../support/data-files.js'
import { startGatewaySim } from '../support/gateway-sim.js'
import { tempDir } from '../support/tmp.js'

async function versions (d: DaemonProcess, scope: string): Promise<any[]> {
  const r = await d.request({ path: `/v1/data/${scope}/versions?limit=1000` })
  return r.status === 200 ? r.json.versions : []
}

const SYNC_ENV = { HEARTH_SYNC: 'true', HEARTH_MDNS: 'false', HEARTH_SYNC_LISTEN: '/ip4/127.0.0.1/tcp/0' }

function syncAddress (d: DaemonProcess): string {
  return /sync\s+peer \S+ on (\S+)/.exec(d.output())![1]!
}

function gatewaysArg (urls: string[], requestTimeoutMs = 5000): string[] {
  return ['--set', `restore.gateways=${JSON.stringify(urls)}`, '--set', `restore.requestTimeoutMs=${requestTimeoutMs}`]
}

test('a fresh embedded device restores every file from a configured gateway, refusing a lying one; with no source it says what to do', async (t) => {
  const chain = await startTestChain(t)
  const key = generatePrivateKey()
  const a = await startDaemonProcess(t, { home: await ownerHome(t, key, chain), args: chainArgs(chain) })
  for (let i = 0; i < 6; i++) {
    const r = await a.request({ method: 'POST', path: '/v1/data/instagram.profile', body: { username: `g${i}`, bio: `ünïcødé ${i}` } })
    assert.equal(r.status, 201, r.body.toString())
  }
  const big = await a.request({ method: 'POST', path: '/v1/data/instagram.profile', body: { username: 'big', bio: randomBytes(1_200_000).toString('base64') } })
  assert.equal(big.status, 201, big.body.toString())
  const onA = await waitFor('all registered on A', async () => {
    const v = await versions(a, 'instagram.profile')
    return v.length === 7 && v.every((x) => x.state === 'registered') ? v : null
  }, 90_000)
  const bigCid = onA.find((v) => v.size > 1_000_000)?.url.slice('ipfs://'.length) as string
  assert.ok(bigCid !== undefined, 'one file over 1 MB')
  assert.equal(CID.parse(bigCid).code, 0x70, 'stored as a multi-block UnixFS file')
  await a.stop()

  const honest = await startGatewaySim(t, a.home.blocks)
  const liar = await startGatewaySim(t, a.home.blocks, 'lying')
  const hanging = await startGatewaySim(t, a.home.blocks, 'hanging')
  const empty = await startGatewaySim(t, join(a.home.blocks, 'nothing-here'))

  // the liar first: refused for every file, the honest gateway then provides each
  const b = await startDaemonProcess(t, { home: await ownerHome(t, key, chain), args: [...chainArgs(chain), ...gatewaysArg([liar.url, honest.url])] })
  const restored = await runCli(b.home, ['restore', '--json'])
  assert.equal(restored.code, 0, restored.stderr + restored.stdout)
  const summary = JSON.parse(restored.stdout)
  assert.equal(summary.found, 7)
  assert.equal(summary.written, 7)
  const mine = (await readdir(join(a.home.data, 'instagram.profile'))).sort()
  assert.deepEqual((await readdir(join(b.home.data, 'instagram.profile'))).sort(), mine)
  for (const name of mine) assert.deepEqual(await readFile(join(b.home.data, 'instagram.profile', name)), await readFile(join(a.home.data, 'instagram.profile', name)), `${name} byte for byte`)
  assert.ok(liar.requests.length >= 7, 'the liar was asked for every file')
  assert.ok(honest.requests.includes(bigCid) && honest.requests.length > 7, 'the multi-block file was walked block by block')
  const onB = await versions(b, 'instagram.profile')
  assert.ok(onB.every((v) => v.origin === 'chain' && v.state === 'registered'))
  // stored and pinned here: readable through the storage endpoint, verified
  const blob = await b.request({ path: `/v1/storage/${bigCid}` })
  assert.equal(blob.status, 200)
  await b.stop()

  // a hanging gateway and one without the blocks: each file says what was tried and what to do
  const c = await startDaemonProcess(t, { home: await ownerHome(t, key, chain), args: [...chainArgs(chain), ...gatewaysArg([hanging.url, empty.url], 300)] })
  const started = Date.now()
  const none = await runCli(c.home, ['restore'])
  assert.equal(none.code, 1, none.stdout + none.stderr)
  assert.ok(Date.now() - started < 60_000, `bounded: ${Date.now() - started} ms`)
  assert.match(none.stdout, /7 registered files, 0 restored, 0 already here, 7 failed/)
  const lines = none.stdout.split('\n').filter((l) => l.startsWith('  file '))
  assert.equal(lines.length, 7)
  for (const line of lines) {
    assert.match(line, /STORAGE_NOT_FOUND/)
    assert.match(line, /local storage: missing/)
    assert.match(line, new RegExp(`gateway ${hanging.url}: TIMEOUT`))
    assert.match(line, new RegExp(`gateway ${empty.url}: missing`))
  }
  assert.match(none.stdout, /hearth peers add/)
  assert.match(none.stdout, /restore\.gateways/)
  assert.match(none.stdout, /storage migrate --to kubo/)
  assert.deepEqual(await readdir(join(c.home.data, 'instagram.profile')).catch(() => []), [])
  await c.stop()

  // only a liar: refused with STORAGE_VERIFY_FAILED, and none of its bytes were stored
  const d = await startDaemonProcess(t, { home: await ownerHome(t, key, chain), args: [...chainArgs(chain), ...gatewaysArg([liar.url])] })
  const lied = await runCli(d.home, ['restore', '--json'])
  assert.equal(lied.code, 1)
  const result = JSON.parse(lied.stdout)
  assert.equal(result.failed, 7)
  assert.ok(result.failures.every((f: any) => f.errorCode === 'STORAGE_VERIFY_FAILED' && f.tried.some((a: any) => a.outcome === 'STORAGE_VERIFY_FAILED')))
  await d.stop()
  for (const v of onA) {
    const cid = CID.parse(v.url.slice('ipfs://'.length))
    assert.equal(await readStoredBlock(d.home, cid), null, `no block of ${cid} stored`)
  }
})

test('a fresh embedded device connected to another device of the owner restores every file, fetched over sync', async (t) => {
  const chain = await startTestChain(t)
  const key = generatePrivateKey()
  const a = await startDaemonProcess(t, { home: await ownerHome(t, key, chain), env: SYNC_ENV, args: chainArgs(chain) })
  for (let i = 0; i < 6; i++) {
    assert.equal((await a.request({ method: 'POST', path: '/v1/data/instagram.profile', body: { username: `s${i}` } })).status, 201)
  }
  assert.equal((await a.request({ method: 'POST', path: '/v1/data/instagram.profile', body: { username: 'big', bio: randomBytes(1_200_000).toString('base64') } })).status, 201)
  await waitFor('all registered on A', async () => {
    const v = await versions(a, 'instagram.profile')
    return v.length === 7 && v.every((x) => x.state === 'registered')
  }, 90_000)

  // B has the identity and A's address only: no gateway, nothing in its own storage
  const b = await startDaemonProcess(t, { home: await ownerHome(t, key, chain), env: SYNC_ENV, args: [...chainArgs(chain), '--set', `sync.peers=["${syncAddress(a)}"]`] })
  const restored = await runCli(b.home, ['restore', '--json'])
  assert.equal(restored.code, 0, restored.stderr + restored.stdout)
  const summary = JSON.parse(restored.stdout)
  assert.equal(summary.found, 7)
  assert.equal(summary.failed, 0)
  assert.equal(summary.written + summary.present, 7)
  // the sync pull that starts when B connects may hand some files over first; restore fetched the rest
  t.diagnostic(`restore wrote ${String(summary.written)}, the sync pull ${String(summary.present)}`)
  const mine = (await readdir(join(a.home.data, 'instagram.profile'))).sort()
  await waitFor('B holds every file', async () => (await readdir(join(b.home.data, 'instagram.profile')).catch(() => [])).length === 7, 30_000)
  assert.deepEqual((await readdir(join(b.home.data, 'instagram.profile'))).sort(), mine)
  for (const name of mine) assert.deepEqual(await readFile(join(b.home.data, 'instagram.profile', name)), await readFile(join(a.home.data, 'instagram.profile', name)), `${name} byte for byte`)
  const served = (await a.request({ path: '/v1/peers' })).json.stats
  assert.ok(served.fetchesServed >= 7, `A served ${String(served.fetchesServed)} fetches`)
})

test('hearth doctor fetches a lost or rotten ciphertext whose plaintext is gone from a configured gateway, under the same CID; a lying gateway repairs nothing', async (t) => {
  let d = await startDaemonProcess(t)
  for (const username of ['x', 'y', 'z']) assert.equal((await d.request({ method: 'POST', path: '/v1/data/instagram.profile', body: { username } })).status, 201)
  const stored = (await versions(d, 'instagram.profile')).sort((p, q) => p.path.localeCompare(q.path))
  await d.stop()
  // a copy of the blocks (files and the LevelDB of the small ones) before the loss, served by a gateway
  const copyRoot = await tempDir(t, 'hearth-gw-')
  const copy = join(copyRoot, 'blocks')
  await cp(d.home.blocks, copy, { recursive: true })
  await cp(d.home.datastore, join(copyRoot, 'datastore'), { recursive: true })
  const honest = await startGatewaySim(t, copy)
  const liar = await startGatewaySim(t, copy, 'lying')
  const [first, second, third] = stored as [any, any, any]
  for (const v of [first, second]) {
    await removeStoredBlock(d.home, CID.parse(v.url.slice('ipfs://'.length)))
    await unlink(join(d.home.data, v.path))
  }
  // bit rot: the same size, one bit changed, and no plaintext left either
  const rotten = CID.parse(third.url.slice('ipfs://'.length))
  const bytes = Buffer.from((await readStoredBlock(d.home, rotten))!.bytes)
  bytes[20] = bytes[20]! ^ 0x04
  await overwriteStoredBlock(d.home, rotten, bytes)
  await unlink(join(d.home.data, third.path))

  assert.equal((await runCli(d.home, ['config', 'set', `restore.gateways=${JSON.stringify([liar.url])}`])).code, 0)
  const refused = await runCli(d.home, ['doctor', '--json'])
  assert.equal(refused.code, 1)
  const unrepairable = JSON.parse(refused.stdout).unrepairable
  assert.deepEqual(unrepairable.map((u: any) => u.path).sort(), [first.path, second.path, third.path].sort())
  for (const u of unrepairable) assert.match(u.reason, new RegExp(`gateway ${liar.url}: STORAGE_VERIFY_FAILED`))
  assert.equal(await readStoredBlock(d.home, CID.parse(first.url.slice('ipfs://'.length))), null, 'nothing of the liar stored')

  assert.equal((await runCli(d.home, ['config', 'set', `restore.gateways=${JSON.stringify([liar.url, honest.url])}`])).code, 0)
  const doctor = await runCli(d.home, ['doctor'])
  assert.equal(doctor.code, 0, doctor.stdout + doctor.stderr)
  assert.match(doctor.stdout, /3 checked, 3 stored again, 0 unrepairable/)
  for (const v of [first, second, third]) assert.ok(doctor.stdout.includes(`restored ${String(v.path)}: ${String(v.url.slice('ipfs://'.length))} fetched again from gateway ${honest.url}`), doctor.stdout)

  d = await startDaemonProcess(t, { home: d.home.root })
  for (const v of stored) assert.equal((await d.request({ path: `/v1/storage/${String(v.url.slice('ipfs://'.length))}` })).status, 200)
  await d.stop()
  assert.equal(JSON.parse((await runCli(d.home, ['doctor', '--json'])).stdout).restored.length, 0, 'nothing left to repair')
})
