// The daemon on the kubo storage backend (a real Kubo-RPC-compatible node on loopback): what it
// stores can be read back with `ipfs cat` on that node and decrypts to the envelope, and a node
// that goes down mid-ingest loses nothing and stores nothing twice.
import { test, before } from 'node:test'
import assert from 'node:assert/strict'
import { readFile } from 'node:fs/promises'
import { join } from 'node:path'
import { startDaemonProcess } from '../support/daemon.js'
import { ensureIpfsInstalled, startIpfsDaemon } from '../support/ipfs-daemon.js'
import { dropFile, envelopeFor, statusOf, waitFor } from '../support/data-files.js'
import { loadIdentity } from '../../src/identity/identity.js'
import { decryptEnvelopeBytes } from '../../src/protocol/encryption.js'
import { scopeKeyHex } from '../../src/protocol/keys.js'

before(async () => { await ensureIpfsInstalled() }, { timeout: 60 * 60_000 })

test('daemon on the kubo backend: ipfs cat decrypts to the envelope; the node down mid-ingest loses nothing', async (t) => {
  const ipfs = await startIpfsDaemon(t)
  const d = await startDaemonProcess(t, { env: { HEARTH_STORAGE: 'kubo', HEARTH_KUBO_URL: ipfs.apiUrl }, args: ['--set', 'storage.kubo.timeoutMs=3000'] })

  const posted = await d.request({ method: 'POST', path: '/v1/data/instagram.profile', body: { username: 'kubo-user' } })
  assert.equal(posted.status, 201, posted.body.toString())
  const cid = posted.json.url.slice('ipfs://'.length)
  const fromNode = await ipfs.catWithCli(cid)
  const identity = await loadIdentity(d.home)
  const plain = await decryptEnvelopeBytes(fromNode, scopeKeyHex(identity.masterKey, 'instagram.profile'))
  assert.deepEqual(Buffer.from(plain), await readFile(join(d.home.data, posted.json.path)))
  assert.equal(JSON.parse(Buffer.from(plain).toString()).data.username, 'kubo-user')

  // the node goes down: POSTs are written and queued, dropped files wait, nothing is rejected
  await ipfs.stop()
  const queued = await d.request({ method: 'POST', path: '/v1/data/instagram.profile', body: { username: 'while-down' } })
  assert.equal(queued.status, 202, queued.body.toString())
  assert.equal(queued.json.status, 'queued')
  for (let i = 0; i < 10; i++) {
    const at = new Date(Date.UTC(2026, 1, 1, 0, 0, i)).toISOString()
    await dropFile(d.home.data, 'instagram.profile', at.replaceAll(':', '-') + '.json', JSON.stringify(envelopeFor('instagram.profile', { username: `drop${i}` }, at)))
  }
  await waitFor('files waiting for storage', async () => (await statusOf(d)).ingest.waitingForStorage >= 10)
  const down = await statusOf(d)
  assert.equal(down.storage.ok, false)
  assert.equal(down.files.counts.rejected, 0)

  await ipfs.restart()
  const versions = await waitFor('all twelve stored', async () => {
    const v = (await d.request({ path: '/v1/data/instagram.profile/versions?limit=100' })).json
    return v.total === 12 && v.versions.every((x: any) => x.state === 'stored') ? v.versions : null
  }, 120_000)
  assert.equal(new Set(versions.map((v: any) => v.url)).size, 12, 'one ciphertext per file, none stored twice')
  const latest = await d.request({ path: '/v1/data/instagram.profile?at=2026-02-01T00:00:09Z' })
  assert.equal(latest.json.data.username, 'drop9')
  for (const v of versions.slice(0, 3)) {
    const bytes = await ipfs.catWithCli(v.url.slice('ipfs://'.length))
    await decryptEnvelopeBytes(bytes, scopeKeyHex(identity.masterKey, 'instagram.profile'))
  }
})
