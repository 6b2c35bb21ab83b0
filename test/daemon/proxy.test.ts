// The conversation/image API through the real daemon's socket: credentials added by the daemon,
// streams passed through frame by frame, offline reads from the cache, images kept on disk.
import { test } from 'node:test'
import assert from 'node:assert/strict'
import { startDaemonProcess, runCli } from '../support/daemon.js'
import { startUpstreamSim } from '../support/upstream-sim.js'
import { openStream } from '../support/upstream-stream-client.js'
import { waitFor } from '../support/data-files.js'

test('the daemon proxies /api/v0 with its own credentials, streams, caches and keeps images', async (t) => {
  const sim = await startUpstreamSim({ chunkDelayMs: 20, streamFraming: 'sse' })
  t.after(async () => { await sim.stop() })
  const character = sim.state.addCharacter('Ada', { modelStatus: 'SUCCESS' })
  const d = await startDaemonProcess(t, { env: { HEARTH_UPSTREAM_URL: sim.baseUrl } })

  const token = sim.issueToken({ email: 'owner@example.org', expiresInSec: 3600 })
  const login = await runCli(d.home, ['login', '--token', '-'], token + '\n')
  assert.equal(login.code, 0, login.stderr)

  const created = await d.request({ method: 'POST', path: '/api/v0/conversations', body: { characterId: character.id }, headers: { authorization: 'Bearer app-secret' } })
  assert.ok(created.status === 200 || created.status === 201, created.body.toString())
  assert.equal(created.json.success, true)
  const id = created.json.id as string

  // the daemon's token reached the upstream, the app's own Authorization did not
  const seen = sim.requests.filter((r) => r.path.includes('/conversations'))
  assert.ok(seen.length > 0)
  for (const r of seen) assert.equal(r.headers.authorization, `Bearer ${token}`)
  assert.ok(!created.body.toString().includes(token))

  const stream = await openStream(d.home.socket, `/api/v0/conversations/${id}/chat/stream`, { data: 'hello there', mimeType: 'text/plain', allow: ['text/plain'] })
  assert.equal(stream.status, 200)
  const first = await stream.next()
  assert.ok(first !== null && first.toString().startsWith('data: '))
  assert.ok(!sim.events.includes('stream:end'), 'the first frame arrived before the upstream finished')
  const rest = await stream.rest()
  assert.match(rest, /"finish_reason":"stop"/)

  const detail = await d.request({ path: `/api/v0/conversations/${id}` })
  assert.equal(detail.status, 200)

  // offline: reads answer from the cache, writes fail fast with the documented code
  await sim.setFault({ kind: 'down' })
  const cached = await d.request({ path: `/api/v0/conversations/${id}` })
  assert.equal(cached.status, 200)
  assert.equal(cached.headers['x-hearth-cache'], 'hit')
  const write = await d.request({ method: 'POST', path: `/api/v0/conversations/${id}/chat`, body: { data: 'hi', mimeType: 'text/plain' } })
  assert.equal(write.status, 503)
  assert.equal(write.json.error.errorCode, 'UPSTREAM_UNAVAILABLE')
  await sim.setFault(null)

  const image = await d.request({ method: 'POST', path: '/api/v0/images', body: { prompt: `a portrait of <${character.id}>`, width: 256, height: 256, samples: 1 } })
  assert.ok(image.status === 200 || image.status === 201, image.body.toString())
  const jobId = image.json.jobId as string
  const listed = await waitFor('image downloaded', async () => {
    const r = await d.request({ path: '/v1/images' })
    const entry = r.json.images.find((i: any) => i.jobId === jobId)
    return entry !== undefined && entry.state === 'done' && entry.files.length > 0 ? entry : null
  }, 60_000)
  assert.ok(listed.files[0].path.includes(`images/${jobId}/`), JSON.stringify(listed))

  const status = (await d.request({ path: '/v1/status' })).json
  assert.equal(status.upstream.configured, true)
  assert.equal(status.upstream.auth.present, true)
  assert.ok(!JSON.stringify(status).includes(token))
})
