// A large POST through the real daemon: encrypted on the encryption worker while the main thread
// keeps answering, stored as a DAG whose CID is `ipfs add`'s, and durable when acknowledged.
import { test } from 'node:test'
import assert from 'node:assert/strict'
import { readFile } from 'node:fs/promises'
import { join } from 'node:path'
import * as openpgp from 'openpgp'
import { startDaemonProcess } from '../support/daemon.js'
import { referenceCid } from '../support/reference-cid.js'
import { loadIdentity } from '../../src/identity/identity.js'
import { scopeKeyHex } from '../../src/protocol/keys.js'

const SCOPE = 'instagram.profile'

test('a 10 MB POST: /health answers meanwhile; after SIGKILL the acknowledged file and ciphertext are there, plain openpgp decrypts it, its CID is ipfs add\'s', async (t) => {
  const d = await startDaemonProcess(t)
  const bio = 'ü'.repeat(5 * 1024 * 1024)
  let posted = false
  const post = d.request({ method: 'POST', path: `/v1/data/${SCOPE}`, body: { username: 'big', bio } }).finally(() => { posted = true })
  let healthDuringPost = 0
  while (!posted) {
    const h = await d.request({ path: '/health' })
    assert.equal(h.status, 200)
    if (!posted) healthDuringPost++
  }
  const r = await post
  assert.equal(r.status, 201, JSON.stringify(r.json))
  assert.ok(healthDuringPost >= 1, '/health answered while the POST was being stored')
  const status = await d.request({ path: '/v1/status' })
  assert.equal(status.json.encryptionWorkers.finished, 1, 'encrypted on the worker')

  await d.kill('SIGKILL')
  const d2 = await startDaemonProcess(t, { home: d.home.root })
  const onDisk = await readFile(join(d2.home.data, r.json.path))
  assert.equal(JSON.parse(onDisk.toString()).data.bio, bio)
  const cid = (r.json.url as string).slice('ipfs://'.length)
  const versions = await d2.request({ path: `/v1/data/${SCOPE}/versions` })
  assert.deepEqual(versions.json.versions.map((v: any) => [v.path, v.url, v.state]), [[r.json.path, r.json.url, 'stored']])
  const raw = await d2.request({ path: `/v1/storage/${cid}` })
  assert.equal(raw.status, 200)
  const ciphertext = new Uint8Array(raw.body)
  assert.equal(await referenceCid(ciphertext), cid)
  const password = scopeKeyHex((await loadIdentity(d2.home)).masterKey, SCOPE)
  const { data } = await openpgp.decrypt({ message: await openpgp.readMessage({ binaryMessage: ciphertext }), passwords: [password], format: 'binary' })
  assert.equal(Buffer.compare(Buffer.from(data), onDisk), 0)
})

test('concurrent large POSTs are bounded in memory: bodies wait for room before they are read, and all are stored', async (t) => {
  const d = await startDaemonProcess(t)
  const bodies = Array.from({ length: 6 }, (_, i) => ({ username: `big${i}`, bio: String(i).repeat(8 * 1024 * 1024) }))
  const answers = await Promise.all(bodies.map(async (body) => await d.request({ method: 'POST', path: `/v1/data/${SCOPE}`, body })))
  for (const a of answers) assert.equal(a.status, 201, JSON.stringify(a.json))
  assert.equal(new Set(answers.map((a) => a.json.url)).size, 6)
  const status = await d.request({ path: '/v1/status' })
  const budget = status.json.encryptionWorkers.largeBodies
  assert.ok(budget.peakBytes <= 32 * 1024 * 1024, `at most 32 MiB of bodies in flight (peak ${budget.peakBytes})`)
  assert.ok(budget.peakBytes > 16 * 1024 * 1024, `but more than one at a time (peak ${budget.peakBytes})`)
  assert.deepEqual({ ...budget, peakBytes: 0 }, { inFlightBytes: 0, running: 0, waiting: 0, peakBytes: 0 })
  const versions = await d.request({ path: `/v1/data/${SCOPE}/versions` })
  assert.equal(versions.json.total, 6)
})
