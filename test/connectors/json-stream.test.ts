// Streamed export files: each record passes the rules a request body does (depth, exact numbers,
// value count), a record that breaks one is left out and reported, the others are read.
import { test } from 'node:test'
import assert from 'node:assert/strict'
import { streamJsonValues, type RefusedRecord } from '../../src/connectors/json-stream.js'
import { isHearthError } from '../../src/errors.js'

async function read (text: string, opts: { paths?: string[]; maxValues?: number; chunk?: number } = {}): Promise<{ values: unknown[]; refused: RefusedRecord[] }> {
  const bytes = new TextEncoder().encode(text)
  const size = opts.chunk ?? 7
  async function * chunks (): AsyncGenerator<Uint8Array> { for (let i = 0; i < bytes.length; i += size) yield bytes.subarray(i, i + size) }
  const refused: RefusedRecord[] = []
  const values: unknown[] = []
  for await (const v of streamJsonValues(chunks(), { paths: opts.paths ?? ['$.*'], what: 'f.json', onRefused: (r) => refused.push(r), ...(opts.maxValues !== undefined ? { maxValues: opts.maxValues } : {}) })) values.push(v)
  return { values, refused }
}

test('records that break a rule are left out with their code and path; the records around them are read', async () => {
  const deep = '{"a":'.repeat(600) + '1' + '}'.repeat(600)
  const text = `[{"id":1},${deep},{"id":2},{"n":1e400,"tail":[1,2,3]},{"id":3},9007199254740993,{"id":4},{"k":[{},{},{},{}]},{"id":5}]`
  const { values, refused } = await read(text)
  assert.deepEqual(values, [{ id: 1 }, { id: 2 }, { id: 3 }, { id: 4 }, { k: [{}, {}, {}, {}] }, { id: 5 }])
  assert.deepEqual(refused.map((r) => [r.record, r.errorCode]), [
    ['$[1]', 'JSON_TOO_DEEP'],
    ['$[3]', 'NUMBER_NOT_REPRESENTABLE'],
    ['$[5]', 'NUMBER_NOT_REPRESENTABLE']
  ])
  assert.match(refused[1]!.message, /f\.json: the record at \$\[3\] was left out: .*\$\[3\]\.n/)
  // the count is per record: {"k":[{},{},{},{}]} is 7 values
  const counted = await read(text.replace(deep, '{}'), { maxValues: 6 })
  assert.deepEqual(counted.refused.map((r) => [r.record, r.errorCode]), [['$[3]', 'NUMBER_NOT_REPRESENTABLE'], ['$[5]', 'NUMBER_NOT_REPRESENTABLE'], ['$[7]', 'JSON_TOO_MANY_VALUES']])
  assert.deepEqual(counted.values, [{ id: 1 }, {}, { id: 2 }, { id: 3 }, { id: 4 }, { id: 5 }])
})

test('records under a key ($.tracks.*) and the limits outside the records', async () => {
  const { values, refused } = await read('{"meta":{"v":1},"tracks":[{"t":"a"},{"t":1e999},{"t":"b"}],"albums":[]}', { paths: ['$.tracks.*'] })
  assert.deepEqual(values, [{ t: 'a' }, { t: 'b' }])
  assert.deepEqual(refused.map((r) => r.record), ['$.tracks[1]'])
  // past the count outside any record, the file itself is refused
  await assert.rejects(read(`{"meta":{${Array.from({ length: 20 }, (_, i) => `"k${i}":0`).join(',')}},"tracks":[]}`, { paths: ['$.tracks.*'], maxValues: 10 }),
    (err: unknown) => isHearthError(err, 'EXPORT_UNREADABLE') && err.details?.errorCode === 'JSON_TOO_MANY_VALUES')
  // broken JSON stays EXPORT_UNREADABLE
  await assert.rejects(read('[{"a":1},{"b":'), (err: unknown) => isHearthError(err, 'EXPORT_UNREADABLE'))
  // ordinary files pass through unchanged, whatever the chunking
  const plain = Array.from({ length: 50 }, (_, i) => ({ i, s: `x${i}`, f: i / 8, deep: { a: [true, null, { b: -0.5e-3 }] } }))
  for (const chunk of [1, 3, 64, 100_000]) assert.deepEqual((await read(JSON.stringify(plain), { chunk })).values, plain)
})
