// Credentials inside log text (issue 24, item 6): query tokens, one-time links, Bearer values and
// cookies are replaced wherever they appear; everything else of the line stays.
import { test } from 'node:test'
import assert from 'node:assert/strict'
import { Writable } from 'node:stream'
import { redactSecrets, redactTarget } from '../src/log-redact.js'
import { createLogger } from '../src/log.js'
import { HearthError, toErrorBody } from '../src/errors.js'

test('query tokens, one-time links, Bearer values and cookies are redacted; paths and other parameters stay', () => {
  assert.equal(redactTarget('/health?token=abc123'), '/health?token=[redacted]')
  assert.equal(redactTarget('/v1/data?scopePrefix=x&access_token=abc&limit=5'), '/v1/data?scopePrefix=x&access_token=[redacted]&limit=5')
  assert.equal(redactTarget('/login?TOKEN=abc#x'), '/login?TOKEN=[redacted]#x')
  assert.equal(redactTarget('/v1/data/instagram.profile?at=2030-01-01'), '/v1/data/instagram.profile?at=2030-01-01')
  assert.equal(redactTarget(undefined), undefined)
  assert.equal(redactSecrets('open http://127.0.0.1:8470/login?token=s3cret now'), 'open http://127.0.0.1:8470/login?token=[redacted] now')
  assert.equal(redactSecrets('sent Authorization: Bearer eyJhbGciOi.x.y'), 'sent Authorization: Bearer [redacted]')
  assert.equal(redactSecrets('{"headers":{"cookie":"hearth_session=abc; x=1","host":"h"}}'), '{"headers":{"cookie":"[redacted]","host":"h"}}')
  assert.equal(redactSecrets('Cookie: hearth_session=abc'), 'Cookie: [redacted]')
  assert.equal(redactSecrets('kubo at http://admin:pw@127.0.0.1:5001/api/v0 unreachable'), 'kubo at http://[redacted]@127.0.0.1:5001/api/v0 unreachable')
  assert.equal(redactSecrets('see https://example.net/a@b'), 'see https://example.net/a@b')
  const plain = '{"level":30,"msg":"file stored","scope":"instagram.profile"}'
  assert.equal(redactSecrets(plain), plain)
})

test('an error answered to a client carries no credential in its message', () => {
  const body = toErrorBody(new HearthError('STORAGE_UNAVAILABLE', 'Kubo at http://u:secret-pw@127.0.0.1:5001 did not answer'))
  assert.equal(body.error.message, 'Kubo at http://[redacted]@127.0.0.1:5001 did not answer')
})

test('every logger line is scrubbed, in JSON and in the pretty form, whatever field carries the secret', () => {
  for (const format of ['json', 'pretty'] as const) {
    let out = ''
    const sink = new Writable({ write (chunk, _enc, done) { out += String(chunk); done() } })
    const logger = createLogger({ level: 'info', format, isTTY: false, destination: sink as never })
    logger.warn({ url: '/health?token=tok-1', nested: { target: 'http://h/login?token=tok-2' }, req: { headers: { cookie: 'sid=tok-3' } } }, 'request refused')
    logger.error({ err: new Error('upstream said 401 for Bearer tok-4abcd') }, 'failed at /x?api_key=tok-5')
    for (const secret of ['tok-1', 'tok-2', 'tok-3', 'tok-4', 'tok-5']) assert.ok(!out.includes(secret), `${format}: ${secret} in ${out}`)
    assert.match(out, /\/health\?token=\[redacted\]/)
  }
})
