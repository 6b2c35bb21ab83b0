import { test } from 'node:test'
import assert from 'node:assert/strict'
import { checkRecord, rangeOf, joinKey, sortableInstant } from '../../src/db/keys.js'
import { isHearthError } from '../../src/errors.js'
import { fileRecord } from '../support/db-fixtures.js'
import type { FileRecord } from '../../src/db/types.js'

test('sortableInstant: fixed width, and whole seconds sort before their fractions', () => {
  const a = sortableInstant('2026-01-21T10:00:00Z')
  const b = sortableInstant('2026-01-21T10:00:00.500Z')
  const c = sortableInstant('2026-01-21T10:00:01Z')
  assert.equal(a, '2026-01-21T10:00:00.000000000Z')
  assert.ok(a < b && b < c)
  assert.equal(new Set([a, b, c].map((x) => x.length)).size, 1)
  // Any number of fraction digits is the same instant.
  assert.equal(sortableInstant('2026-01-21T10:00:00.5Z'), b)
  assert.equal(sortableInstant('2026-01-21T10:00:00.500000Z'), b)
  assert.ok(sortableInstant('2026-01-21T10:00:00.0005Z') > a)
  assert.ok(sortableInstant('2026-01-21T10:00:00.0005Z') < sortableInstant('2026-01-21T10:00:00.001Z'))
})

test('sortableInstant: instants with an offset become UTC; garbage is a typed error', () => {
  assert.equal(sortableInstant('2026-01-21T12:00:00+02:00'), '2026-01-21T10:00:00.000000000Z')
  for (const bad of ['', 'yesterday', '2026-13-01T00:00:00Z', '2026-01-21', '2026-01-21T10:00:00', 42 as unknown as string]) {
    assert.throws(() => sortableInstant(bad), (e: unknown) => isHearthError(e, 'INVALID_ARGUMENT'), String(bad))
  }
})

test('rangeOf: a scope range does not include a longer scope with the same prefix', () => {
  const r = rangeOf('a.b')
  const inside = joinKey('a.b', 'x', 'p')
  const longer = joinKey('a.bc', 'x', 'p')
  assert.ok(inside > r.gt && inside < r.lt)
  assert.ok(!(longer > r.gt && longer < r.lt))
})

test('checkRecord: rejects what the index cannot key, drops seq and undefined fields', () => {
  const ok = checkRecord({ ...fileRecord('a.b/x.json', '2026-01-21T10:00:00Z'), seq: 99, fileId: undefined })
  assert.equal('seq' in ok, false)
  assert.equal('fileId' in ok, false)
  const bad = [
    { ...fileRecord('a.b/x.json', null), path: '' },
    { ...fileRecord('a.b/x.json', null), path: 'a.b/\u0000.json' },
    { ...fileRecord('a.b/x.json', null), scope: 7 },
    { ...fileRecord('a.b/x.json', null), state: 'lost' },
    { ...fileRecord('a.b/x.json', 'not a time') },
    { ...fileRecord('a.b/x.json', null), cid: 5 },
    null,
    []
  ]
  for (const r of bad) {
    assert.throws(() => checkRecord(r as never), (e: unknown) => isHearthError(e, 'INVALID_ARGUMENT'), JSON.stringify(r))
  }
})

test('checkRecord: a field named __proto__ is refused, not made the copy\'s prototype', () => {
  const text = JSON.stringify(fileRecord('a.b/x.json', '2026-01-21T10:00:00Z'))
  for (const proto of ['{"injected":true}', 'null', '"text"']) {
    // JSON.parse makes `__proto__` an own field, as a record read from a peer or a file would have it
    const hostile = JSON.parse(`{"__proto__":${proto},${text.slice(1)}`) as FileRecord
    assert.ok(Object.hasOwn(hostile, '__proto__'))
    assert.throws(() => checkRecord(hostile), (e: unknown) => isHearthError(e, 'INVALID_ARGUMENT') && /__proto__/.test(e.message), proto)
  }
})

test('checkRecord: the copy is what the JSON round trip it replaced made, on representative records', () => {
  const roundTrip = (r: unknown): unknown => { const { seq: _ignored, ...rest } = JSON.parse(JSON.stringify(r)) as FileRecord; return rest }
  const holed = ['a', 'b']
  holed.length = 3
  const representative: unknown[] = [
    fileRecord('a.b/x.json', '2026-01-21T10:00:00Z'),
    fileRecord('a.b/y.json', null, { state: 'rejected', reasons: ['one', 'two'], errorCode: 'SCHEMA_VALIDATION_FAILED', cid: null, encryptedSize: null, schemaId: null }),
    fileRecord('a.b/z.json', '2026-01-21T10:00:00.123+02:00', { state: 'registered', fileId: '12', origin: 'peer', seq: 5 }),
    fileRecord('a.b/w.json', '2026-01-21T10:00:00Z', { state: 'waiting-schema', reasons: [], fileId: null }),
    { ...fileRecord('a.b/v.json', null), fileId: undefined, size: -0, mtimeMs: 1.5, encryptedSize: Number.NaN, updatedAt: Number.POSITIVE_INFINITY },
    { ...fileRecord('a.b/u.json', null), reasons: holed, extra: { nested: [1, { at: new Date(0) }], gone: undefined }, when: new Date(0), flag: true, fn: () => 1, sym: Symbol('s') }
  ]
  for (const r of representative) assert.deepStrictEqual(checkRecord(r as FileRecord), roundTrip(r), JSON.stringify(r))
})
