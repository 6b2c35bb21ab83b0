// Lost ciphertext is noticed (issue 24, item 7): block files deleted while the daemon was stopped
// show at the next start as `storage: damaged (N missing)` in /v1/status, /health and `hearth
// status`, with a warning in the log; `hearth doctor` brings them back and the damage clears.
import { test } from 'node:test'
import assert from 'node:assert/strict'
import { randomBytes } from 'node:crypto'
import { rm, writeFile } from 'node:fs/promises'
import { join } from 'node:path'
import { CID } from 'multiformats/cid'
import { blockFilePath } from '../../src/storage/raw-blocks.js'
import { blockDirsOf, removeStoredBlock } from '../support/stored-blocks.js'
import { startDaemonProcess, runCli } from '../support/daemon.js'
import { waitFor } from '../support/data-files.js'

const FILES = 12
const LOST = 3

test('block files deleted while stopped: storage damaged (N missing) in status, /health and hearth status; doctor restores them', async (t) => {
  let d = await startDaemonProcess(t)
  const cids: string[] = []
  for (let i = 0; i < FILES; i++) {
    // a scope each, so every file is its scope's latest version, whose plaintext data/ keeps
    const defFile = join(d.home.root, `n${i}.json`)
    await writeFile(defFile, JSON.stringify({ name: `Notes ${i}`, version: '1.0.0', scope: `notes.n${i}`, dialect: 'json', description: 'notes', schema: { type: 'object' } }))
    const added = await runCli(d.home, ['schema', 'add', defFile])
    assert.equal(added.code, 0, added.stderr)
    // over 32 KiB: each ciphertext is a block file of its own (smaller ones live in LevelDB)
    const posted = await d.request({ method: 'POST', path: `/v1/data/notes.n${i}`, body: { text: randomBytes(24_000).toString('hex') } })
    assert.equal(posted.status, 201, posted.body.toString())
    const v = (await d.request({ path: `/v1/data/notes.n${i}/versions` })).json.versions[0]
    cids.push((v.url as string).slice('ipfs://'.length))
  }
  const healthy = await waitFor('first check done', async () => {
    const s = (await d.request({ path: '/v1/status' })).json
    return s.storage?.presence?.state === 'ok' ? s : null
  }, 60_000)
  assert.equal(healthy.storage.presence.missing, 0)
  assert.equal(await d.stop(), 0)
  for (const cid of cids.slice(0, LOST)) await rm(blockFilePath(d.home.blocks, CID.parse(cid)))

  d = await startDaemonProcess(t, { home: d.home.root })
  const status = await waitFor('damage noticed', async () => {
    const s = (await d.request({ path: '/v1/status' })).json
    return s.storage?.presence?.state === 'damaged' ? s : null
  }, 60_000)
  assert.equal(status.storage.presence.missing, LOST)
  assert.equal(status.storage.presence.checked, FILES)
  assert.deepEqual(status.storage.presence.examples.map((e: { path: string }) => e.path.split('/')[0]).sort(), ['notes.n0', 'notes.n1', 'notes.n2'])
  const health = (await d.request({ path: '/health' })).json
  assert.equal(health.status, 'degraded')
  assert.equal(health.storage.status, 'damaged')
  assert.equal(health.storage.missing, LOST)
  assert.match(health.storage.repair, /hearth doctor/)
  const shown = await runCli(d.home, ['status'])
  assert.match(shown.stdout, /storage\s+embedded ok, damaged \(3 missing\)/)
  assert.match(shown.stdout, /storage damaged: 3 stored file\(s\) have lost their ciphertext; run `hearth doctor`/)
  assert.match(d.output(), /3 stored ciphertexts are missing/)
  assert.equal((await d.request({ path: `/v1/storage/${cids[0]!}` })).status, 404)
  assert.equal(await d.stop(), 0)

  const doctor = await runCli(d.home, ['doctor', '--json'])
  assert.equal(doctor.code, 0, doctor.stdout + doctor.stderr)
  assert.equal(JSON.parse(doctor.stdout).restored.length, LOST)
  d = await startDaemonProcess(t, { home: d.home.root })
  await waitFor('damage cleared', async () => (await d.request({ path: '/v1/status' })).json.storage?.presence?.state === 'ok' ? true : null, 60_000)
  assert.equal((await d.request({ path: '/health' })).json.status, 'ok')
  const restored = JSON.parse(doctor.stdout).restored as Array<{ cid: string }>
  for (const { cid } of restored) assert.equal((await d.request({ path: `/v1/storage/${cid}` })).status, 200)
  assert.equal(await d.stop(), 0)
})

test('doctor stores a registered file\'s lost ciphertext again from data/ and the next start registers the new CID, the old registration marked superseded', async (t) => {
  const args = ['--dev-chain', '--set', 'chain.pollIntervalMs=200']
  let d = await startDaemonProcess(t, { args })
  assert.equal((await d.request({ method: 'POST', path: '/v1/data/instagram.profile', body: { username: 'lost' } })).status, 201)
  const registered = await waitFor('registered', async () => {
    const v = (await d.request({ path: '/v1/data/instagram.profile/versions' })).json.versions[0]
    return v?.state === 'registered' ? v : null
  }, 90_000)
  assert.equal(await d.stop(), 0)
  await removeStoredBlock(blockDirsOf(d.home.blocks), CID.parse((registered.url as string).slice('ipfs://'.length)))

  const doctor = await runCli(d.home, ['doctor', '--json'])
  assert.equal(doctor.code, 0, doctor.stdout + doctor.stderr)
  const [restored] = JSON.parse(doctor.stdout).restored
  assert.equal(restored.supersedes, registered.fileId)
  assert.notEqual(restored.cid, restored.oldCid)

  d = await startDaemonProcess(t, { home: d.home.root, args })
  const again = await waitFor('registered anew', async () => {
    const v = (await d.request({ path: '/v1/data/instagram.profile/versions' })).json.versions[0]
    return v?.state === 'registered' ? v : null
  }, 90_000)
  assert.equal(again.url, `ipfs://${String(restored.cid)}`)
  assert.notEqual(again.fileId, registered.fileId)
  assert.deepEqual(again.supersededFileIds, [registered.fileId])
  assert.equal(await d.stop(), 0)
})
