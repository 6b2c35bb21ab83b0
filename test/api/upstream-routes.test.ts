// /v1/upstream/* and /v1/images* are ordinary routes of the one router: bodies are checked field
// by field, wrong methods answer 405 with Allow, bad paths the one error shape.
import { test } from 'node:test'
import assert from 'node:assert/strict'
import { startHarness } from '../support/upstream-proxy-harness.js'

test('upstream endpoint bodies are validated before anything reaches the upstream', async (t) => {
  const h = await startHarness(t, { token: 'none' })
  const cases: Array<{ path: string, body: unknown, reason: RegExp }> = [
    { path: '/v1/upstream/login/start', body: { email: 42 }, reason: /email must be a string/ },
    { path: '/v1/upstream/login/start', body: {}, reason: /email is required/ },
    { path: '/v1/upstream/login/start', body: ['me@example.org'], reason: /not an object/ },
    { path: '/v1/upstream/login/start', body: { email: 'me@example.org', admin: true }, reason: /unknown field "admin"/ },
    { path: '/v1/upstream/login/start', body: { email: 'x'.repeat(400) + '@example.org' }, reason: /longer than 320/ },
    { path: '/v1/upstream/login/finish', body: { email: 'me@example.org', code: 123456 }, reason: /code must be a string/ },
    { path: '/v1/upstream/token', body: { token: { nested: true } }, reason: /token must be a string/ },
    { path: '/v1/upstream/token', body: null, reason: /not an object/ }
  ]
  for (const c of cases) {
    const res = await h.request('POST', c.path, c.body)
    assert.equal(res.status, 400, `${c.path} ${JSON.stringify(c.body)}: ${res.text}`)
    assert.equal(res.json.error.errorCode, 'INVALID_BODY', res.text)
    assert.ok(res.json.error.details.reasons.some((r: string) => c.reason.test(r)), res.text)
  }
  const deep = await h.request('POST', '/v1/upstream/token', '{"token":' + '['.repeat(20_000) + ']'.repeat(20_000) + '}')
  assert.equal(deep.json.error.errorCode, 'JSON_TOO_DEEP')
  const noType = await h.request('POST', '/v1/upstream/token', '{"token":"x"}', { 'content-type': 'text/plain' })
  assert.equal(noType.json.error.errorCode, 'UNSUPPORTED_MEDIA_TYPE')
  assert.equal(h.sim.requests.length, 0, 'nothing went upstream')
})

test('wrong methods answer 405 with Allow; unknown ids and bad encodings the one error shape', async (t) => {
  const h = await startHarness(t)
  const cases: Array<[string, string, string]> = [
    ['POST', '/v1/upstream/status', 'GET, HEAD'],
    ['PUT', '/v1/upstream/token', 'POST, DELETE'],
    ['GET', '/v1/upstream/login/start', 'POST'],
    ['DELETE', '/v1/images', 'GET, HEAD'],
    ['POST', '/v1/images/abc', 'GET, HEAD']
  ]
  for (const [method, path, allow] of cases) {
    const res = await h.request(method, path)
    assert.equal(res.status, 405, `${method} ${path}`)
    assert.equal(res.json.error.errorCode, 'METHOD_NOT_ALLOWED')
    assert.equal(res.headers.allow, allow, `${method} ${path}`)
  }
  assert.equal((await h.request('GET', '/v1/images/nope')).json.error.errorCode, 'NOT_FOUND')
  assert.equal((await h.request('GET', '/v1/images/%E0%A4%A')).json.error.errorCode, 'INVALID_PATH')
  assert.equal((await h.request('GET', '/v1/upstream/nope')).json.error.errorCode, 'NOT_FOUND')
  assert.equal((await h.request('GET', '/v1/images/../upstream/status')).json.error.errorCode, 'INVALID_PATH')
})
