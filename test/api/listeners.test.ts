// One router, several listeners: each serves the routes whose access it grants, with its own
// authentication; every listener answers in the one error shape, also for what the HTTP parser refuses.
import { test } from 'node:test'
import assert from 'node:assert/strict'
import { connect, type NetConnectOpts } from 'node:net'
import { Router } from '../../src/api/router.js'
import { ok } from '../../src/api/http.js'
import { HearthError } from '../../src/errors.js'
import type { Listener } from '../../src/api/server.js'
import { httpCall, rawExchange, startApi } from '../support/api-server.js'

function routes (): Router {
  const router = new Router()
  router.get('/owner-only', async (req) => ok({ who: req.caller.access, listener: req.listener }))
  router.post('/builder/echo', async (req) => ok({ got: await req.json(), id: req.caller.id ?? null }), { access: ['builder'] })
  router.get('/both', async () => ok({ both: true }), { access: ['builder', 'owner'] })
  router.get('/session', async () => ok({ session: true }), { access: ['ui-session'] })
  router.get('/public', async () => ok({ open: true }), { access: ['public'] })
  return router
}

/** A listener like the builder's: a signature over the body (here: a header equal to its length). */
const builderListener: Listener = {
  name: 'builder',
  serves: ['builder', 'public', 'ui-session'],
  async authenticate (req, ctx) {
    if (req.headers['x-anon'] === '1') return { access: ['public'] }
    const body = await ctx.bytes()
    if (req.headers['x-sig'] !== String(body.length)) throw new HearthError('UNAUTHORIZED', 'bad signature')
    return { access: ['builder', 'public'], id: 'app-1' }
  },
  headers: () => ({ 'access-control-allow-origin': 'http://app.local' }),
  intercept: (req) => req.method === 'OPTIONS' ? { status: 204, headers: { 'access-control-allow-methods': 'GET, POST' } } : null
}

test('a listener serves only the routes whose access it grants, with its own authentication', async (t) => {
  const { api, socket, log } = await startApi(t, routes())
  const { port } = await api.listen(builderListener, { host: '127.0.0.1', port: 0 })
  const builder = { host: '127.0.0.1', port: port! }
  const owner = { socketPath: socket }

  assert.deepEqual((await httpCall(owner, 'GET', '/owner-only')).json, { who: ['owner'], listener: 'owner' })
  assert.equal((await httpCall(owner, 'GET', '/both')).status, 200)
  assert.equal((await httpCall(owner, 'POST', '/builder/echo', { body: '{}', headers: { 'content-type': 'application/json' } })).json.error.errorCode, 'NOT_FOUND', 'builder routes do not exist on the owner socket')

  const body = '{"a":1}'
  const echoed = await httpCall(builder, 'POST', '/builder/echo', { body, headers: { 'content-type': 'application/json', 'x-sig': String(body.length) } })
  assert.equal(echoed.status, 200)
  assert.deepEqual(echoed.json, { got: { a: 1 }, id: 'app-1' }, 'the handler reads the body the authentication already read')
  assert.equal(echoed.headers['access-control-allow-origin'], 'http://app.local')
  assert.equal((await httpCall(builder, 'GET', '/both', { headers: { 'x-sig': '0' } })).status, 200)
  const ownerRoute = await httpCall(builder, 'GET', '/owner-only', { headers: { 'x-sig': '0' } })
  assert.equal(ownerRoute.json.error.errorCode, 'NOT_FOUND', 'owner routes do not exist on the builder listener')
  assert.equal(ownerRoute.headers['access-control-allow-origin'], 'http://app.local', 'errors carry the listener headers')

  const badSig = await httpCall(builder, 'POST', '/builder/echo', { body, headers: { 'content-type': 'application/json', 'x-sig': '1' } })
  assert.equal(badSig.status, 401)
  assert.equal(badSig.json.error.errorCode, 'UNAUTHORIZED')
  assert.ok(log.lines.some((l) => l.msg === 'request refused' && l.listener === 'builder' && l.errorCode === 'UNAUTHORIZED' && l.level === 40), 'a refused TCP request is logged at warn')

  assert.equal((await httpCall(builder, 'GET', '/public', { headers: { 'x-anon': '1' } })).status, 200)
  const noSession = await httpCall(builder, 'GET', '/session', { headers: { 'x-anon': '1' } })
  assert.equal(noSession.status, 401, 'a served route the caller holds no access for')
  assert.equal(noSession.json.error.errorCode, 'UNAUTHORIZED')

  const { port: smallPort } = await api.listen({ ...builderListener, name: 'small', maxBodyBytes: 16 }, { host: '127.0.0.1', port: 0 })
  const big = '{"a":"' + 'x'.repeat(100) + '"}'
  const tooBig = await httpCall({ host: '127.0.0.1', port: smallPort! }, 'POST', '/builder/echo', { body: big, headers: { 'content-type': 'application/json', 'x-sig': String(big.length) } })
  assert.equal(tooBig.json.error.errorCode, 'BODY_TOO_LARGE', 'a listener may have its own body limit')

  const { port: pagePort } = await api.listen({
    name: 'pages',
    serves: ['public'],
    authenticate: () => ({ access: ['public'] }),
    intercept (req, url) {
      if (req.headers.host !== 'ok.local') throw new HearthError('FORBIDDEN', 'not my host')
      return url.pathname === '/secret' ? { status: 200, body: { secret: true } } : null
    }
  }, { host: '127.0.0.1', port: 0 })
  const pages = { host: '127.0.0.1', port: pagePort! }
  assert.equal((await httpCall(pages, 'GET', '/secret', { headers: { host: 'ok.local' } })).status, 200)
  const dotted = await httpCall(pages, 'GET', '/public/../secret', { headers: { host: 'ok.local' } })
  assert.equal(dotted.json.error.errorCode, 'INVALID_PATH', 'an intercept never sees a resolved dot path')
  assert.equal((await httpCall(pages, 'GET', '/secret', { headers: { host: 'evil.example' } })).status, 403)
  assert.ok(log.lines.some((l) => l.msg === 'request refused' && l.listener === 'pages' && l.errorCode === 'FORBIDDEN' && l.step === 'intercept'), 'a refusal by the intercept is logged')

  const preflight = await httpCall(builder, 'OPTIONS', '/builder/echo')
  assert.equal(preflight.status, 204)
  assert.equal(preflight.headers['access-control-allow-methods'], 'GET, POST')
})

/**
 * A chunked body over the limit, and once its whole answer is in, a piece more every 10 ms, as a
 * sender that does not stop would: the answer, and the error that ended the sending (null: every
 * write went through for `ms`). The sender keeps its side open after the answer's end, so only the
 * daemon closing the connection makes its writes fail.
 */
async function sendOnAfterAnswer (target: NetConnectOpts, head: string, ms: number): Promise<{ answer: string, refused: string | null }> {
  return await new Promise((resolve) => {
    const s = connect({ ...target, allowHalfOpen: true })
    const chunks: Buffer[] = []
    const piece = `${(500).toString(16)}\r\n${'x'.repeat(500)}\r\n`
    let sending: NodeJS.Timeout | undefined
    let deadline = setTimeout(() => { settle(null) }, ms) // no answer at all
    const settle = (refused: string | null): void => {
      clearInterval(sending)
      clearTimeout(deadline)
      s.destroy()
      resolve({ answer: Buffer.concat(chunks).toString('utf8'), refused })
    }
    s.on('data', (c: Buffer) => {
      chunks.push(c)
      const text = Buffer.concat(chunks).toString('utf8')
      const headEnd = text.indexOf('\r\n\r\n')
      const length = Number(/\r\ncontent-length: (\d+)/i.exec(text)?.[1] ?? NaN)
      if (sending !== undefined || headEnd < 0 || Buffer.byteLength(text.slice(headEnd + 4)) < length) return
      sending = setInterval(() => { s.write(piece) }, 10)
      clearTimeout(deadline)
      deadline = setTimeout(() => { settle(null) }, ms)
    })
    s.on('error', (err: NodeJS.ErrnoException) => { settle(err.code ?? String(err)) })
    s.write(head + piece.repeat(3))
  })
}

test('an answer written before the body was read whole (over the limit without a length, refused unread) closes the connection: a sender cannot keep the daemon reading', async (t) => {
  const router = routes()
  router.post('/owner/echo', async (req) => ok({ length: (await req.bytes()).byteLength }))
  const { api, socket } = await startApi(t, router, { maxBodyBytes: 1000 })
  const { port } = await api.listen({ ...builderListener, maxBodyBytes: 1000 }, { host: '127.0.0.1', port: 0 })
  const head = (path: string): string => `POST ${path} HTTP/1.1\r\nhost: x\r\ntransfer-encoding: chunked\r\ncontent-type: application/json\r\nx-sig: 1\r\n\r\n`
  const cases = [
    { target: { path: socket }, path: '/owner/echo', status: 413, code: 'BODY_TOO_LARGE' },
    { target: { host: '127.0.0.1', port: port! }, path: '/builder/echo', status: 413, code: 'BODY_TOO_LARGE' },
    { target: { path: socket }, path: '/nothing', status: 404, code: 'NOT_FOUND' }
  ]
  for (const c of cases) {
    const where = `${c.path} on ${JSON.stringify(c.target)}`
    const { answer, refused } = await sendOnAfterAnswer(c.target, head(c.path), 5_000)
    assert.match(answer, new RegExp(`^HTTP/1.1 ${c.status} `), where)
    assert.match(answer, /\r\nconnection: close\r\n/i, where)
    assert.ok(answer.includes(`"errorCode":"${c.code}"`), `${where}: ${answer}`)
    assert.notEqual(refused, null, `${where}: the sender's writes still went through 5 s after the answer`)
  }
  const read = await httpCall({ socketPath: socket }, 'POST', '/owner/echo', { body: '{"a":1}', headers: { 'content-type': 'application/json' } })
  assert.deepEqual(read.json, { length: 7 })
  assert.notEqual(read.headers.connection, 'close', 'a body read whole keeps the connection')
  const missing = await httpCall({ socketPath: socket }, 'GET', '/nothing')
  assert.equal(missing.status, 404)
  assert.notEqual(missing.headers.connection, 'close', 'a request without a body refused at once keeps the connection')
})

test('the owner TCP listener demands the bearer token and logs every refusal', async (t) => {
  const { api, log } = await startApi(t, routes())
  const { port } = await api.listenTcp('127.0.0.1', 0, 'sekret-token')
  const tcp = { host: '127.0.0.1', port }
  assert.equal((await httpCall(tcp, 'GET', '/owner-only', { headers: { authorization: 'Bearer sekret-token' } })).status, 200)
  const refused = await httpCall(tcp, 'GET', '/owner-only', { headers: { authorization: 'Bearer wrong' } })
  assert.equal(refused.status, 401)
  assert.equal(refused.headers['www-authenticate'], 'Bearer')
  const unknown = await httpCall(tcp, 'GET', '/nothing')
  assert.equal(unknown.json.error.errorCode, 'UNAUTHORIZED', 'nothing about routes is revealed before authentication')
  const refusals = log.lines.filter((l) => l.msg === 'request refused' && l.listener === 'owner-tcp')
  assert.equal(refusals.length, 2)
  assert.deepEqual(refusals.map((l) => l.url), ['/owner-only', '/nothing'])
  assert.ok(refusals.every((l) => l.remote === '127.0.0.1' && l.level === 40))
  assert.ok(!JSON.stringify(log.lines).includes('wrong'), 'the offered token is not logged')
})

test('405 names the allowed methods', async (t) => {
  const { socket } = await startApi(t, routes())
  const res = await httpCall({ socketPath: socket }, 'DELETE', '/owner-only')
  assert.equal(res.status, 405)
  assert.equal(res.json.error.errorCode, 'METHOD_NOT_ALLOWED')
  assert.equal(res.headers.allow, 'GET, HEAD')
})

test('what the HTTP parser refuses gets the JSON error shape on every listener', async (t) => {
  const { api, socket, log } = await startApi(t, routes())
  const { port } = await api.listenTcp('127.0.0.1', 0, 'tok')
  const { port: builderPort } = await api.listen(builderListener, { host: '127.0.0.1', port: 0 })
  const targets = [{ path: socket }, { host: '127.0.0.1', port }, { host: '127.0.0.1', port: builderPort! }]
  const cases: Array<{ name: string, bytes: Buffer | string, status: number, code: string }> = [
    { name: 'raw non-ASCII byte in the request line', bytes: Buffer.concat([Buffer.from('POST /v1/data/'), Buffer.from('ïnstagram.profile', 'utf8'), Buffer.from(' HTTP/1.1\r\nhost: x\r\ncontent-length: 2\r\n\r\n{}')]), status: 400, code: 'MALFORMED_REQUEST' },
    { name: 'header without a colon', bytes: 'GET /health HTTP/1.1\r\nhost: x\r\nbroken header\r\n\r\n', status: 400, code: 'MALFORMED_REQUEST' },
    { name: 'control byte in a header value', bytes: 'GET /health HTTP/1.1\r\nhost: x\r\nx-a: a\x01b\r\n\r\n', status: 400, code: 'MALFORMED_REQUEST' },
    { name: 'not HTTP at all', bytes: '\x16\x03\x01\x02\x00\x01\x00\x01\xfc\x03\x03\r\n\r\n', status: 400, code: 'MALFORMED_REQUEST' },
    { name: 'oversize headers', bytes: `GET /health HTTP/1.1\r\nhost: x\r\nx-big: ${'a'.repeat(20_000)}\r\nx-big2: ${'a'.repeat(20_000)}\r\nx-big3: ${'a'.repeat(20_000)}\r\nx-big4: ${'a'.repeat(20_000)}\r\n\r\n`, status: 431, code: 'HEADERS_TOO_LARGE' }
  ]
  for (const target of targets) {
    for (const c of cases) {
      const res = await rawExchange(target, c.bytes)
      const where = `${c.name} on ${JSON.stringify(target)}`
      assert.equal(res.status, c.status, `${where}: ${res.text}`)
      assert.equal(res.headers['content-type'], 'application/json; charset=utf-8', where)
      assert.equal(res.json?.error?.errorCode, c.code, where)
      assert.equal(res.json.error.code, c.status, where)
      assert.equal(Number(res.headers['content-length']), Buffer.byteLength(res.text), where)
    }
  }
  const tcpRefusals = log.lines.filter((l) => l.msg === 'request refused by the HTTP parser' && l.level === 40)
  assert.equal(tcpRefusals.length, cases.length * 2, 'parser refusals on TCP listeners are logged at warn')
})

test('dot segments never reach another route or mount, raw or encoded', async (t) => {
  let mountSaw: string | null = null
  const router = routes()
  router.get('/v1/data/:scope', async (req) => ok({ scope: req.params.scope }))
  const { socket } = await startApi(t, router, { mounts: [{ prefix: '/v1/upstream/', handle: async (req, res) => { mountSaw = req.url ?? ''; res.end('mount') } }, { prefix: '/api/v0/', handle: async (req, res) => { mountSaw = req.url ?? ''; res.end('mount') } }] })
  const paths = [
    '/v1/data/../upstream/status', '/v1/data/%2e%2e/upstream/status', '/v1/data/%2E%2E/upstream/status',
    '/v1/data/..%2Fupstream%2Fstatus', '/v1/data/.%2e%2fupstream', '/v1/data/./x', '/v1/data/..%5Cx',
    '/api/v0/conversations/..%2F..%2Fadmin', '/api/v0/../../v1/data/x', '/v1/upstream/../../owner-only'
  ]
  for (const path of paths) {
    const res = await httpCall({ socketPath: socket }, 'GET', path)
    assert.equal(res.status, 400, `${path}: ${res.text}`)
    assert.equal(res.json.error.errorCode, 'INVALID_PATH', path)
  }
  assert.equal(mountSaw, null, 'no mount saw a dot-segment path')
  const fine = await httpCall({ socketPath: socket }, 'GET', '/v1/data/instagram..profile')
  assert.deepEqual(fine.json, { scope: 'instagram..profile' }, 'dots inside a segment are the route\'s business')
})
