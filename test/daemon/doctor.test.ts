// Issue 12, item 7: damaged blocks and a damaged index are noticed, a start that fails on them
// names the repair, and `hearth doctor` repairs what the data folder still allows.
import { test } from 'node:test'
import assert from 'node:assert/strict'
import { readdir, unlink, writeFile } from 'node:fs/promises'
import { join } from 'node:path'
import { CID } from 'multiformats/cid'
import { overwriteStoredBlock, readStoredBlock, removeStoredBlock } from '../support/stored-blocks.js'
import { startDaemonProcess, runCli } from '../support/daemon.js'
import { waitFor } from '../support/data-files.js'
import { garbleTableData } from '../support/garble-index.js'

test('garbled and deleted blocks are never served; hearth doctor stores them again from data/ and reports what it cannot', async (t) => {
  let d = await startDaemonProcess(t)
  for (const username of ['a', 'b', 'c']) {
    const r = await d.request({ method: 'POST', path: '/v1/data/instagram.profile', body: { username } })
    assert.equal(r.status, 201, r.body.toString())
  }
  // a superseded version has no plaintext left in data/: its ciphertext is all there is
  const versions = (await d.request({ path: '/v1/data/instagram.profile/versions' })).json.versions
  const cids = versions.map((v: any) => v.url.slice('ipfs://'.length))
  await d.stop()

  const [garbled, deleted, lost] = cids as [string, string, string]
  await overwriteStoredBlock(d.home, CID.parse(garbled), Buffer.from('not the ciphertext'))
  await removeStoredBlock(d.home, CID.parse(deleted))
  await removeStoredBlock(d.home, CID.parse(lost))
  const lostPath = versions[2].path as string
  await unlink(join(d.home.data, lostPath))

  d = await startDaemonProcess(t, { home: d.home.root })
  // never the damaged bytes: the read is checked against the CID
  const bad = await d.request({ path: `/v1/storage/${garbled}` })
  assert.ok([502, 404].includes(bad.status), bad.body.toString())
  assert.ok(['STORAGE_VERIFY_FAILED', 'STORAGE_NOT_FOUND'].includes(bad.json.error.errorCode))
  // while the daemon runs, doctor refuses
  const busy = await runCli(d.home, ['doctor'])
  assert.equal(busy.code, 1)
  assert.match(busy.stderr, /DAEMON_LOCKED: stop the daemon/)
  await d.stop()

  const doctor = await runCli(d.home, ['doctor', '--json'])
  assert.equal(doctor.code, 1, doctor.stdout + doctor.stderr)
  const report = JSON.parse(doctor.stdout)
  assert.equal(report.index, 'ok')
  assert.equal(report.checked, 3)
  assert.deepEqual(report.restored.map((r: any) => r.oldCid).sort(), [garbled, deleted].sort())
  assert.deepEqual(report.unrepairable.map((u: any) => u.path), [lostPath])
  assert.match(doctor.stderr, /STORAGE_NOT_FOUND: 1 stored version/)

  d = await startDaemonProcess(t, { home: d.home.root })
  for (const r of report.restored) {
    const bytes = await d.request({ path: `/v1/storage/${r.cid}` })
    assert.equal(bytes.status, 200)
  }
  await d.stop()
  const again = await runCli(d.home, ['doctor', '--json'])
  assert.equal(JSON.parse(again.stdout).restored.length, 0)
})

test('a damaged index database stops a start with INDEX_CORRUPT naming hearth doctor; doctor recovers and the next start indexes data/ again', async (t) => {
  let d = await startDaemonProcess(t)
  const r = await d.request({ method: 'POST', path: '/v1/data/instagram.profile', body: { username: 'kept' } })
  assert.equal(r.status, 201)
  await d.stop()
  // CURRENT names the manifest LevelDB starts from: pointing it at nothing is a damaged index
  await writeFile(join(d.home.index, 'CURRENT'), 'MANIFEST-999999\n')
  await assert.rejects(startDaemonProcess(t, { home: d.home.root }), /INDEX_CORRUPT.*hearth doctor/s)

  const doctor = await runCli(d.home, ['doctor'])
  assert.equal(doctor.code, 0, doctor.stdout + doctor.stderr)
  assert.match(doctor.stdout, /index: (repaired|recreated)/)
  d = await startDaemonProcess(t, { home: d.home.root })
  await waitFor('data file indexed again', async () => (await d.request({ path: '/v1/data/instagram.profile' })).json?.data?.username === 'kept')
})

test('a table of the index garbled while the daemon runs: index reads answer 503 INDEX_CORRUPT naming hearth doctor, /health and status say so, the daemon stays up and doctor gets every file back', async (t) => {
  let d = await startDaemonProcess(t)
  const usernames = Array.from({ length: 60 }, (_, i) => `user${i}`)
  for (const username of usernames) {
    const r = await d.request({ method: 'POST', path: '/v1/data/instagram.profile', body: { username } })
    assert.equal(r.status, 201, r.body.toString())
  }
  assert.equal(await d.stop(), 0)
  // the next start turns LevelDB's log into a table file; its start-time checks pass
  d = await startDaemonProcess(t, { home: d.home.root })
  assert.equal((await d.request({ path: '/health' })).json.status, 'ok')
  assert.ok(await garbleTableData(d.home.index) >= 1)

  const reads = ['/v1/data/instagram.profile', '/v1/data/instagram.profile/versions', '/v1/data']
  for (const path of reads) {
    const r = await d.request({ path })
    assert.equal(r.status, 503, `${path}: ${r.body.toString()}`)
    assert.equal(r.json.error.errorCode, 'INDEX_CORRUPT', path)
    assert.match(r.json.error.message, /hearth doctor/)
  }
  const health = await d.request({ path: '/health' })
  assert.equal(health.status, 200)
  assert.equal(health.json.status, 'degraded')
  assert.equal(health.json.index.status, 'damaged')
  assert.match(health.json.index.repair, /hearth doctor/)
  const status = await d.request({ path: '/v1/status' })
  assert.equal(status.status, 200, status.body.toString())
  assert.equal(status.json.index.status, 'damaged')
  assert.equal(status.json.index.errorCode, 'INDEX_CORRUPT')

  const text = await runCli(d.home, ['status'])
  assert.match(text.stdout, /index\s+DAMAGED .*hearth doctor/)
  // what does not need the damaged blocks still answers; a POST either lands or says why
  assert.equal((await d.request({ path: '/v1/config' })).status, 200)
  const late = await d.request({ method: 'POST', path: '/v1/data/instagram.profile', body: { username: 'late' } })
  assert.ok(late.status === 201 || late.json?.error?.errorCode === 'INDEX_CORRUPT', late.body.toString())
  t.diagnostic(`a POST while damaged: ${late.status} ${String(late.json?.error?.errorCode ?? late.json?.status)}`)
  assert.equal((await d.request({ path: '/health' })).status, 200)
  assert.equal(await d.stop(), 0, 'a clean stop, never a crash')

  const doctor = await runCli(d.home, ['doctor'])
  assert.match(doctor.stdout, /index: (repaired|recreated)/, doctor.stdout + doctor.stderr)
  d = await startDaemonProcess(t, { home: d.home.root })
  // nothing stored is lost: every data file is indexed again (the late POST's too when its file was written)
  const files = (await readdir(join(d.home.data, 'instagram.profile'))).filter((f) => f.endsWith('.json'))
  assert.ok(files.length >= usernames.length + (late.status === 201 ? 1 : 0))
  const expected = files.length
  await waitFor('every data file indexed again', async () => {
    const r = await d.request({ path: '/v1/data/instagram.profile/versions?limit=1000' })
    return r.status === 200 && r.json.versions.length === expected
  }, 60_000)
  assert.equal((await d.request({ path: '/health' })).json.status, 'ok')
  assert.equal(await d.stop(), 0)
})

test('hearth doctor after a SIGKILL replays the ingest journal first: acknowledged files whose blocks were still in memory keep their CIDs', async (t) => {
  // no checkpoint before the kill: every acknowledged block is still only journaled
  let d = await startDaemonProcess(t, { args: ['--set', 'ingest.checkpointMs=600000'] })
  const cids: string[] = []
  for (const username of ['a', 'b', 'c']) {
    const r = await d.request({ method: 'POST', path: '/v1/data/instagram.profile', body: { username } })
    assert.equal(r.status, 201, r.body.toString())
    cids.push(r.json.url.slice('ipfs://'.length))
  }
  await d.kill('SIGKILL')
  for (const cid of cids) assert.equal(await readStoredBlock(d.home, CID.parse(cid)), null, 'only in the killed daemon\'s memory')

  const doctor = await runCli(d.home, ['doctor', '--json'])
  assert.equal(doctor.code, 0, doctor.stdout + doctor.stderr)
  const report = JSON.parse(doctor.stdout)
  assert.equal(report.checked, 3)
  assert.deepEqual(report.restored, [], 'nothing stored again under a new CID')
  d = await startDaemonProcess(t, { home: d.home.root })
  for (const cid of cids) assert.equal((await d.request({ path: `/v1/storage/${cid}` })).status, 200)
})
