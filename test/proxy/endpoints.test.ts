// Every upstream endpoint (docs/protocol.md §4) through the proxy on a real unix socket, against the simulator.
import { test } from 'node:test'
import assert from 'node:assert/strict'
import type { DestinationStream } from 'pino'
import { startHarness, serveProxy, socketRequest } from '../support/upstream-proxy-harness.js'
import { audioBytes } from '../support/upstream-sim-state.js'
import { eventually } from '../support/upstream-stream-client.js'
import { tempDir } from '../support/tmp.js'
import { createLogger } from '../../src/log.js'
import { homeLayout } from '../../src/home.js'
import { openDatabase, openKv, createDurableQueue } from '../../src/db/index.js'
import { createProxy, type QueuedImageRequest } from '../../src/proxy/index.js'

const API = '/api/v0'

test('login by email code stores the token in the daemon and never returns it', async (t) => {
  const h = await startHarness(t, { token: 'none' })
  const missing = await h.request('GET', `${API}/conversations`)
  assert.equal(missing.status, 401)
  assert.equal(missing.json.error.errorCode, 'UPSTREAM_AUTH_MISSING')

  const start = await h.request('POST', '/v1/upstream/login/start', { email: 'me@example.org' })
  assert.equal(start.status, 200)
  const code = h.sim.state.loginCodes.get('me@example.org')
  assert.match(code ?? '', /^\d{6}$/)

  const wrong = await h.request('POST', '/v1/upstream/login/finish', { email: 'me@example.org', code: code === '000000' ? '111111' : '000000' })
  assert.equal(wrong.status, 401)
  assert.match(wrong.json.error.message, /Invalid login code/)

  await h.request('POST', '/v1/upstream/login/start', { email: 'me@example.org' })
  const fresh = h.sim.state.loginCodes.get('me@example.org')!
  const finish = await h.request('POST', '/v1/upstream/login/finish', { email: 'me@example.org', code: fresh })
  assert.equal(finish.status, 200, finish.text)
  assert.equal(finish.json.success, true)
  assert.equal(finish.json.email, 'me@example.org')
  assert.ok(Date.parse(finish.json.expiresAt) > Date.now())
  assert.doesNotMatch(finish.text, /eyJ/) // no JWT in the answer

  const list = await h.request('GET', `${API}/conversations`)
  assert.equal(list.status, 200)
  assert.deepEqual(list.json, { success: true, conversations: [] })

  const status = await h.request('GET', '/v1/upstream/status')
  assert.equal(status.json.auth.present, true)
  assert.equal(status.json.auth.email, 'me@example.org')
  assert.equal(status.json.upstream.reachable, true)

  const bad = await h.request('POST', '/v1/upstream/login/finish', { email: 'me@example.org', code: 'abc' })
  assert.equal(bad.status, 400)
  assert.equal(bad.json.error.errorCode, 'INVALID_ARGUMENT')
})

test('a pasted token is stored and can be forgotten', async (t) => {
  const h = await startHarness(t, { token: 'none' })
  const token = h.sim.issueToken()
  const saved = await h.request('POST', '/v1/upstream/token', { token })
  assert.equal(saved.status, 200)
  assert.equal(saved.json.present, true)
  assert.equal((await h.request('GET', `${API}/accounts/me`)).status, 200)
  assert.equal((await h.request('DELETE', '/v1/upstream/token')).status, 200)
  const after = await h.request('GET', `${API}/accounts/me`)
  assert.equal(after.json.error.errorCode, 'UPSTREAM_AUTH_MISSING')
  const invalid = await h.request('POST', '/v1/upstream/token', { token: 'has spaces in it' })
  assert.equal(invalid.json.error.errorCode, 'INVALID_ARGUMENT')
})

test('an expired token is refused before anything is sent upstream', async (t) => {
  const h = await startHarness(t, { token: 'expired' })
  const res = await h.request('POST', `${API}/images`, { prompt: 'a cat' })
  assert.equal(res.status, 401)
  assert.equal(res.json.error.errorCode, 'UPSTREAM_AUTH_EXPIRED')
  assert.ok(res.json.error.details.expiresAt)
  assert.equal(h.sim.requests.length, 0)
})

test('conversations: create, list, get, chat, chat with message field and audio, clear', async (t) => {
  const h = await startHarness(t)
  const ada = h.sim.state.addCharacter('Ada')

  const created = await h.request('POST', `${API}/conversations`, { characterId: ada.id })
  assert.equal(created.status, 201)
  assert.equal(created.json.success, true)
  const id = created.json.id as string

  const list = await h.request('GET', `${API}/conversations`)
  assert.equal(list.json.conversations.length, 1)
  assert.equal(list.json.conversations[0].id, id)
  assert.deepEqual(list.json.conversations[0].speakers.map((s: any) => s.type), ['account', 'character'])

  const chat = await h.request('POST', `${API}/conversations/${id}/chat`, { data: 'hello', mimeType: 'text/plain', allow: ['text/plain'] })
  assert.equal(chat.status, 201)
  assert.deepEqual(chat.json, { data: 'Ada heard you say: hello', mimeType: 'text/plain' })

  h.sim.options.replyField = 'message'
  const chat2 = await h.request('POST', `${API}/conversations/${id}/chat`, { data: 'again', mimeType: 'text/plain', allow: ['text/plain'] })
  assert.deepEqual(chat2.json, { message: 'Ada heard you say: again', mimeType: 'text/plain' })

  const voice = await h.request('POST', `${API}/conversations/${id}/chat`, { data: 'sing', mimeType: 'text/plain', allow: ['audio/mpeg'] })
  assert.equal(voice.json.mimeType, 'audio/mpeg')
  assert.deepEqual(Buffer.from(voice.json.message, 'base64'), audioBytes('Ada heard you say: sing'))

  h.sim.options.audioAs = 'url'
  const voiceUrl = await h.request('POST', `${API}/conversations/${id}/chat`, { data: 'hum', mimeType: 'text/plain', allow: ['audio/mp3'] })
  assert.match(voiceUrl.json.message, /^http:\/\/127\.0\.0\.1:\d+\/files\/audio\//)

  const detail = await h.request('GET', `${API}/conversations/${id}`)
  assert.equal(detail.status, 200)
  assert.equal(detail.json.id, id)
  assert.equal(detail.json.messages.length, 8)
  assert.deepEqual(Object.keys(detail.json.messages[0]).sort(), ['content', 'created', 'id', 'mimetype', 'participant_id', 'participant_type'])

  h.sim.options.conversationShape = 'wrapped'
  const wrapped = await h.request('GET', `${API}/conversations/${id}`)
  assert.equal(wrapped.json.success, true)
  assert.equal(wrapped.json.conversation.messages[0].participantType, 'account')

  const cleared = await h.request('POST', `${API}/conversations/${id}/clear`)
  assert.deepEqual(cleared.json, { success: 'true' })
  const empty = await h.request('GET', `${API}/conversations/${id}`)
  assert.deepEqual(empty.json.conversation.messages, [])
  assert.equal(empty.json.conversation.id, id)
})

test('upstream errors pass through with their status and body', async (t) => {
  const h = await startHarness(t)
  const missing = await h.request('GET', `${API}/conversations/nope`)
  assert.equal(missing.status, 404)
  assert.deepEqual(missing.json, { statusCode: 404, name: 'ConversationNotFoundException', message: 'Conversation nope not found' })

  const badImage = await h.request('POST', `${API}/images`, { prompt: 'x', width: 4096 })
  assert.equal(badImage.status, 400)
  assert.equal(badImage.json.name, 'BadRequestException')

  await h.sim.setFault({ kind: 'status', status: 500, times: 1 })
  const boom = await h.request('GET', `${API}/conversations`)
  assert.equal(boom.status, 500)
  assert.deepEqual(boom.json, { statusCode: 500, name: 'InternalServerErrorException', message: 'simulated failure' })

  const unknown = await h.request('GET', `${API}/no/such/thing`)
  assert.equal(unknown.status, 404)
  assert.equal(unknown.json.name, 'NotFoundException')
})

test('other paths are forwarded unchanged: query strings, binary answers', async (t) => {
  const h = await startHarness(t)
  h.sim.state.addCharacter('Ada')
  h.sim.state.addCharacter('Grace')
  const search = await h.request('GET', `${API}/characters?search=gra`)
  assert.deepEqual(search.json.characters.map((c: any) => c.name), ['Grace'])
  assert.equal(h.sim.requests.at(-1)!.path, '/api/v0/characters?search=gra')

  const me = await h.request('GET', `${API}/accounts/me`)
  assert.equal(me.json.account.email, 'owner@example.org')

  const speak = await new Promise<Buffer>((resolve, reject) => {
    import('node:http').then(({ request }) => {
      const r = request({ socketPath: h.socket, method: 'POST', path: `${API}/speak`, headers: { 'content-type': 'application/json' } }, (res) => {
        assert.equal(res.headers['content-type'], 'audio/mpeg')
        const chunks: Buffer[] = []
        res.on('data', (c: Buffer) => chunks.push(c)).on('end', () => resolve(Buffer.concat(chunks))).on('error', reject)
      })
      r.end(JSON.stringify({ text: 'hi there' }))
    }).catch(reject)
  })
  assert.deepEqual(speak, audioBytes('hi there'))
})

test('the token stays in the daemon: the app authorization and cookies never reach upstream, answers never hold the token', async (t) => {
  const h = await startHarness(t)
  const ada = h.sim.state.addCharacter('Ada')
  const appHeaders = { authorization: 'Bearer app-own-secret', cookie: 'session=app-cookie', 'x-custom': 'kept', connection: 'keep-alive, x-hop', 'x-hop': 'dropped', 'proxy-authorization': 'Basic Zm9v', te: 'trailers' }
  const created = await h.request('POST', `${API}/conversations`, { characterId: ada.id }, appHeaders)
  const id = created.json.id as string
  const answers = [created,
    await h.request('GET', `${API}/conversations`, undefined, appHeaders),
    await h.request('POST', `${API}/conversations/${id}/chat`, { data: 'hi', mimeType: 'text/plain' }, appHeaders),
    await h.request('GET', `${API}/conversations/${id}`, undefined, appHeaders),
    await h.request('GET', '/v1/upstream/status'),
    await h.request('GET', '/v1/images')]
  for (const a of answers) {
    assert.ok(!a.text.includes(h.token!), 'answer holds the token')
    assert.ok(!JSON.stringify(a.headers).includes(h.token!), 'headers hold the token')
  }
  assert.equal(h.sim.requests.length, 4)
  for (const r of h.sim.requests) {
    assert.equal(r.headers.authorization, `Bearer ${h.token}`)
    assert.equal(r.headers.cookie, undefined)
    assert.equal(r.headers['x-custom'], 'kept')
    assert.equal(r.headers['x-hop'], undefined)
    assert.equal(r.headers['proxy-authorization'], undefined)
    assert.equal(r.headers.te, undefined)
    assert.ok(!JSON.stringify(r.headers).includes('app-own-secret'))
  }
})

test('character image models pass through; a status change is recorded for hearth status', async (t) => {
  const h = await startHarness(t)
  const ada = h.sim.state.addCharacter('Ada', { modelStatus: 'IN_PROGRESS' })
  const first = await h.request('GET', `${API}/characters/${ada.id}/images/models`)
  assert.equal(first.status, 200)
  assert.equal(first.json.models[0].status, 'IN_PROGRESS')
  let status = await h.proxy.status()
  assert.equal(status.models.characters[0]!.ready, false)
  assert.deepEqual(status.models.changes, [])

  h.sim.state.setModelStatus(ada.id, 'SUCCESS')
  const before = Date.now()
  const second = await h.request('GET', `${API}/characters/${ada.id}/images/models`)
  assert.equal(second.json.models[0].status, 'SUCCESS')
  status = await h.proxy.status()
  assert.equal(status.models.characters[0]!.ready, true)
  assert.equal(status.models.changes.length, 1)
  const change = status.models.changes[0]!
  assert.deepEqual({ ...change, at: 0 }, { characterId: ada.id, modelId: ada.models[0]!.id, from: 'IN_PROGRESS', to: 'SUCCESS', at: 0 })
  assert.ok(change.at >= before)

  // Cached for offline reads.
  await h.sim.setFault({ kind: 'down' })
  const offline = await h.request('GET', `${API}/characters/${ada.id}/images/models`)
  assert.equal(offline.headers['x-hearth-cache'], 'hit')
  assert.equal(offline.json.models[0].status, 'SUCCESS')
})

test('nothing the proxy logs holds the token, even at trace level', async (t) => {
  const lines: string[] = []
  const logger = createLogger({ level: 'trace', destination: { write: (s: string) => { lines.push(s) } } as unknown as DestinationStream })
  const h = await startHarness(t, { token: 'none', logger })
  await h.request('POST', '/v1/upstream/login/start', { email: 'me@example.org' })
  await h.request('POST', '/v1/upstream/login/finish', { email: 'me@example.org', code: h.sim.state.loginCodes.get('me@example.org') })
  const ada = h.sim.state.addCharacter('Ada', { modelStatus: 'IN_PROGRESS' })
  await h.request('GET', `${API}/characters/${ada.id}/images/models`)
  h.sim.state.setModelStatus(ada.id, 'SUCCESS')
  await h.request('GET', `${API}/characters/${ada.id}/images/models`)
  const jobId = (await h.request('POST', `${API}/images`, { prompt: 'p', synchronous: true })).json.jobId as string
  await eventually('downloaded', async () => (await h.request('GET', `/v1/images/${jobId}`)).json.state === 'done')
  await h.sim.setFault({ kind: 'down' })
  await h.request('POST', `${API}/images`, { prompt: 'queued' })
  const token = h.sim.requests.find((r) => r.headers.authorization !== undefined)!.headers.authorization!.toString().slice('Bearer '.length)
  assert.ok(lines.length > 5, 'the proxy logged')
  assert.ok(lines.some((l) => l.includes('character model status changed')))
  for (const l of lines) assert.ok(!l.includes(token), `token in log line ${l}`)
  assert.ok(!lines.join('').includes(token.split('.')[2]!))
})

test('without a configured upstream, /api/v0 answers 503 and the local endpoints still work', async (t) => {
  const root = await tempDir(t)
  const home = homeLayout(root)
  const db = await openDatabase(home.index)
  const proxy = createProxy({ config: { baseUrl: null }, home, kv: openKv(db, 'proxy'), queue: createDurableQueue<QueuedImageRequest>(db, 'q') })
  await proxy.start()
  const server = await serveProxy(home.socket, () => proxy)
  t.after(async () => { await server.close(); await proxy.stop(); await db.close() })
  const api = await socketRequest(home.socket, 'GET', `${API}/conversations`)
  assert.equal(api.status, 503)
  assert.equal(api.json.error.errorCode, 'UPSTREAM_UNAVAILABLE')
  assert.match(api.json.error.message, /upstream\.baseUrl/)
  assert.deepEqual((await socketRequest(home.socket, 'GET', '/v1/images')).json, { images: [] })
  const status = (await socketRequest(home.socket, 'GET', '/v1/upstream/status')).json
  assert.equal(status.configured, false)
  assert.equal(status.baseUrl, null)
  assert.equal((await socketRequest(home.socket, 'GET', '/v1/upstream/nope')).json.error.errorCode, 'NOT_FOUND')
  assert.equal((await socketRequest(home.socket, 'POST', '/v1/upstream/status')).json.error.errorCode, 'METHOD_NOT_ALLOWED')
  assert.equal((await socketRequest(home.socket, 'POST', '/v1/upstream/token', '{nope')).json.error.errorCode, 'INVALID_JSON')
})

test('an app body over the limit is refused with BODY_TOO_LARGE before anything goes upstream', async (t) => {
  const h = await startHarness(t, { config: { maxBodyBytes: 1024 } })
  const res = await h.request('POST', `${API}/images`, { prompt: 'x'.repeat(2000) })
  assert.equal(res.status, 413)
  assert.equal(res.json.error.errorCode, 'BODY_TOO_LARGE')
  assert.equal(h.sim.requests.length, 0)
})
