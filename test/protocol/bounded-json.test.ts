// The bounded JSON parse shared by request bodies and dropped files: depth and exact numbers.
import { test } from 'node:test'
import assert from 'node:assert/strict'
import { checkJsonLimits, numberIsExact, parseBoundedJson, parseBoundedJsonBytes, DEFAULT_MAX_JSON_VALUES, MAX_DATA_DEPTH } from '../../src/protocol/bounded-json.js'
import { isHearthError } from '../../src/errors.js'

const opts = { maxDepth: MAX_DATA_DEPTH, subject: 'body' }

function rejectsWith (text: string, code: string, path?: string): void {
  assert.throws(() => parseBoundedJson(text, opts), (err) => {
    assert.ok(isHearthError(err), String(err))
    assert.equal(err.code, code, `${text.slice(0, 60)}: ${err.message}`)
    if (path !== undefined) assert.equal(err.details?.path, path, err.message)
    return true
  })
}

test('nesting deeper than the limit is JSON_TOO_DEEP, the limit itself is fine', () => {
  const nest = (d: number): string => '['.repeat(d) + ']'.repeat(d)
  assert.ok(Array.isArray(parseBoundedJson(nest(MAX_DATA_DEPTH), opts)))
  rejectsWith(nest(MAX_DATA_DEPTH + 1), 'JSON_TOO_DEEP')
  rejectsWith(nest(100_000), 'JSON_TOO_DEEP')
  rejectsWith('{"a":' + '{"b":'.repeat(MAX_DATA_DEPTH) + '1' + '}'.repeat(MAX_DATA_DEPTH + 1), 'JSON_TOO_DEEP')
  // brackets inside strings are text, not nesting
  assert.equal(parseBoundedJson(JSON.stringify({ s: '['.repeat(10_000) + '\\"{' }), opts) !== null, true)
  assert.deepEqual(parseBoundedJson(nest(3), { maxDepth: 3, subject: 'x' }), [[[]]])
  assert.throws(() => parseBoundedJson(nest(4), { maxDepth: 3, subject: 'x' }), /deeper than 3 levels/)
})

test('numbers a double cannot carry are refused with their JSON path', () => {
  rejectsWith('{"a": 1e400}', 'NUMBER_NOT_REPRESENTABLE', '$.a')
  rejectsWith('{"a": {"b": [1, 2, -1e-400]}}', 'NUMBER_NOT_REPRESENTABLE', '$.a.b[2]')
  rejectsWith('{"odd key": [9007199254740993]}', 'NUMBER_NOT_REPRESENTABLE', '$["odd key"][0]')
  rejectsWith('[{"x":1},{"y":12345678901234567890}]', 'NUMBER_NOT_REPRESENTABLE', '$[1].y')
  rejectsWith('0.30000000000000001', 'NUMBER_NOT_REPRESENTABLE', '$')
  rejectsWith('{"a": "1e400", "b": 1E+999}', 'NUMBER_NOT_REPRESENTABLE', '$.b')
  for (const fine of ['0', '-0', '0.0', '1.5', '-12.25e3', '1e21', '1E-7', '9007199254740991', '9007199254740992',
    '0.1', '0.3', '123456789.123456', '1.7976931348623157e308', '5e-324', '100000000000000000000000', '0e400', '1.000']) {
    assert.ok(numberIsExact(fine), fine)
    assert.equal(parseBoundedJson(fine, opts), JSON.parse(fine))
  }
  for (const bad of ['1e400', '-1e400', '1e-400', '9007199254740993', '2e-324', '1.00000000000000000001', '123456789012345678', '1152921504606846976']) assert.ok(!numberIsExact(bad), bad)
  // numbers inside strings are text
  assert.deepEqual(parseBoundedJson('{"n":"1e400 9007199254740993"}', opts), { n: '1e400 9007199254740993' })
})

test('syntax errors and bad UTF-8 stay INVALID_JSON', () => {
  rejectsWith('{"a":', 'INVALID_JSON')
  rejectsWith('username=x', 'INVALID_JSON')
  assert.throws(() => parseBoundedJsonBytes(Uint8Array.from([0x7b, 0xff, 0x7d]), opts), (err) => isHearthError(err, 'INVALID_JSON'))
  assert.deepEqual(parseBoundedJsonBytes(new TextEncoder().encode('{"é":[1,{"b":null}]}'), opts), { é: [1, { b: null }] })
  // an ASCII view into a larger (shared) buffer, as a large body is read: only its own bytes
  const memory = new Uint8Array(new SharedArrayBuffer(40)).fill(0x7d)
  memory.set(new TextEncoder().encode('{"a":"b"}'), 10)
  assert.deepEqual(parseBoundedJsonBytes(memory.subarray(10, 19), opts), { a: 'b' })
})

test('more values than the limit is JSON_TOO_MANY_VALUES with the path where it tripped, found before parsing', () => {
  const limited = { ...opts, maxValues: 10 }
  const keys = (n: number): string => `{${Array.from({ length: n }, (_, i) => `"k${i}":${i}`).join(',')}}`
  // the object and nine members: ten values
  assert.equal(Object.keys(parseBoundedJson(keys(9), limited) as object).length, 9)
  assert.throws(() => parseBoundedJson(keys(10), limited), (err) => {
    assert.ok(isHearthError(err, 'JSON_TOO_MANY_VALUES'), String(err))
    assert.equal(err.status, 400)
    assert.deepEqual(err.details, { maxValues: 10, path: '$.k9' })
    return true
  })
  // objects, arrays and members count; a list's scalars do not; brackets inside strings are text
  const scalars = `[${Array.from({ length: 1000 }, (_, i) => `${i},"${i}",true,null`).join(',')},{"x":"[{1,2,3}]"}]`
  assert.equal((parseBoundedJson(scalars, limited) as unknown[]).length, 4001)
  assert.throws(() => parseBoundedJson('[[],[],{"a":[]},[],[],[],[{}]]', limited), (err) => isHearthError(err, 'JSON_TOO_MANY_VALUES') && err.details?.path === '$[6][0]')
  // the default stops a million keys well before their end, without JSON.parse ever seeing them
  const million = keys(1_000_000)
  assert.throws(() => checkJsonLimits(million, opts), (err) => isHearthError(err, 'JSON_TOO_MANY_VALUES') && err.details?.path === `$.k${DEFAULT_MAX_JSON_VALUES - 1}`)
  assert.throws(() => parseBoundedJson('[' + '{},'.repeat(DEFAULT_MAX_JSON_VALUES) + '{}]', opts), (err) => isHearthError(err, 'JSON_TOO_MANY_VALUES'))
})
