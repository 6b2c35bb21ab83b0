// A fresh device of the owner (only the identity, no data) restores the data folder from the
// chain's records and the shared Kubo storage, byte for byte, and registers nothing itself.
import { test, before } from 'node:test'
import assert from 'node:assert/strict'
import { readFile, readdir } from 'node:fs/promises'
import { join } from 'node:path'
import { generatePrivateKey } from 'viem/accounts'
import { startDaemonProcess, runCli } from '../support/daemon.js'
import { startTestChain, testChainClient } from '../support/anvil.js'
import { ensureIpfsInstalled, startIpfsDaemon } from '../support/ipfs-daemon.js'
import { waitFor } from '../support/data-files.js'
import { chainArgs, ownerHome } from '../support/chain-daemon.js'
import { allVersions, postAll } from '../support/sync-daemons.js'

before(async () => { await ensureIpfsInstalled() }, { timeout: 60 * 60_000 })

test('a fresh device with only the identity restores the data folder from the chain and storage', async (t) => {
  const chain = await startTestChain(t)
  const ipfs = await startIpfsDaemon(t)
  const key = generatePrivateKey()
  const kubo = { HEARTH_STORAGE: 'kubo', HEARTH_KUBO_URL: ipfs.apiUrl }
  const a = await startDaemonProcess(t, { home: await ownerHome(t, key, chain), env: kubo, args: chainArgs(chain) })
  await postAll(a, 'instagram.profile', Array.from({ length: 30 }, (_, i) => ({ username: `r${i}`, bio: `ünïcødé ${i}` })), 4)
  await postAll(a, 'github.profile', [{ login: 'octo', id: 1, created_at: '2020-01-01T00:00:00Z' }], 1)
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
