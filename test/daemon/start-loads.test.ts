// What a real daemon loads: a default start with sync on loads libp2p but not viem (no chain is
// configured), OpenPGP.js (nothing is read), Helia and its datastore, the Kubo client or the MCP SDK (no assistant
// asked); a POST, which Hearth
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
  for (const url of await loadedUrls(file)) {
    const m = /\/node_modules\/((?:@[^/]+\/)?[^/]+)\//.exec(url.slice(url.lastIndexOf('/node_modules/')))
    if (m !== null) packages.add(m[1]!)
  }
  return packages
}

async function loadedUrls (file: string): Promise<string[]> {
  return (await readFile(file, 'utf8')).split('\n')
}

/** Hearth's own modules of one folder of src/ (or dist/) the process has loaded so far. */
async function loadedParts (file: string, folder: string): Promise<string[]> {
  return (await loadedUrls(file)).filter((url) => !url.includes('/node_modules/') && new RegExp(`/(src|dist)/${folder}/`).test(url))
}

test('a default start with sync on loads libp2p but not viem, OpenPGP.js, Helia (nor its datastore-level view of the LevelDB), the Kubo client, the MCP SDK, the unconfigured proxy, the builder listener, the owner\'s builder side; libsecp256k1 is mapped by the identity\'s start; a POST does not load OpenPGP.js', async (t) => {
  const loaded = join(await tempDir(t), 'loaded.txt')
  const d = await startDaemonProcess(t, {
    nodeArgs: ['--import', RECORDER],
    env: { HEARTH_TEST_LOADED: loaded, HEARTH_SYNC: 'true', HEARTH_SYNC_LISTEN: '/ip4/127.0.0.1/tcp/0' }
  })
  const atStart = await loadedPackages(loaded)
  assert.ok(atStart.has('libp2p'), 'the recorder sees what the daemon loads (sync is on)')
  for (const heavy of ['viem', 'openpgp', 'helia', 'datastore-level', '@helia/unixfs', 'kubo-rpc-client', '@modelcontextprotocol/sdk', 'zod']) assert.ok(!atStart.has(heavy), `${heavy} is not loaded by a default start`)
  // without builders.listen nobody holds `builder` access: that listener's part stays unloaded (src/builders/index.ts)
  const builderParts = (await loadedParts(loaded, 'builders')).map((url) => url.slice(url.lastIndexOf('/') + 1).replace(/\.[jt]s$/, ''))
  assert.ok(builderParts.includes('owner-routes'), 'the recorder sees the owner\'s builder routes')
  for (const part of ['listener', 'web3-signed', 'authorize', 'rate-limit']) assert.ok(!builderParts.includes(part), `builders/${part} is not loaded without builders.listen`)
  // the owner's side behind those routes waits for a request that needs it, the grant relay for a chain
  for (const part of ['owner', 'consent', 'typed-data', 'grant', 'relay']) assert.ok(!builderParts.includes(part), `builders/${part} is not loaded at idle`)
  const builders = await d.request({ path: '/v1/builders' })
  assert.equal(builders.status, 200, JSON.stringify(builders.json))
  assert.deepEqual(builders.json.builders, [])
  assert.ok((await loadedParts(loaded, 'builders')).some((url) => /\/owner\.[jt]s$/.test(url)), 'a builder request loads the owner\'s side')
  // the identity's start (the owner recovered from the master signature) runs on the native
  // libsecp256k1 (a require, which the recorder does not see), not on @noble/curves' secp256k1 tables
  // (src/protocol/secp256k1.ts: 0.1–0.3 s less of every start)
  assert.ok((await readFile(`/proc/${d.child.pid!}/maps`, 'utf8')).includes('secp256k1'), 'libsecp256k1 is mapped by the start')
  // without upstream.baseUrl the proxy's modules wait for a call that needs them (src/proxy/lazy.ts)
  assert.deepEqual((await loadedParts(loaded, 'proxy')).map((url) => url.slice(url.lastIndexOf('/') + 1).replace(/\.[jt]s$/, '')).sort(), ['basics', 'credentials', 'lazy', 'views'], 'the proxy is not loaded at idle')
  const passthrough = await d.request({ method: 'GET', path: '/api/v0/conversations' })
  assert.equal(passthrough.status, 503, JSON.stringify(passthrough.json))
  assert.equal((await loadedParts(loaded, 'proxy')).length, 4, 'an unconfigured passthrough answers without loading the proxy')
  const images = await d.request({ method: 'GET', path: '/v1/images' })
  assert.equal(images.status, 200, JSON.stringify(images.json))
  assert.ok((await loadedParts(loaded, 'proxy')).some((url) => /\/image-jobs\.[jt]s$/.test(url)), 'a call that needs it loads the proxy')
  const posted = await d.request({ method: 'POST', path: '/v1/data/instagram.profile', body: { username: 'alice', bio: 'x'.repeat(2000) } })
  assert.equal(posted.status, 201, JSON.stringify(posted.json))
  assert.ok(!(await loadedPackages(loaded)).has('openpgp'), 'files are encrypted by src/protocol/openpgp-writer.ts')
  assert.equal(await d.stop(), 0)
})
