// Upstream away or broken: cached reads, fast-failing writes, queued image requests, 502s.
import { test } from 'node:test'
import assert from 'node:assert/strict'
import { readdir } from 'node:fs/promises'
import { join } from 'node:path'
import { startHarness, type Harness } from '../support/upstream-proxy-harness.js'
import { openStream, eventually } from '../support/upstream-stream-client.js'

const API = '/api/v0'

async function conversationWithChat (h: Harness): Promise<string> {
  const ada = h.sim.state.addCharacter('Ada')
  const id = (await h.request('POST', `${API}/conversations`, { characterId: ada.id })).json.id as string
  await h.request('POST', `${API}/conversations/${id}/chat`, { data: 'first', mimeType: 'text/plain' })
  return id
}

test('offline: conversations and messages seen before answer from the cache, marked by a header', async (t) => {
  const h = await startHarness(t)
  const id = await conversationWithChat(h)
  const live = await h.request('GET', `${API}/conversations`)
  const liveDetail = await h.request('GET', `${API}/conversations/${id}`)
  assert.equal(live.headers['x-hearth-cache'], undefined)

  // Exchanges after the detail was fetched: a plain chat and a streamed one.
  await h.request('POST', `${API}/conversations/${id}/chat`, { data: 'second', mimeType: 'text/plain' })
  const s = await openStream(h.socket, `${API}/conversations/${id}/chat/stream`, { data: 'third', mimeType: 'text/plain' })
  await s.rest()

  await h.sim.setFault({ kind: 'down' })
  const list = await h.request('GET', `${API}/conversations`)
  assert.equal(list.status, 200)
  assert.equal(list.headers['x-hearth-cache'], 'hit')
  assert.ok(!Number.isNaN(Date.parse(String(list.headers['x-hearth-cached-at']))))
  assert.deepEqual(list.json, live.json)

  const detail = await h.request('GET', `${API}/conversations/${id}`)
  assert.equal(detail.headers['x-hearth-cache'], 'hit')
  const contents = detail.json.messages.map((m: any) => `${m.participant_type}:${m.content}`)
  assert.deepEqual(contents, [
    'account:first', 'character:Ada heard you say: first',
    'account:second', 'character:Ada heard you say: second',
    'account:third', 'character:Ada heard you say: third'
  ])
  assert.deepEqual(detail.json.messages.slice(0, 2), liveDetail.json.messages)
  assert.deepEqual(Object.keys(detail.json.messages[5]).sort(), Object.keys(liveDetail.json.messages[0]).sort())

  const never = await h.request('GET', `${API}/conversations/never-seen`)
  assert.equal(never.status, 503)
  assert.equal(never.json.error.errorCode, 'UPSTREAM_UNAVAILABLE')

  const status = await h.proxy.status()
  assert.equal(status.upstream.reachable, false)
})

test('offline: the wrapped camelCase shape stays wrapped when merged from the cache', async (t) => {
  const h = await startHarness(t, { sim: { conversationShape: 'wrapped' } })
  const id = await conversationWithChat(h)
  await h.request('GET', `${API}/conversations/${id}`)
  await h.request('POST', `${API}/conversations/${id}/chat`, { data: 'later', mimeType: 'text/plain' })
  await h.sim.setFault({ kind: 'down' })
  const detail = await h.request('GET', `${API}/conversations/${id}`)
  assert.equal(detail.json.success, true)
  const last = detail.json.conversation.messages.at(-1)
  assert.equal(last.participantType, 'character')
  assert.equal(last.mimeType, 'text/plain')
  assert.equal(last.content, 'Ada heard you say: later')
  assert.equal(detail.json.conversation.messages.length, 4)
})

test('a clear empties the cached conversation too', async (t) => {
  const h = await startHarness(t)
  const id = await conversationWithChat(h)
  await h.request('GET', `${API}/conversations/${id}`)
  await h.request('POST', `${API}/conversations/${id}/clear`)
  await h.sim.setFault({ kind: 'down' })
  const detail = await h.request('GET', `${API}/conversations/${id}`)
  assert.equal(detail.headers['x-hearth-cache'], 'hit')
  assert.deepEqual(detail.json.messages, [])
})

test('offline: writes fail fast with UPSTREAM_UNAVAILABLE and nothing is cached for them', async (t) => {
  const h = await startHarness(t)
  const id = await conversationWithChat(h)
  await h.sim.setFault({ kind: 'down' })
  for (const [method, path, body] of [
    ['POST', `${API}/conversations/${id}/chat`, { data: 'x', mimeType: 'text/plain' }],
    ['POST', `${API}/conversations/${id}/chat/stream`, { data: 'x', mimeType: 'text/plain' }],
    ['POST', `${API}/conversations/${id}/clear`, undefined],
    ['POST', `${API}/conversations`, { characterId: 'x' }],
    ['GET', `${API}/accounts/me`, undefined]
  ] as const) {
    const res = await h.request(method, path, body)
    assert.equal(res.status, 503, `${method} ${path}`)
    assert.equal(res.json.error.errorCode, 'UPSTREAM_UNAVAILABLE')
    assert.equal(res.json.error.code, 503)
  }
})

test('an image request made offline is queued, survives a restart, and resolves to the upstream job', async (t) => {
  const h = await startHarness(t, { config: { queueRetryMs: 60_000 } })
  await h.sim.setFault({ kind: 'down' })
  const queued = await h.request('POST', `${API}/images`, { prompt: 'a lighthouse at dusk', samples: 2 })
  assert.equal(queued.status, 202)
  assert.equal(queued.json.success, true)
  assert.equal(queued.json.queued, true)
  const localId = queued.json.jobId as string
  assert.match(localId, /^local-[0-9a-f-]{36}$/)

  const pending = await h.request('GET', `${API}/jobs/${localId}`)
  assert.equal(pending.status, 200)
  assert.equal(pending.json.job.id, localId)
  assert.equal(pending.json.job.status, 'CREATED')
  assert.equal(pending.json.queued, true)
  assert.equal((await h.proxy.status()).queuedImages, 1)

  await h.restart()
  await h.sim.setFault(null)
  // Any answer from the upstream means it is back: the queue drains without waiting for its timer.
  await h.request('GET', `${API}/conversations`)
  await eventually('the queued request submitted', async () => (await h.proxy.status()).queuedImages === 0)
  const submitted = h.sim.requests.filter((r) => r.method === 'POST' && r.path === '/api/v0/images')
  assert.equal(submitted.length, 1)
  assert.deepEqual(JSON.parse(submitted[0]!.body), { prompt: 'a lighthouse at dusk', samples: 2 })
  assert.equal(submitted[0]!.headers.authorization, `Bearer ${h.token}`)

  const resolved = await h.request('GET', `${API}/jobs/${localId}`)
  assert.equal(resolved.status, 200)
  const upstreamId = [...h.sim.state.jobs.keys()][0]!
  assert.equal(resolved.json.job.id, upstreamId)
  assert.equal(resolved.headers['x-hearth-job-id'], upstreamId)

  await eventually('outputs downloaded', async () => (await h.request('GET', `/v1/images/${localId}`)).json.state === 'done')
  const view = (await h.request('GET', `/v1/images/${localId}`)).json
  assert.equal(view.jobId, upstreamId)
  assert.equal(view.localJobId, localId)
  assert.equal(view.files.length, 2)
  assert.deepEqual((await readdir(join(h.home.images, upstreamId))).sort(), ['image-0.png', 'image-1.png', 'manifest.json'])
})

test('a queued image request the upstream refuses reports the upstream answer', async (t) => {
  const h = await startHarness(t)
  await h.sim.setFault({ kind: 'down' })
  const queued = await h.request('POST', `${API}/images`, { prompt: 'too wide', width: 5000 })
  assert.equal(queued.status, 202)
  await h.sim.setFault(null)
  await eventually('queue drained', async () => (await h.proxy.status()).queuedImages === 0)
  const job = await h.request('GET', `${API}/jobs/${queued.json.jobId}`)
  assert.equal(job.status, 400)
  assert.equal(job.json.name, 'BadRequestException')
  const view = (await h.request('GET', `/v1/images/${queued.json.jobId}`)).json
  assert.equal(view.state, 'rejected')
  assert.equal((await h.request('GET', `${API}/jobs/local-00000000-0000-0000-0000-000000000000`)).json.error.errorCode, 'NOT_FOUND')
})

test('broken upstream answers become 502 UPSTREAM_BAD_RESPONSE', async (t) => {
  const h = await startHarness(t)
  for (const fault of [{ kind: 'non-json' }, { kind: 'truncated' }, { kind: 'cut' }] as const) {
    await h.sim.setFault({ ...fault, times: 1 })
    const res = await h.request('GET', `${API}/conversations`)
    assert.equal(res.status, 502, fault.kind)
    assert.equal(res.json.error.errorCode, 'UPSTREAM_BAD_RESPONSE')
    assert.equal(res.json.error.details.upstreamStatus, 200)
  }
  assert.equal((await h.request('GET', `${API}/conversations`)).status, 200)
})

test('a slow upstream times out with TIMEOUT, and a GET falls back to the cache', async (t) => {
  const h = await startHarness(t, { config: { timeoutMs: 1000 } })
  h.sim.state.addCharacter('Ada')
  await h.request('GET', `${API}/conversations`)
  await h.sim.setFault({ kind: 'slow', delayMs: 3000, times: 2 })
  const cached = await h.request('GET', `${API}/conversations`)
  assert.equal(cached.headers['x-hearth-cache'], 'hit')
  const slowWrite = await h.request('POST', `${API}/conversations`, { characterId: 'x' })
  assert.equal(slowWrite.status, 504)
  assert.equal(slowWrite.json.error.errorCode, 'TIMEOUT')
})
