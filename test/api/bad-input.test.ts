// Every bad request gets a 4xx in the one error shape with its documented code; the daemon stays
// up and nothing stored changes.
import { test } from 'node:test'
import assert from 'node:assert/strict'
import { request } from 'node:http'
import { startDaemonProcess } from '../support/daemon.js'
import { rawExchange } from '../support/api-server.js'

function rawRequest (socketPath: string, opts: { method: string, path: string, headers?: Record<string, string>, body?: string | Buffer }): Promise<{ status: number, json: any }> {
  return new Promise((resolve, reject) => {
    const r = request({ socketPath, method: opts.method, path: opts.path, headers: opts.headers }, (res) => {
      let text = ''
      res.on('data', (c) => { text += c })
      res.on('end', () => {
        let json: any
        try { json = JSON.parse(text) } catch { json = text }
        resolve({ status: res.statusCode!, json })
      })
    })
    r.on('error', reject)
    r.end(opts.body)
  })
}

test('bad input matrix over the socket', async (t) => {
  const d = await startDaemonProcess(t, { args: ['--set', 'api.maxBodyBytes=4096'] })
  const seed = await d.request({ method: 'POST', path: '/v1/data/instagram.profile', body: { username: 'keep' } })
  assert.equal(seed.status, 201)
  const before = (await d.request({ path: '/v1/data/instagram.profile/versions' })).json

  const json = { 'content-type': 'application/json' }
  const cases: Array<{ name: string, method: string, path: string, headers?: Record<string, string>, body?: string | Buffer, status: number, code: string }> = [
    { name: 'uppercase source', method: 'POST', path: '/v1/data/Instagram.profile', headers: json, body: '{}', status: 400, code: 'INVALID_SCOPE' },
    { name: 'one segment', method: 'POST', path: '/v1/data/instagram', headers: json, body: '{}', status: 400, code: 'INVALID_SCOPE' },
    { name: 'four segments', method: 'POST', path: '/v1/data/a.b.c.d', headers: json, body: '{}', status: 400, code: 'INVALID_SCOPE' },
    { name: 'empty segment', method: 'POST', path: '/v1/data/instagram..profile', headers: json, body: '{}', status: 400, code: 'INVALID_SCOPE' },
    { name: 'dot dot', method: 'GET', path: '/v1/data/..', status: 400, code: 'INVALID_PATH' },
    { name: 'encoded dot dot', method: 'GET', path: '/v1/data/%2e%2e', status: 400, code: 'INVALID_PATH' },
    { name: 'dot dot into another route', method: 'GET', path: '/v1/data/../upstream/status', status: 400, code: 'INVALID_PATH' },
    { name: 'encoded slash', method: 'POST', path: '/v1/data/instagram%2Fprofile', headers: json, body: '{}', status: 400, code: 'INVALID_SCOPE' },
    { name: 'bad percent encoding', method: 'GET', path: '/v1/data/%E0%A4%A', status: 400, code: 'INVALID_PATH' },
    { name: 'unicode', method: 'POST', path: `/v1/data/${encodeURIComponent('instagräm.profile')}`, headers: json, body: '{}', status: 400, code: 'INVALID_SCOPE' },
    { name: '10 KB scope', method: 'GET', path: `/v1/data/a.${'b'.repeat(10_000)}`, status: 400, code: 'INVALID_SCOPE' },
    { name: 'non-JSON body', method: 'POST', path: '/v1/data/instagram.profile', headers: json, body: 'username=x', status: 400, code: 'INVALID_JSON' },
    { name: 'invalid UTF-8 body', method: 'POST', path: '/v1/data/instagram.profile', headers: json, body: Buffer.from([0x7b, 0xff, 0x7d]), status: 400, code: 'INVALID_JSON' },
    { name: 'JSON array body', method: 'POST', path: '/v1/data/instagram.profile', headers: json, body: '[{"username":"x"}]', status: 400, code: 'INVALID_BODY' },
    { name: 'JSON string body', method: 'POST', path: '/v1/data/instagram.profile', headers: json, body: '"x"', status: 400, code: 'INVALID_BODY' },
    { name: 'JSON null body', method: 'POST', path: '/v1/data/instagram.profile', headers: json, body: 'null', status: 400, code: 'INVALID_BODY' },
    { name: 'wrong content type', method: 'POST', path: '/v1/data/instagram.profile', headers: { 'content-type': 'text/plain' }, body: '{"username":"x"}', status: 415, code: 'UNSUPPORTED_MEDIA_TYPE' },
    { name: 'no content type', method: 'POST', path: '/v1/data/instagram.profile', body: '{"username":"x"}', status: 415, code: 'UNSUPPORTED_MEDIA_TYPE' },
    { name: 'oversized body', method: 'POST', path: '/v1/data/instagram.profile', headers: json, body: JSON.stringify({ username: 'x'.repeat(10_000) }), status: 413, code: 'BODY_TOO_LARGE' },
    { name: 'schema violation', method: 'POST', path: '/v1/data/instagram.profile', headers: json, body: '{"username": 5}', status: 400, code: 'SCHEMA_VALIDATION_FAILED' },
    { name: 'missing required', method: 'POST', path: '/v1/data/instagram.profile', headers: json, body: '{}', status: 400, code: 'SCHEMA_VALIDATION_FAILED' },
    { name: 'no schema for scope', method: 'POST', path: '/v1/data/nosuch.scope', headers: json, body: '{}', status: 404, code: 'NO_SCHEMA_FOR_SCOPE' },
    { name: 'bad collectedAt', method: 'POST', path: '/v1/data/instagram.profile?collectedAt=yesterday', headers: json, body: '{"username":"x"}', status: 400, code: 'INVALID_ARGUMENT' },
    { name: 'bad at', method: 'GET', path: '/v1/data/instagram.profile?at=2026-13-45', status: 400, code: 'INVALID_ARGUMENT' },
    { name: 'bad fileId', method: 'GET', path: '/v1/data/instagram.profile?fileId=abc', status: 400, code: 'INVALID_ARGUMENT' },
    { name: 'bad limit', method: 'GET', path: '/v1/data?limit=-1', status: 400, code: 'INVALID_ARGUMENT' },
    { name: 'huge limit', method: 'GET', path: '/v1/data/instagram.profile/versions?limit=99999999', status: 400, code: 'INVALID_ARGUMENT' },
    { name: 'unknown route', method: 'GET', path: '/v1/nothing', status: 404, code: 'NOT_FOUND' },
    { name: 'unknown deep route', method: 'GET', path: '/v1/data/instagram.profile/versions/extra', status: 404, code: 'NOT_FOUND' },
    { name: 'wrong method', method: 'PUT', path: '/v1/data/instagram.profile', headers: json, body: '{}', status: 405, code: 'METHOD_NOT_ALLOWED' },
    { name: 'wrong method on health', method: 'POST', path: '/health', status: 405, code: 'METHOD_NOT_ALLOWED' },
    { name: 'unknown schema id', method: 'GET', path: '/v1/schemas/999999', status: 404, code: 'SCHEMA_NOT_FOUND' },
    { name: 'schema lookup bad scope', method: 'GET', path: '/v1/schemas?scope=NOPE', status: 400, code: 'INVALID_SCOPE' },
    { name: 'bad schema definition', method: 'POST', path: '/v1/schemas', headers: json, body: '{"name":"x"}', status: 400, code: 'INVALID_SCHEMA_DEFINITION' },
    { name: 'peer address not a string', method: 'POST', path: '/v1/peers', headers: json, body: '{"multiaddr": 5}', status: 400, code: 'INVALID_BODY' },
    { name: 'peer body with an unknown field', method: 'POST', path: '/v1/peers', headers: json, body: '{"multiaddr": "/ip4/127.0.0.1/tcp/1", "force": true}', status: 400, code: 'INVALID_BODY' },
    { name: 'finished import not an object', method: 'POST', path: '/v1/imports/finished', headers: json, body: '[1]', status: 400, code: 'INVALID_BODY' },
    { name: 'finished import with a negative count', method: 'POST', path: '/v1/imports/finished', headers: json, body: '{"name": "x.zip", "connectorId": "spotify", "startedAt": "2026-01-01T00:00:00Z", "total": {"items": 1, "stored": -1, "duplicate": 0, "rejected": 0, "waiting": 0}}', status: 400, code: 'INVALID_BODY' },
    { name: 'finished import with a bad time and an unknown field', method: 'POST', path: '/v1/imports/finished', headers: json, body: '{"name": "x.zip", "connectorId": "spotify", "startedAt": "yesterday", "total": {"items": 0, "stored": 0, "duplicate": 0, "rejected": 0, "waiting": 0}, "summary": {}}', status: 400, code: 'INVALID_BODY' },
    { name: 'body nested too deep', method: 'POST', path: '/v1/data/instagram.profile', headers: json, body: '{"a":'.repeat(600) + '1' + '}'.repeat(600), status: 400, code: 'JSON_TOO_DEEP' },
    { name: 'number JSON cannot carry', method: 'POST', path: '/v1/data/instagram.profile', headers: json, body: '{"username": "x", "n": 1e400}', status: 400, code: 'NUMBER_NOT_REPRESENTABLE' },
    { name: 'storage cat of a non-CID', method: 'GET', path: '/v1/storage/..%2F..%2Fetc', status: 400, code: 'INVALID_PATH' }
  ]
  for (const c of cases) {
    const res = await rawRequest(d.home.socket, c)
    assert.equal(res.status, c.status, `${c.name}: ${JSON.stringify(res.json)}`)
    assert.equal(res.json?.error?.errorCode, c.code, `${c.name}: ${JSON.stringify(res.json)}`)
    assert.equal(res.json.error.code, c.status, c.name)
    assert.equal(typeof res.json.error.message, 'string', c.name)
    assert.ok(!/at .*\.ts:\d+/.test(JSON.stringify(res.json)), `${c.name}: no stack trace`)
  }
  // what Node's HTTP parser refuses, straight onto the daemon's socket
  const raw = await rawExchange({ path: d.home.socket }, Buffer.concat([Buffer.from('POST /v1/data/'), Buffer.from('ïnstagram.profile', 'utf8'), Buffer.from(' HTTP/1.1\r\nhost: x\r\ncontent-type: application/json\r\ncontent-length: 2\r\n\r\n{}')]))
  assert.equal(raw.status, 400, raw.text)
  assert.equal(raw.json?.error?.errorCode, 'MALFORMED_REQUEST')
  const big = await rawExchange({ path: d.home.socket }, `GET /health HTTP/1.1\r\nhost: x\r\nx-big: ${'a'.repeat(70_000)}\r\n\r\n`)
  assert.equal(big.status, 431)
  assert.equal(big.json?.error?.errorCode, 'HEADERS_TOO_LARGE')
  const health = await d.request({ path: '/health' })
  assert.equal(health.status, 200)
  const after = (await d.request({ path: '/v1/data/instagram.profile/versions' })).json
  assert.deepEqual(after, before)
  assert.equal((await d.request({ path: '/v1/data/instagram.profile' })).json.data.username, 'keep')
})
