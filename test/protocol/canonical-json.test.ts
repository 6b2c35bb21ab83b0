import { test } from 'node:test'
import assert from 'node:assert/strict'
import { canonicalTokenLimit, isCanonicalJson } from '../../src/protocol/canonical-json.js'
import { buildEnvelope, serializeEnvelope, serializeEnvelopeWithData, withEnvelopeRoom, type Envelope } from '../../src/protocol/envelope.js'

const bytes = (s: string): Uint8Array => new TextEncoder().encode(s)
const canonical = (s: string): boolean => isCanonicalJson(bytes(s))

test('JSON.stringify output is canonical', () => {
  for (const value of [
    {}, [], { a: 1 }, { a: [1, 2.5, -3, 1e21, 1e-7, 0, true, false, null] }, { 'é✓': 'ünï\u2028', k: { z: [] } },
    { s: '"quoted" \\ back\nslash\t\b\f\r \u0001 \u001f \u007f' }, { a: 'x'.repeat(100_000) }, { __proto__x: 1, constructor: 2 },
    { n: Number.MAX_SAFE_INTEGER, m: -0.1, big: 123456789012345680000 }
  ]) {
    const text = JSON.stringify(value)
    assert.equal(canonical(text), true, text.slice(0, 80))
  }
})

test('whatever JSON.stringify would write differently is not canonical', () => {
  for (const text of [
    '{ "a": 1}', '{"a":1 }', '{"a" :1}', '{"a":\n1}', '[1, 2]', '\t{}',
    '{"a":"\\/"}', '{"a":"\\u0041"}', '{"a":"\\u000A"}', '{"a":"\\u000a"}', '{"a":"\\u001F"}', '{"a":"\\ud83d\\ude00"}', '{"a":"\\ud800"}',
    '{"a":1.0}', '{"a":1e2}', '{"a":-0}', '{"a":1E+21}', '{"a":0.10}', '{"a":12345678901234567890}',
    '{"a":1,"a":2}', '{"b":{"x":1,"x":1}}', '{"0":1}', '{"a":1,"7":2}', '{"4294967294":1}'
  ]) {
    assert.equal(canonical(text), false, text)
    assert.ok(JSON.parse(text) !== undefined)
  }
  // not array indices: kept in text order by V8, so still canonical
  for (const text of ['{"01":1}', '{"-1":1}', '{"4294967295":1}', '{"1.5":1}', '{"a":"\\u0000\\u001f"}']) {
    assert.equal(canonical(text), JSON.stringify(JSON.parse(text)) === text, text)
  }
})

test('never canonical when the round trip differs (random documents in random spellings)', () => {
  let seed = 7
  const rnd = (n: number): number => { seed = (seed * 1103515245 + 12345) % 2147483648; return seed % n }
  const keys = ['a', 'b', '0', '1', '10', 'é', 'x y', '__proto__', 'k"q', 'n\\m']
  const strings = ['', 'plain', 'ü✓', 'line\nbreak', 'tab\t', '\u0001', '"', '\\', '/', '\u2028', '😀']
  const numbers = ['0', '-0', '1', '1.0', '1.5', '-2', '1e2', '1E2', '1e21', '1e-7', '0.1', '100', '3.14159']
  function value (depth: number): string {
    const kind = depth > 3 ? rnd(4) : rnd(6)
    if (kind === 0) return numbers[rnd(numbers.length)]!
    if (kind === 1) return str(strings[rnd(strings.length)]!)
    if (kind === 2) return ['true', 'false', 'null'][rnd(3)]!
    if (kind === 3) return rnd(2) === 0 ? '[]' : '{}'
    if (kind === 4) return `[${Array.from({ length: rnd(4) }, () => value(depth + 1)).join(sep())}]`
    return `{${Array.from({ length: rnd(4) }, () => `${str(keys[rnd(keys.length)]!)}${rnd(8) === 0 ? ' : ' : ':'}${value(depth + 1)}`).join(sep())}}`
  }
  function sep (): string { return rnd(8) === 0 ? ', ' : ',' }
  function str (s: string): string {
    const json = JSON.stringify(s)
    if (rnd(6) !== 0) return json
    return json.replace(/[a-z/]/, (c) => `\\u${c.charCodeAt(0).toString(16).padStart(4, '0')}`).replace('/', '\\/')
  }
  let yes = 0
  for (let i = 0; i < 20_000; i++) {
    const text = `{"d":${value(0)}}`
    const roundTrip = JSON.stringify(JSON.parse(text)) === text
    if (canonical(text)) { yes++; assert.ok(roundTrip, text) }
  }
  assert.ok(yes > 2000, `enough canonical cases were tried (${yes})`)
})

test('the token bound scales with ingest.maxJsonValues: a body of many small values within the limit is answered, one past the bound is not', () => {
  // 60,000 members: 240,001 tokens, past the fixed 50,000-token cap this bound replaced
  const members = (n: number): Uint8Array => bytes(JSON.stringify(Object.fromEntries(Array.from({ length: n }, (_, i) => [`k${i}`, i]))))
  assert.equal(isCanonicalJson(members(60_000)), true, 'within the default limit (500,000 values)')
  // a body at a limit of 10,000 values (9,999 members and their object) is answered under that limit's bound
  assert.equal(isCanonicalJson(members(9_999), canonicalTokenLimit(10_000)), true)
  assert.equal(isCanonicalJson(members(60_000), canonicalTokenLimit(10_000)), false, 'past the bound: not looked at further')
  // scalars of a list are not counted values; the bound still stops their scan
  const list = bytes(JSON.stringify({ xs: Array.from({ length: 15_000 }, (_, i) => i) }))
  assert.equal(isCanonicalJson(list, canonicalTokenLimit(10_000)), true)
  assert.equal(isCanonicalJson(list, canonicalTokenLimit(1_000)), false)
  // the integer fast path still refuses what does not print back the same
  for (const text of ['{"a":01}', '{"a":1234567890123456789}', '{"a":-0}']) assert.equal(isCanonicalJson(bytes(text), canonicalTokenLimit(10)), false, text)
  assert.equal(isCanonicalJson(bytes('{"a":123456789012345,"b":0,"c":-7}')), true)
})

test('an envelope around canonical data bytes is exactly serializeEnvelope\'s', () => {
  for (const data of [{ username: 'alice' }, { bio: 'ü'.repeat(1000), list: [1, { x: null }] }, {}]) {
    const env = buildEnvelope({ definitionUrl: 'ipfs://bafkreitest"odd', scope: 'instagram.profile', collectedAt: '2026-01-21T10:00:00.123Z', data })
    const json = bytes(JSON.stringify(data))
    assert.deepEqual(serializeEnvelopeWithData(env, json), serializeEnvelope(env))
    const shared = serializeEnvelopeWithData(env, json, (n) => new Uint8Array(new SharedArrayBuffer(n)))
    assert.ok(shared.buffer instanceof SharedArrayBuffer)
    assert.deepEqual(new Uint8Array(shared), serializeEnvelope(env))
  }
})

test('a body read with envelope room becomes its first envelope where it lies; a second envelope (another name) is a copy, the first unchanged', () => {
  const data = { username: 'big', bio: 'z'.repeat(300_000) }
  const text = JSON.stringify(data)
  const body = withEnvelopeRoom(Buffer.byteLength(text))
  body.write(text)
  const at = (collectedAt: string): Envelope => buildEnvelope({ definitionUrl: 'ipfs://bafkreitest', scope: 'instagram.profile', collectedAt, data })
  const first = serializeEnvelopeWithData(at('2026-01-21T10:00:00.123Z'), body, (n) => new Uint8Array(new SharedArrayBuffer(n)))
  assert.equal(first.buffer, body.buffer, 'built around the body, not copied')
  assert.deepEqual(new Uint8Array(first), serializeEnvelope(at('2026-01-21T10:00:00.123Z')))
  const second = serializeEnvelopeWithData(at('2026-01-21T10:00:00.124Z'), body, (n) => new Uint8Array(new SharedArrayBuffer(n)))
  assert.notEqual(second.buffer, body.buffer)
  assert.deepEqual(new Uint8Array(second), serializeEnvelope(at('2026-01-21T10:00:00.124Z')))
  assert.deepEqual(new Uint8Array(first), serializeEnvelope(at('2026-01-21T10:00:00.123Z')), 'the first envelope never changes')
  assert.equal(body.toString(), text, 'nor the body')
  // a part of such a body is copied like any bytes
  const part = withEnvelopeRoom(4).subarray(0, 2)
  part.write('{}')
  assert.notEqual(serializeEnvelopeWithData(at('2026-01-21T10:00:00.123Z'), part).buffer, part.buffer)
})

test('a body of very many values is answered false after a bounded look (a million keys once took 100 s: the backslash search rescanned the rest of the body at every string)', () => {
  const many = Buffer.from(`{${Array.from({ length: 1_000_000 }, (_, i) => `"k${i}":0`).join(',')}}`)
  assert.equal(isCanonicalJson(many), false)
  // many strings and no backslash anywhere, under the token bound: still answered, and true
  const strings = Buffer.from(JSON.stringify({ list: Array.from({ length: 10_000 }, (_, i) => `s${i}`) }))
  assert.equal(isCanonicalJson(strings), true)
  const escaped = Buffer.from(JSON.stringify({ list: Array.from({ length: 10_000 }, (_, i) => i % 1000 === 0 ? `a"b\\c${i}` : `s${i}`) }))
  assert.equal(isCanonicalJson(escaped), true)
})
