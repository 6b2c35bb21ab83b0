import assert from 'node:assert/strict'
import { createServer } from 'node:http'
import { join } from 'node:path'
import { test } from 'node:test'
import { daemonSubmit, dataPath, interpretDataResponse } from '../../src/connectors/submit.js'
import { isHearthError } from '../../src/errors.js'
import { tempDir } from '../support/tmp.js'

const error = (status: number, errorCode: string, message: string, details?: Record<string, unknown>) =>
  ({ status, json: { error: { code: status, errorCode, message, ...(details !== undefined ? { details } : {}) } } })

test('submit: the data endpoint path carries the scope and collectedAt', () => {
  assert.equal(dataPath('spotify.savedTracks', '2024-05-04T10:20:30.123Z'), '/v1/data/spotify.savedTracks?collectedAt=2024-05-04T10%3A20%3A30.123Z')
})

test('submit: daemon answers map to stored, duplicate, waiting-schema and rejected', () => {
  assert.deepEqual(interpretDataResponse({ status: 201, json: { status: 'stored', path: 'a.b/x.json' } }), { status: 'stored', path: 'a.b/x.json' })
  assert.deepEqual(interpretDataResponse({ status: 200, json: { status: 'duplicate', path: 'a.b/x.json' } }), { status: 'duplicate', path: 'a.b/x.json' })
  assert.deepEqual(interpretDataResponse({ status: 202, json: { status: 'waiting-schema' } }), { status: 'waiting-schema' })
  assert.deepEqual(interpretDataResponse({ status: 201, json: undefined }), { status: 'stored' }, 'the status code alone suffices')
  assert.deepEqual(interpretDataResponse({ status: 200, json: {} }), { status: 'duplicate' })
  assert.deepEqual(interpretDataResponse({ status: 202, json: {} }), { status: 'waiting-schema' })

  assert.deepEqual(interpretDataResponse(error(400, 'SCHEMA_VALIDATION_FAILED', 'no', { reasons: ['/a: must be string', { instancePath: '/b', message: 'must be integer' }, { message: 'root problem' }] })), {
    status: 'rejected', errorCode: 'SCHEMA_VALIDATION_FAILED', reasons: ['/a: must be string', '/b: must be integer', 'root problem']
  })
  assert.deepEqual(interpretDataResponse(error(404, 'NO_SCHEMA_FOR_SCOPE', 'no schema is known for scope x.y')), {
    status: 'rejected', errorCode: 'NO_SCHEMA_FOR_SCOPE', reasons: ['NO_SCHEMA_FOR_SCOPE: no schema is known for scope x.y']
  })
  assert.deepEqual(interpretDataResponse(error(413, 'BODY_TOO_LARGE', 'request body exceeds the limit of 16777216 bytes')), {
    status: 'rejected', errorCode: 'BODY_TOO_LARGE', reasons: ['BODY_TOO_LARGE: request body exceeds the limit of 16777216 bytes']
  })
  assert.deepEqual(interpretDataResponse({ status: 400, json: undefined }), { status: 'rejected', errorCode: 'HTTP_400', reasons: ['HTTP_400: the daemon answered HTTP 400'] })
})

test('submit: answers that would fail every item stop the import with the daemon\'s code', () => {
  assert.throws(() => interpretDataResponse(error(409, 'IDENTITY_MISSING', 'no identity yet')), (err) => isHearthError(err, 'IDENTITY_MISSING') && /no identity yet/.test(err.message))
  assert.throws(() => interpretDataResponse(error(503, 'STORAGE_UNAVAILABLE', 'ipfs down')), (err) => isHearthError(err, 'STORAGE_UNAVAILABLE'))
  assert.throws(() => interpretDataResponse(error(500, 'SOMETHING_NEW', 'x')), (err) => isHearthError(err, 'INTERNAL'))
  assert.throws(() => interpretDataResponse({ status: 502, json: undefined }), (err) => isHearthError(err, 'INTERNAL'))
})

test('submit: a connection the daemon dropped is tried once more on a new one; a daemon that keeps dropping is DAEMON_NOT_RUNNING', async (t) => {
  const dir = await tempDir(t)
  const socketPath = join(dir, 's.sock')
  let drops = 1
  const server = createServer((req, res) => {
    if (drops > 0) { drops--; req.socket.destroy(); return }
    req.resume()
    req.on('end', () => res.writeHead(201, { 'content-type': 'application/json' }).end('{"status":"stored","path":"x.y/a.json"}'))
  })
  await new Promise<void>((resolve) => server.listen(socketPath, resolve))
  t.after(() => { server.closeAllConnections(); server.close() })
  const submit = daemonSubmit({ socketPath })
  const item = { scope: 'x.y', collectedAt: '2024-01-01T00:00:00Z', data: { a: 1 } }
  assert.deepEqual(await submit(item), { status: 'stored', path: 'x.y/a.json' })
  drops = 2
  await assert.rejects(submit(item), (err: unknown) => isHearthError(err, 'DAEMON_NOT_RUNNING'))
})
