// readBody: the limit, and a large body of the API's own routes read with room for its envelope.
import { test } from 'node:test'
import assert from 'node:assert/strict'
import { randomBytes } from 'node:crypto'
import type { IncomingMessage } from 'node:http'
import { Readable } from 'node:stream'
import { ok, readBody, type Reply } from '../../src/api/http.js'
import { Router } from '../../src/api/router.js'
import { httpCall, startApi } from '../support/api-server.js'
import { isHearthError } from '../../src/errors.js'
import { buildEnvelope, serializeEnvelope, serializeEnvelopeWithData } from '../../src/protocol/envelope.js'

function request (body: Buffer, chunk = 65_536, declared = body.byteLength): IncomingMessage {
  const pieces = Array.from({ length: Math.ceil(body.byteLength / chunk) }, (_, i) => body.subarray(i * chunk, (i + 1) * chunk))
  return Object.assign(Readable.from(pieces), { headers: { 'content-length': String(declared) } }) as unknown as IncomingMessage
}

test('a large body of the API\'s own routes is read into shared memory with room for its envelope, which is built around it', async () => {
  const data = { username: 'big', bio: 'z'.repeat(1_000_000) }
  const body = Buffer.from(JSON.stringify(data))
  const read = await readBody(request(body), 16 * 1024 * 1024, { envelopeRoom: true })
  assert.ok(read.buffer instanceof SharedArrayBuffer)
  assert.equal(Buffer.compare(read, body), 0)
  const env = buildEnvelope({ definitionUrl: 'ipfs://bafkreitest', scope: 'instagram.profile', collectedAt: '2026-01-21T10:00:00.000Z', data })
  const envelope = serializeEnvelopeWithData(env, read)
  assert.equal(envelope.buffer, read.buffer, 'no copy of the body')
  assert.deepEqual(new Uint8Array(envelope), serializeEnvelope(env))
})

test('a body for other code, a small body, or one without a length is read into ordinary memory; the limit holds', async () => {
  const big = randomBytes(600_000)
  for (const [req, opts] of [[request(big), {}], [request(big.subarray(0, 1000)), { envelopeRoom: true }], [Object.assign(request(big), { headers: {} }), { envelopeRoom: true }]] as const) {
    const read = await readBody(req, 16 * 1024 * 1024, opts)
    assert.ok(!(read.buffer instanceof SharedArrayBuffer))
    assert.equal(Buffer.compare(read, big.subarray(0, read.byteLength)), 0)
  }
  await assert.rejects(readBody(request(big), 100_000, { envelopeRoom: true }), (e: unknown) => isHearthError(e, 'BODY_TOO_LARGE'))
  await assert.rejects(readBody(request(big, 65_536, 1000), 100_000, { envelopeRoom: true }), (e: unknown) => isHearthError(e, 'BODY_TOO_LARGE'), 'more than declared, past the limit')
})

test('the API reads a large body with envelope room only for the route that asks (POST /v1/data); the others get ordinary memory', async (t) => {
  const router = new Router()
  const shape = async (bytes: Promise<Buffer>): Promise<Reply> => { const b = await bytes; return ok({ shared: b.buffer instanceof SharedArrayBuffer, length: b.byteLength }) }
  router.post('/other', async (req) => await shape(req.bytes()))
  router.post('/json', async (req) => { await req.json(); return await shape(req.bytes()) })
  router.post('/data-file', async (req) => await shape(req.bytes({ envelopeRoom: true })))
  const { socket } = await startApi(t, router, { maxBodyBytes: 4 << 20 })
  const body = JSON.stringify({ bio: 'z'.repeat(600_000) })
  for (const [path, shared] of [['/other', false], ['/json', false], ['/data-file', true]] as const) {
    const res = await httpCall({ socketPath: socket }, 'POST', path, { body, headers: { 'content-type': 'application/json' } })
    assert.equal(res.status, 200, res.text)
    assert.deepEqual(res.json, { shared, length: body.length }, path)
  }
})
