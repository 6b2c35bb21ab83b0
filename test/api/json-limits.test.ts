// Deep nesting and numbers JSON cannot carry exactly: refused with their own 400 codes for POST
// bodies, and dropped files with them are rejected with the same codes; no GET ever answers 500.
import { test } from 'node:test'
import assert from 'node:assert/strict'
import { request } from 'node:http'
import { startDaemonProcess } from '../support/daemon.js'
import { dropFile, waitFor } from '../support/data-files.js'
import { MAX_DATA_DEPTH } from '../../src/protocol/bounded-json.js'

function post (socketPath: string, path: string, body: string): Promise<{ status: number, json: any }> {
  return new Promise((resolve, reject) => {
    const r = request({ socketPath, method: 'POST', path, headers: { 'content-type': 'application/json' } }, (res) => {
      let text = ''
      res.on('data', (c) => { text += c })
      res.on('end', () => { resolve({ status: res.statusCode!, json: JSON.parse(text) }) })
    })
    r.on('error', reject)
    r.end(body)
  })
}

const nested = (depth: number, leaf = '1'): string => '{"a":'.repeat(depth) + leaf + '}'.repeat(depth)
const envelope = (scope: string, dataText: string): string =>
  `{"$schema":"ipfs://shipped/${scope}","version":"1.0","scope":"${scope}","collectedAt":"2026-01-01T00:00:00Z","data":${dataText}}`

test('POST bodies and dropped files: depth limit and exact numbers', async (t) => {
  const d = await startDaemonProcess(t)
  for (const scope of ['notes.posted', 'notes.dropped']) {
    const added = await d.request({ method: 'POST', path: '/v1/schemas', body: { name: scope, version: '1.0.0', scope, dialect: 'json', schema: { type: 'object' } } })
    assert.equal(added.status, 201, added.body.toString())
  }
  const socket = d.home.socket

  const deepest = await post(socket, '/v1/data/notes.posted', nested(MAX_DATA_DEPTH))
  assert.equal(deepest.status, 201, 'the limit itself is accepted')
  const readBack = await d.request({ path: '/v1/data/notes.posted' })
  assert.equal(readBack.status, 200, 'and reads back')

  const tooDeep = await post(socket, '/v1/data/notes.posted', nested(10_000))
  assert.equal(tooDeep.status, 400)
  assert.equal(tooDeep.json.error.errorCode, 'JSON_TOO_DEEP')
  assert.equal(tooDeep.json.error.details.maxDepth, MAX_DATA_DEPTH)
  const arrays = await post(socket, '/v1/data/notes.posted', '{"a":' + '['.repeat(100_000) + ']'.repeat(100_000) + '}')
  assert.equal(arrays.json.error.errorCode, 'JSON_TOO_DEEP')

  const numbers: Array<[string, string]> = [
    ['{"n": 1e400}', '$.n'],
    ['{"n": -1e400}', '$.n'],
    ['{"list": [0, 1e-400]}', '$.list[1]'],
    ['{"id": 9007199254740993}', '$.id'],
    ['{"deep": {"ids": [1, 2, 12345678901234567890]}}', '$.deep.ids[2]']
  ]
  for (const [body, path] of numbers) {
    const res = await post(socket, '/v1/data/notes.posted', body)
    assert.equal(res.status, 400, body)
    assert.equal(res.json.error.errorCode, 'NUMBER_NOT_REPRESENTABLE', body)
    assert.equal(res.json.error.details.path, path, body)
  }
  const exact = await post(socket, '/v1/data/notes.posted', '{"big": 9007199254740991, "small": 5e-324, "f": 0.1, "e": 1e21}')
  assert.equal(exact.status, 201)

  await dropFile(d.home.data, 'notes.dropped', '2026-01-01T00-00-00Z.json', envelope('notes.dropped', nested(10_000)))
  await dropFile(d.home.data, 'notes.dropped', '2026-01-02T00-00-00Z.json', envelope('notes.dropped', '{"n": 1e400}'))
  await dropFile(d.home.data, 'notes.dropped', '2026-01-03T00-00-00Z.json', envelope('notes.dropped', '{"id": 9007199254740993}'))
  const rejected = await waitFor('three rejections', async () => {
    const r = ((await d.request({ path: '/v1/status' })).json.rejected as any[]).filter((x) => x.path.startsWith('notes.dropped/'))
    return r.length === 3 ? r.sort((x, y) => x.path.localeCompare(y.path)) : null
  })
  assert.deepEqual(rejected.map((r) => r.errorCode), ['JSON_TOO_DEEP', 'NUMBER_NOT_REPRESENTABLE', 'NUMBER_NOT_REPRESENTABLE'])
  assert.match(rejected[1].reasons.join(' '), /\$\.data\.n/)
  assert.match(rejected[2].reasons.join(' '), /\$\.data\.id/)
  const get = await d.request({ path: '/v1/data/notes.dropped' })
  assert.equal(get.status, 404, 'nothing readable, and never a 500')

  // a restart re-reads the folder: still rejected, still no 500
  assert.equal(await d.stop(), 0)
  const again = await startDaemonProcess(t, { home: d.home.root })
  assert.equal((await again.request({ path: '/v1/data/notes.dropped' })).status, 404)
  assert.equal((await again.request({ path: '/v1/data/notes.posted' })).status, 200)
  assert.equal(await again.stop(), 0)
})

test('POST bodies and dropped files with more values than ingest.maxJsonValues: JSON_TOO_MANY_VALUES with the path; stored files stay readable', async (t) => {
  const d = await startDaemonProcess(t, { env: { HEARTH_MAX_JSON_VALUES: '2000' } })
  for (const scope of ['notes.posted', 'notes.dropped']) {
    const added = await d.request({ method: 'POST', path: '/v1/schemas', body: { name: scope, version: '1.0.0', scope, dialect: 'json', schema: { type: 'object' } } })
    assert.equal(added.status, 201, added.body.toString())
  }
  const list = (n: number): string => `{"items":[${Array(n).fill('{}').join(',')}]}`
  // the object, its member, the array and 1997 objects: 2000 values: the limit itself is accepted
  assert.equal((await post(d.home.socket, '/v1/data/notes.posted', list(1997))).status, 201)
  const over = await post(d.home.socket, '/v1/data/notes.posted', list(1998))
  assert.equal(over.status, 400)
  assert.equal(over.json.error.errorCode, 'JSON_TOO_MANY_VALUES')
  assert.deepEqual(over.json.error.details, { maxValues: 2000, path: '$.items[1997]' })

  // a data file's envelope does not count against its data
  await dropFile(d.home.data, 'notes.dropped', '2026-01-01T00-00-00Z.json', envelope('notes.dropped', list(1997)))
  await dropFile(d.home.data, 'notes.dropped', '2026-01-02T00-00-00Z.json', envelope('notes.dropped', list(3000)))
  const rejected = await waitFor('one rejection', async () => {
    const r = ((await d.request({ path: '/v1/status' })).json.rejected as any[]).filter((x) => x.path.startsWith('notes.dropped/'))
    return r.length === 1 ? r[0] : null
  })
  assert.equal(rejected.path, 'notes.dropped/2026-01-02T00-00-00Z.json')
  assert.equal(rejected.errorCode, 'JSON_TOO_MANY_VALUES')
  assert.match(rejected.reasons.join(' '), /\$\.data\.items\[1997\]/)
  await waitFor('the file at the limit stored', async () => (await d.request({ path: '/v1/data/notes.dropped' })).json?.data?.items?.length === 1997)
  assert.equal(await d.stop(), 0)

  // a lower limit later never hides what was stored under the higher one
  const lower = await startDaemonProcess(t, { home: d.home.root, env: { HEARTH_MAX_JSON_VALUES: '1000' } })
  assert.equal((await lower.request({ path: '/v1/data/notes.posted' })).json.data.items.length, 1997)
  assert.equal(await lower.stop(), 0)
})
