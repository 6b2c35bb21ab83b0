// readBody: the limit (declared or not), a body in pieces, a stream that ended or broke, and a large body of the API's own routes read with room for its envelope.
import { test } from 'node:test'
import assert from 'node:assert/strict'
import { randomBytes } from 'node:crypto'
import type { IncomingMessage } from 'node:http'
import { Readable } from 'node:stream'
import { ok, readBody, type Reply } from '../../src/api/http.js'
import { copyIntoShared } from '../../src/api/shared-copy.js'
import { Router } from '../../src/api/router.js'
import { httpCall, rawExchange, startApi } from '../support/api-server.js'
import { isHearthError } from '../../src/errors.js'
import { buildEnvelope, serializeEnvelope, serializeEnvelopeWithData } from '../../src/protocol/envelope.js'

function request (body: Buffer, chunk = 65_536, declared = body.byteLength): IncomingMessage {
  const pieces = Array.from({ length: Math.ceil(body.byteLength / chunk) }, (_, i) => body.subarray(i * chunk, (i + 1) * chunk))
  return Object.assign(Readable.from(pieces), { headers: { 'content-length': String(declared) } }) as unknown as IncomingMessage
}

test('chunks copied into shared memory at every alignment of source and target, short and longer than the scratch memory, arrive byte for byte; what does not fit is left out', () => {
  const source = randomBytes(600_000)
  for (const length of [1, 4095, 70_001, 599_990]) {
    for (let from = 0; from < 8; from++) {
      for (let at = 0; at < 8; at++) {
        const target = Buffer.from(new SharedArrayBuffer(length + 24), 3, length + 16)
        const chunk = source.subarray(from, from + length)
        assert.equal(copyIntoShared(chunk, target, at), length)
        assert.equal(Buffer.compare(target.subarray(at, at + length), chunk), 0, `length ${length}, source offset ${from}, target offset ${at}`)
      }
    }
  }
  const small = Buffer.from(new SharedArrayBuffer(10_000))
  assert.equal(copyIntoShared(source.subarray(1, 9_001), small, 5_000), 5_000)
  assert.equal(Buffer.compare(small.subarray(5_000), source.subarray(1, 5_001)), 0)
})

test('a large body of the API\'s own routes is read into shared memory with room for its envelope, which is built around it; one without a length (chunked) is joined there', async () => {
  const data = { username: 'big', bio: 'z'.repeat(1_000_000) }
  const body = Buffer.from(JSON.stringify(data))
  for (const req of [request(body), Object.assign(request(body), { headers: {} })]) {
    const read = await readBody(req, 16 * 1024 * 1024, { envelopeRoom: true })
    assert.ok(read.buffer instanceof SharedArrayBuffer)
    assert.equal(Buffer.compare(read, body), 0)
    const env = buildEnvelope({ definitionUrl: 'ipfs://bafkreitest', scope: 'instagram.profile', collectedAt: '2026-01-21T10:00:00.000Z', data })
    const envelope = serializeEnvelopeWithData(env, read)
    assert.equal(envelope.buffer, read.buffer, 'no copy of the body')
    assert.deepEqual(new Uint8Array(envelope), serializeEnvelope(env))
  }
})

test('a body for other code, a small body, or a small one without a length is read into ordinary memory; the limit holds', async () => {
  const big = randomBytes(600_000)
  for (const [req, opts] of [[request(big), {}], [request(big.subarray(0, 1000)), { envelopeRoom: true }], [Object.assign(request(big.subarray(0, 1000)), { headers: {} }), { envelopeRoom: true }], [Object.assign(request(big), { headers: {} }), {}]] as const) {
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

test('a body without a declared length that grows past the limit is answered 413 BODY_TOO_LARGE; one sent in many pieces is read whole', async (t) => {
  const router = new Router()
  router.post('/echo', async (req) => ok({ length: (await req.bytes()).byteLength }))
  const { socket } = await startApi(t, router, { maxBodyBytes: 1000 })
  const chunked = (pieces: string[]): string => `POST /echo HTTP/1.1\r\nhost: x\r\ntransfer-encoding: chunked\r\nconnection: close\r\n\r\n${pieces.map((p) => `${p.length.toString(16)}\r\n${p}\r\n`).join('')}0\r\n\r\n`
  const tooBig = await rawExchange({ path: socket }, chunked(['x'.repeat(600), 'x'.repeat(600)]))
  assert.equal(tooBig.status, 413)
  assert.equal(tooBig.json.error.errorCode, 'BODY_TOO_LARGE')
  const pieces = await rawExchange({ path: socket }, chunked(Array.from({ length: 9 }, () => 'y'.repeat(100))))
  assert.equal(pieces.status, 200, pieces.text)
  assert.deepEqual(pieces.json, { length: 900 })
})

test('a body read by a stream that ended already is empty; one that was destroyed before its end fails the read', async () => {
  const ended = request(Buffer.alloc(0))
  ended.resume()
  await new Promise((resolve) => ended.once('end', resolve))
  assert.equal((await readBody(ended, 1000)).byteLength, 0)
  const cut = new Readable({ read () {} }) as Readable & { headers: Record<string, string> }
  cut.headers = {}
  const reading = readBody(cut as unknown as IncomingMessage, 1000)
  cut.push(Buffer.from('{"a":'))
  cut.destroy()
  await assert.rejects(reading, (e: NodeJS.ErrnoException) => e.code === 'ERR_STREAM_PREMATURE_CLOSE')
  const failing = new Readable({ read () {} }) as Readable & { headers: Record<string, string> }
  failing.headers = {}
  const failed = readBody(failing as unknown as IncomingMessage, 1000)
  failing.destroy(Object.assign(new Error('aborted'), { code: 'ECONNRESET' }))
  await assert.rejects(failed, (e: NodeJS.ErrnoException) => e.code === 'ECONNRESET')
})

test('a request paused before its body is read is read all the same', async () => {
  const body = Buffer.from('{"a":1}')
  const paused = request(body)
  paused.pause()
  assert.equal(Buffer.compare(await readBody(paused, 1000), body), 0)
})
