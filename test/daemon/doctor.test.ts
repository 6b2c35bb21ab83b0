// Issue 12, item 7: damaged blocks and a damaged index are noticed, a start that fails on them
// names the repair, and `hearth doctor` repairs what the data folder still allows.
import { test } from 'node:test'
import assert from 'node:assert/strict'
import { unlink, writeFile } from 'node:fs/promises'
import { join } from 'node:path'
import { CID } from 'multiformats/cid'
import { blockFilePath } from '../../src/storage/raw-blocks.js'
import { startDaemonProcess, runCli } from '../support/daemon.js'
import { waitFor } from '../support/data-files.js'

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
  await writeFile(blockFilePath(d.home.blocks, CID.parse(garbled)), 'not the ciphertext')
  await unlink(blockFilePath(d.home.blocks, CID.parse(deleted)))
  await unlink(blockFilePath(d.home.blocks, CID.parse(lost)))
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
