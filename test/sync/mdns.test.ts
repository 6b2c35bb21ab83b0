// mDNS discovery, only inside a network namespace made for this test (`unshare -rn`: a fresh
// network stack with nothing but a loopback, multicast enabled on it). mDNS never runs on a real
// interface; where no namespace can be made the test is skipped and says why.
import { test } from 'node:test'
import assert from 'node:assert/strict'
import { spawnSync } from 'node:child_process'
import { tempDir } from '../support/tmp.js'
import { OWNER_KEY } from '../support/sync-device.js'
import { spawnPeer } from '../support/sync-process.js'

const NETNS_SETUP = 'ip link set lo up && ip link set lo multicast on && ip route add 224.0.0.0/4 dev lo'

function namespaceProblem (): string | null {
  const probe = spawnSync('unshare', ['-rn', 'sh', '-c', NETNS_SETUP], { encoding: 'utf8', timeout: 10_000 })
  if (probe.error !== undefined) return `unshare is not available: ${probe.error.message}`
  if (probe.status !== 0) return `cannot create a network namespace with multicast on loopback: ${(probe.stderr ?? '').trim() || `exit ${probe.status}`}`
  return null
}

test('two devices with no configured peers find each other over mDNS and sync (in a private network namespace)', async (t) => {
  const problem = namespaceProblem()
  if (problem !== null) { t.skip(problem); return }
  const dir = await tempDir(t)
  const config = JSON.stringify({ dir, ownerKey: OWNER_KEY, files: 5 })
  const shellQuoted = `'${config.replaceAll("'", "'\\''")}'`
  const peer = spawnPeer(t, ['unshare', '-rn', 'sh', '-c',
    `${NETNS_SETUP} && exec "${process.execPath}" --import tsx --import ./src/polyfill.ts test/support/sync-mdns-pair.ts ${shellQuoted}`])
  const result = await peer.until('the pair to report', (e) => e.event === 'synced' || e.event === 'failed', 90_000)
  assert.equal(result.event, 'synced', String(result.reason ?? peer.stderr().slice(-2000)))
  assert.equal(result.count, 5)
  assert.equal(result.discovered, true, 'connected without any configured address')
  assert.equal((await peer.exited).code, 0)
})
