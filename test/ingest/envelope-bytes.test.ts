// A POST's envelope bytes: the body itself as the envelope's data when it is canonical JSON (small
// bodies in ordinary memory, large ones in shared memory for the worker), serialised otherwise;
// always exactly serializeEnvelope's bytes.
import assert from 'node:assert/strict'
import { test } from 'node:test'
import { envelopeSerializer } from '../../src/ingest/envelope-bytes.js'
import { buildEnvelope, serializeEnvelope } from '../../src/protocol/envelope.js'

const envelopeOf = (data: Record<string, unknown>): ReturnType<typeof buildEnvelope> =>
  buildEnvelope({ definitionUrl: 'ipfs://bafkreigh2akiscaildcqabsyg3dfr6chu3fgpregiymsck7e7aqa4s52zy', scope: 'instagram.profile', collectedAt: '2026-11-26T15:00:00.123Z', data })

test('a small canonical body becomes the envelope\'s data as it came, in ordinary memory, a copy of it', () => {
  const data = { username: 'bench', bio: 'x'.repeat(984), n: 1.5, list: [1, 'two', null, true], nested: { 'é': '\n"' } }
  const body = Buffer.from(JSON.stringify(data))
  const env = envelopeOf(data)
  const bytes = envelopeSerializer(body)(env)
  assert.deepEqual(bytes, serializeEnvelope(env))
  assert.ok(!(bytes.buffer instanceof SharedArrayBuffer))
  assert.notEqual(bytes.buffer, body.buffer)
  bytes[bytes.byteLength - 2] = 0x20
  assert.equal(body.toString(), JSON.stringify(data), 'the body is not changed through the envelope')
})

test('a body not in JSON.stringify\'s form is serialised again; every form gives serializeEnvelope\'s bytes', () => {
  for (const text of ['{ "a": 1 }', '{"a":1.0}', '{"a":"\\u0041"}', '{"a":1,"a":2}', '{"b":1,"0":2}', '{"a":"\\/"}', '{"a":1e2}']) {
    const data = JSON.parse(text) as Record<string, unknown>
    const env = envelopeOf(data)
    assert.deepEqual(envelopeSerializer(Buffer.from(text))(env), serializeEnvelope(env), text)
  }
  const env = envelopeOf({ a: 1 })
  assert.deepEqual(envelopeSerializer(undefined)(env), serializeEnvelope(env), 'no body (a connector\'s submit)')
})

test('a large canonical body\'s envelope is in shared memory (the encryption worker reads it in place)', () => {
  const data = { bio: 'z'.repeat(300_000) }
  const env = envelopeOf(data)
  const bytes = envelopeSerializer(Buffer.from(JSON.stringify(data)))(env)
  assert.ok(bytes.buffer instanceof SharedArrayBuffer)
  assert.deepEqual(new Uint8Array(bytes), serializeEnvelope(env))
})
