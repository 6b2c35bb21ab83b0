// Image jobs followed in the background and their outputs kept under <home>/images/<jobId>/.
import { test } from 'node:test'
import assert from 'node:assert/strict'
import { readFile, readdir, stat } from 'node:fs/promises'
import { join } from 'node:path'
import { createHash } from 'node:crypto'
import { startHarness } from '../support/upstream-proxy-harness.js'
import { eventually } from '../support/upstream-stream-client.js'
import { SimState } from '../support/upstream-sim-state.js'

const API = '/api/v0'
const sha256 = (b: Buffer): string => createHash('sha256').update(b).digest('hex')

test('a created job is followed CREATED → IN_PROGRESS → SUCCESS and its outputs are downloaded and listed', async (t) => {
  const h = await startHarness(t, { sim: { jobInProgressAfterMs: 40, jobDoneAfterMs: 120 } })
  const ada = h.sim.state.addCharacter('Ada', { modelStatus: 'SUCCESS' })
  const created = await h.request('POST', `${API}/images`, { prompt: `portrait of <${ada.id}>`, width: 512, height: 512, samples: 3, seed: 7, guidanceScale: 7, loraScale: 0.8 })
  assert.equal(created.status, 201)
  assert.equal(created.json.success, true)
  const jobId = created.json.jobId as string
  assert.ok(created.json.transactionId)

  const job = await h.request('GET', `${API}/jobs/${jobId}`)
  assert.equal(job.json.job.id, jobId)
  assert.equal(job.json.job.type, 'IMAGE_INFERENCE')
  assert.ok(['CREATED', 'IN_PROGRESS', 'SUCCESS'].includes(job.json.job.status))

  await eventually('job downloaded', async () => (await h.request('GET', `/v1/images/${jobId}`)).json.state === 'done')
  const list = await h.request('GET', '/v1/images')
  assert.equal(list.json.images.length, 1)
  const img = list.json.images[0]
  assert.equal(img.jobId, jobId)
  assert.equal(img.status, 'SUCCESS')
  assert.equal(img.prompt, `portrait of <${ada.id}>`)
  assert.equal(img.dir, join(h.home.images, jobId))
  assert.deepEqual(img.files.map((f: any) => f.name), ['image-0.png', 'image-1.png', 'image-2.png'])
  for (const [i, f] of img.files.entries()) {
    const bytes = await readFile(f.path)
    assert.deepEqual(bytes, SimState.imageBytes(jobId, i))
    assert.equal(f.size, bytes.length)
    assert.equal(f.sha256, sha256(bytes))
    assert.equal((await stat(f.path)).mode & 0o777, 0o600)
  }
  const manifest = JSON.parse(await readFile(join(img.dir, 'manifest.json'), 'utf8'))
  assert.equal(manifest.jobId, jobId)
  assert.equal(manifest.files.length, 3)

  // Polls carry the owner's token; downloads from signed URLs on another origin never do.
  const polls = h.sim.requests.filter((r) => r.path.startsWith(`/api/v0/jobs/${jobId}`))
  assert.ok(polls.length >= 2)
  assert.ok(polls.every((r) => r.headers.authorization === `Bearer ${h.token}`))
  const downloads = h.sim.requests.filter((r) => r.path.startsWith(`/files/${jobId}/`))
  assert.equal(downloads.length, 3)
  assert.ok(downloads.every((r) => r.headers.authorization === undefined))

  // The upstream's signed URLs expire; the copies stay.
  const done = await h.request('GET', `${API}/jobs/${jobId}`)
  assert.deepEqual(done.json.job.statuses.map((s: any) => s.status), ['CREATED', 'IN_PROGRESS', 'SUCCESS'])
  h.sim.state.filesExpired = true
  assert.equal((await fetch(done.json.job.outputFiles[0].url)).status, 403)
  assert.deepEqual(await readFile(img.files[0].path), SimState.imageBytes(jobId, 0))
  assert.deepEqual((await h.proxy.listImages()).images[0]!.files.length, 3)
})

test('a synchronous request downloads its outputs without polling', async (t) => {
  const h = await startHarness(t)
  const created = await h.request('POST', `${API}/images`, { prompt: 'a boat', synchronous: true, samples: 1 })
  assert.equal(created.json.output.length, 1)
  const jobId = created.json.jobId as string
  await eventually('downloaded', async () => (await h.request('GET', `/v1/images/${jobId}`)).json.state === 'done')
  assert.deepEqual((await readdir(join(h.home.images, jobId))).sort(), ['image-0.png', 'manifest.json'])
  assert.equal(h.sim.requests.filter((r) => r.path.startsWith('/api/v0/jobs/')).length, 0)
})

test('a failed job is recorded as failed with nothing downloaded', async (t) => {
  const h = await startHarness(t)
  const created = await h.request('POST', `${API}/images`, { prompt: 'a [fail] case' })
  const jobId = created.json.jobId as string
  await eventually('failed', async () => (await h.request('GET', `/v1/images/${jobId}`)).json.state === 'failed')
  const view = (await h.request('GET', `/v1/images/${jobId}`)).json
  assert.equal(view.status, 'FAILED')
  assert.deepEqual(view.files, [])
  assert.equal((await h.request('GET', `${API}/jobs/${jobId}`)).json.job.status, 'FAILED')
})

test('an output whose size differs from the announced one is not kept', async (t) => {
  const h = await startHarness(t, { sim: { misreportFileSize: 3 } })
  const jobId = (await h.request('POST', `${API}/images`, { prompt: 'liar' })).json.jobId as string
  await eventually('failed', async () => (await h.request('GET', `/v1/images/${jobId}`)).json.state === 'failed')
  const view = (await h.request('GET', `/v1/images/${jobId}`)).json
  assert.match(view.error, /announced/)
  const left = await readdir(join(h.home.images, jobId)).catch(() => [])
  assert.deepEqual(left, [])
})

test('following resumes after a restart, and stops at the deadline', async (t) => {
  const h = await startHarness(t, { sim: { jobInProgressAfterMs: 10, jobDoneAfterMs: 400 } })
  const jobId = (await h.request('POST', `${API}/images`, { prompt: 'slow one' })).json.jobId as string
  await h.restart()
  await eventually('downloaded after restart', async () => (await h.request('GET', `/v1/images/${jobId}`)).json.state === 'done')

  const late = await startHarness(t, { sim: { jobDoneAfterMs: 60_000 }, config: { jobDeadlineMs: 150 } })
  const lateId = (await late.request('POST', `${API}/images`, { prompt: 'never done' })).json.jobId as string
  await eventually('expired', async () => (await late.request('GET', `/v1/images/${lateId}`)).json.state === 'expired')
  const counts = (await late.proxy.status()).images
  assert.equal(counts.expired, 1)
})
