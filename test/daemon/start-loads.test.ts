// What a real daemon loads: a default start with sync on loads libp2p but not viem (no chain is
// configured), OpenPGP.js (nothing is read), Helia or the Kubo client; a POST, which Hearth
// encrypts with its own writer, does not load OpenPGP.js either. Idle memory depends on it
// (README, "Idle memory"); test/cli/lazy-loading.test.ts checks the static import graph.
import test from 'node:test'
import assert from 'node:assert/strict'
import { readFile } from 'node:fs/promises'
import { join } from 'node:path'
import { REPO_ROOT, startDaemonProcess } from '../support/daemon.js'
import { tempDir } from '../support/tmp.js'

const RECORDER = join(REPO_ROOT, 'test/support/load-recorder.mjs')

/** The packages under node_modules the process has loaded so far. */
async function loadedPackages (file: string): Promise<Set<string>> {
  const packages = new Set<string>()
  for (const url of (await readFile(file, 'utf8')).split('\n')) {
    const m = /\/node_modules\/((?:@[^/]+\/)?[^/]+)\//.exec(url.slice(url.lastIndexOf('/node_modules/')))
    if (m !== null) packages.add(m[1]!)
  }
  return packages
}

test('a default start with sync on loads libp2p but not viem, OpenPGP.js, Helia or the Kubo client; a POST does not load OpenPGP.js', async (t) => {
  const loaded = join(await tempDir(t), 'loaded.txt')
  const d = await startDaemonProcess(t, {
    nodeArgs: ['--import', RECORDER],
    env: { HEARTH_TEST_LOADED: loaded, HEARTH_SYNC: 'true', HEARTH_SYNC_LISTEN: '/ip4/127.0.0.1/tcp/0' }
  })
  const atStart = await loadedPackages(loaded)
  assert.ok(atStart.has('libp2p'), 'the recorder sees what the daemon loads (sync is on)')
  for (const heavy of ['viem', 'openpgp', 'helia', '@helia/unixfs', 'kubo-rpc-client']) assert.ok(!atStart.has(heavy), `${heavy} is not loaded by a default start`)
  const posted = await d.request({ method: 'POST', path: '/v1/data/instagram.profile', body: { username: 'alice', bio: 'x'.repeat(2000) } })
  assert.equal(posted.status, 201, JSON.stringify(posted.json))
  assert.ok(!(await loadedPackages(loaded)).has('openpgp'), 'files are encrypted by src/protocol/openpgp-writer.ts')
  assert.equal(await d.stop(), 0)
})
