// What a version's records are for the search (pure): records at their pointers, field names,
// record times, what a connector declares, and the bounds on hostile data.
import { test } from 'node:test'
import assert from 'node:assert/strict'
import { extractRows, DEFAULT_EXTRACT_LIMITS } from '../../src/search/extract.js'

test('array elements are records at their pointers; nested objects and string lists belong to their record', () => {
  const { rows, truncated } = extractRows({
    title: 'Lease', createdAt: '2024-03-01T10:00:00Z',
    messages: [{ text: 'hello', sentAt: '2024-03-01T10:01:00Z', share: { text: 'a link' }, tags: ['x', 'y'] }],
    'a/b~c': [{ note: 'escaped' }]
  })
  assert.equal(truncated, false)
  assert.deepEqual(rows.map((r) => [r.pointer, r.field, r.text, r.at]), [
    ['', 'title', 'Lease', '2024-03-01T10:00:00Z'],
    ['', 'createdAt', '2024-03-01T10:00:00Z', '2024-03-01T10:00:00Z'],
    ['/messages/0', 'text', 'hello', '2024-03-01T10:01:00Z'],
    ['/messages/0', 'sentAt', '2024-03-01T10:01:00Z', '2024-03-01T10:01:00Z'],
    ['/messages/0', 'share.text', 'a link', '2024-03-01T10:01:00Z'],
    ['/messages/0', 'tags', 'x', '2024-03-01T10:01:00Z'],
    ['/messages/0', 'tags', 'y', '2024-03-01T10:01:00Z'],
    ['/a~1b~0c/0', 'note', 'escaped', null]
  ])
})

test('a declaration keeps its fields and reads time from its time fields only', () => {
  const data = { plays: [{ track: 'Feeling Good', artist: 'Nina Simone', uri: 'spotify:track:1', endedAt: '2024-03-02T08:00:00Z', addedAt: '2020-01-01' }] }
  const { rows } = extractRows(data, { fields: ['track', 'artist'], time: ['endedAt'] })
  assert.deepEqual(rows.map((r) => [r.field, r.at]), [['track', '2024-03-02T08:00:00Z'], ['artist', '2024-03-02T08:00:00Z']])
  assert.equal(extractRows({ plays: [{ track: 't', when: 'yesterday' }] }, { time: ['when'] }).rows[0]!.at, null, 'a time field that is not ISO 8601 gives no time')
})

test('hostile data is bounded: depth, rows and field length; deep nesting never overflows the stack', () => {
  let deep: unknown = 'bottom'
  for (let i = 0; i < 100_000; i++) deep = i % 2 === 0 ? [deep] : { k: deep }
  const d = extractRows({ deep })
  assert.equal(d.truncated, true)
  assert.equal(d.rows.length, 0)
  const many = extractRows({ items: Array.from({ length: 50 }, (_, i) => ({ a: `a${i}`, b: `b${i}` })) }, {}, { ...DEFAULT_EXTRACT_LIMITS, maxRows: 15 })
  assert.equal(many.truncated, true)
  assert.ok(many.rows.length <= 15)
  const chars = extractRows({ items: Array.from({ length: 50 }, (_, i) => ({ a: `a${i}`.padEnd(10, '.') })) }, {}, { ...DEFAULT_EXTRACT_LIMITS, maxChars: 95 })
  assert.deepEqual([chars.truncated, chars.stopped, chars.rows.length], [true, true, 9], 'the walk stops at the text limit')
  assert.equal(extractRows({ a: 'x' }, {}, { ...DEFAULT_EXTRACT_LIMITS, maxChars: 1 }).stopped, undefined, 'within it: not stopped')
  const long = extractRows({ text: 'w '.repeat(20_000) })
  assert.equal(long.rows[0]!.text.length, DEFAULT_EXTRACT_LIMITS.maxFieldChars)
  assert.equal(extractRows(null).rows.length, 0)
  assert.equal(extractRows('just text').rows.length, 0)
  assert.deepEqual(extractRows(['a', { b: 'c' }]).rows.map((r) => [r.pointer, r.text]), [['/1', 'c'], ['', 'a']])
})
