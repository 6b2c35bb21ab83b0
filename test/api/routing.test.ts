// The request path as the server matches it: the raw path of a target, dot segments refused in
// every spelling, the route table per listener (routes added later included), the reply's JSON.
import assert from 'node:assert/strict'
import { test } from 'node:test'
import { isHearthError } from '../../src/errors.js'
import { ok, wireJson, wireValue } from '../../src/api/http.js'
import { refuseDotSegments } from '../../src/api/path.js'
import { Router } from '../../src/api/router.js'
import { pathOfTarget } from '../../src/api/server.js'
import { httpCall, startApi } from '../support/api-server.js'

test('the raw path of a request target ends at its query or fragment, whichever comes first', () => {
  assert.equal(pathOfTarget('/v1/data/instagram.profile'), '/v1/data/instagram.profile')
  assert.equal(pathOfTarget('/v1/data/a.b?collectedAt=x#y'), '/v1/data/a.b')
  assert.equal(pathOfTarget('/v1/data/a.b#y?z'), '/v1/data/a.b')
  assert.equal(pathOfTarget('?only'), '')
  assert.equal(pathOfTarget('/x/../y?q'), '/x/../y')
})

test('dot segments are refused raw, percent-encoded and behind an encoded slash or a backslash; dotted names pass', () => {
  for (const path of ['/v1/data/instagram.profile', '/v1/.well-known/x', '/a/...', '/a/.b', '/a%2Eb', '/v1/data/a.b/versions']) refuseDotSegments(path)
  for (const path of ['/v1/data/../upstream', '/./x', '/x/..', '/v1/%2E%2E/x', '/v1/%2e/x', '/v1/a%2F..%2Fb', '/v1/a\\..\\b', '/v1/a%5C..']) {
    assert.throws(() => refuseDotSegments(path), (e: unknown) => isHearthError(e, 'INVALID_PATH'), path)
  }
})

test('the route table answers per listener, keeps its order, and sees routes added after a request was matched', async () => {
  const router = new Router()
  const h = (name: string) => async () => ok(name)
  router.get('/v1/things/:id', h('thing'), { access: ['owner', 'builder'] })
  router.get('/v1/things/special', h('special'))
  const owner = ['owner']
  const builder = ['builder']
  assert.equal((await router.match('GET', '/v1/things/special', owner).handler({} as never)).body, 'thing', 'the first route that matches wins')
  assert.deepEqual(router.match('GET', '/v1/things/a%20b', builder).params, { id: 'a b' })
  assert.throws(() => router.match('GET', '/v1/other', builder), (e: unknown) => isHearthError(e, 'NOT_FOUND'))
  router.get('/v1/other', h('other'), { access: ['builder'] })
  router.post('/v1/things/:id', h('post'))
  assert.equal((await router.match('GET', '/v1/other', builder).handler({} as never)).body, 'other', 'a route added later is found')
  assert.throws(() => router.match('GET', '/v1/other', owner), (e: unknown) => isHearthError(e, 'NOT_FOUND'), 'not on a listener that does not serve it')
  assert.equal((await router.match('GET', '/v1/other').handler({} as never)).body, 'other', 'every route when no listener is named')
  assert.throws(() => router.match('DELETE', '/v1/things/x', owner), (e: unknown) => isHearthError(e, 'METHOD_NOT_ALLOWED') && JSON.stringify(e.details?.allow) === '["GET","POST","HEAD"]')
  assert.throws(() => router.match('POST', '/v1/things/x', builder), (e: unknown) => isHearthError(e, 'METHOD_NOT_ALLOWED') && JSON.stringify(e.details?.allow) === '["GET","HEAD"]', 'the builder does not see the owner\'s POST')
  assert.equal(router.match('HEAD', '/v1/things/x', owner).params.id, 'x')
  router.get('/v1/:scope/versions', h('versions'))
  assert.throws(() => router.match('GET', '/v1/%zz/other', owner), (e: unknown) => isHearthError(e, 'INVALID_PATH'), 'a bad encoding in a parameter before a literal segment')
})

test('replies are JSON with bigints as decimal strings; a cycle still throws', () => {
  const body = { id: 12345678901234567890n, nested: [1n, { n: -2n }], at: new Date(0), plain: 'x' }
  assert.equal(wireJson(body), JSON.stringify(body, wireValue))
  assert.equal(wireJson(body), '{"id":"12345678901234567890","nested":["1",{"n":"-2"}],"at":"1970-01-01T00:00:00.000Z","plain":"x"}')
  assert.equal(wireJson({ a: 1 }), '{"a":1}')
  const cycle: Record<string, unknown> = {}
  cycle.self = cycle
  assert.throws(() => wireJson(cycle), TypeError)
})

test('a HEAD answer has the GET route\'s status and headers without its body; each request has its debug line when debug is on', async (t) => {
  const router = new Router()
  router.get('/v1/thing', async () => ok({ a: 1 }, 200, { 'x-thing': 'yes' }))
  const { socket, log } = await startApi(t, router)
  const head = await httpCall({ socketPath: socket }, 'HEAD', '/v1/thing')
  assert.equal(head.status, 200)
  assert.equal(head.headers['x-thing'], 'yes')
  assert.equal(head.text, '')
  const get = await httpCall({ socketPath: socket }, 'GET', '/v1/thing?x=1')
  assert.deepEqual(get.json, { a: 1 })
  assert.equal(get.headers['content-type'], 'application/json; charset=utf-8')
  const lines = log.lines.filter((l) => l.msg === 'request')
  assert.deepEqual(lines.map((l) => [l.method, l.url, l.status]), [['HEAD', '/v1/thing', 200], ['GET', '/v1/thing?x=1', 200]])
  assert.ok(lines.every((l) => typeof l.ms === 'number'))
})
