import assert from 'node:assert/strict'
import { test } from 'node:test'
import { isHearthError } from '../../src/errors.js'
import {
  buildEnvelope, checkEnvelope, collectedAtProblem, collectedAtToFileName, envelopeProblems,
  fileNameToCollectedAt, parseEnvelopeBytes, serializeEnvelope, type Envelope
} from '../../src/protocol/envelope.js'

const GOOD: Envelope = {
  $schema: 'ipfs://bafkreigh2akiscaildcqabsyg3dfr6chu3fgpregiymsck7e7aqa4s52zy',
  version: '1.0',
  scope: 'instagram.profile',
  collectedAt: '2026-01-21T10:00:00Z',
  data: { username: 'alice' }
}

function reasonsOf (value: unknown): string[] {
  try {
    checkEnvelope(value)
  } catch (err) {
    assert.ok(isHearthError(err, 'INVALID_ENVELOPE'))
    const reasons = err.details?.reasons
    assert.ok(Array.isArray(reasons))
    assert.deepEqual(reasons, envelopeProblems(value))
    return reasons as string[]
  }
  assert.fail('expected INVALID_ENVELOPE')
}

test('a valid envelope passes unchanged, with or without milliseconds', () => {
  assert.equal(checkEnvelope(GOOD), GOOD)
  const withMs = { ...GOOD, collectedAt: '2026-01-21T10:00:00.123Z', scope: 'spotify.savedTracks', data: {} }
  assert.equal(checkEnvelope(withMs), withMs)
})

test('every field rule is reported, all at once', () => {
  const reasons = reasonsOf({ $schema: 7, version: 1, scope: 'Instagram.profile', collectedAt: 'yesterday', data: [] })
  assert.equal(reasons.length, 5)
  assert.match(reasons[0]!, /^\$schema must be a non-empty string/)
  assert.match(reasons[0]!, /`hearth schema show <scope>` prints it/, 'a bad scope: the hint names no scope')
  assert.equal(reasons[1], 'version must be the string "1.0"')
  assert.equal(reasons[2], 'scope segment 1 (source) must match ^[a-z0-9][a-z0-9_]*$')
  assert.match(reasons[3]!, /^collectedAt must be ISO 8601 UTC/)
  assert.equal(reasons[4], 'data must be a JSON object, got array')
})

test('each rule on its own', () => {
  const cases: Array<[Record<string, unknown>, RegExp]> = [
    [{ $schema: '' }, /^\$schema must be a non-empty string/],
    [{ $schema: undefined }, /^\$schema must be a non-empty string/],
    [{ version: '1' }, /^version must be the string "1.0"$/],
    [{ version: '1.1' }, /^version must be the string "1.0"$/],
    [{ scope: 'instagram' }, /^scope has 1 segment; a scope has 2 or 3$/],
    [{ scope: undefined }, /^scope must be a string, got undefined$/],
    [{ collectedAt: '2026-01-21T10:00:00+00:00' }, /^collectedAt must be ISO 8601 UTC/],
    [{ collectedAt: '2026-01-21 10:00:00Z' }, /^collectedAt must be ISO 8601 UTC/],
    [{ collectedAt: '2026-01-21T10:00Z' }, /^collectedAt must be ISO 8601 UTC/],
    [{ collectedAt: '2026-01-21T10:00:00.1Z' }, /^collectedAt must be ISO 8601 UTC/],
    [{ collectedAt: '2026-01-21T10:00:00.123456Z' }, /^collectedAt must be ISO 8601 UTC/],
    [{ collectedAt: '2026-01-21t10:00:00z' }, /^collectedAt must be ISO 8601 UTC/],
    [{ collectedAt: '2026-02-30T10:00:00Z' }, /^collectedAt is not a real date and time$/],
    [{ collectedAt: '2025-02-29T10:00:00Z' }, /^collectedAt is not a real date and time$/],
    [{ collectedAt: '2026-13-01T10:00:00Z' }, /^collectedAt is not a real date and time$/],
    [{ collectedAt: '2026-01-21T24:00:00Z' }, /^collectedAt is not a real date and time$/],
    [{ collectedAt: '2026-01-21T10:60:00Z' }, /^collectedAt is not a real date and time$/],
    [{ collectedAt: '2026-01-21T10:00:60Z' }, /^collectedAt is not a real date and time$/],
    [{ collectedAt: 1768989600000 }, /^collectedAt must be a string$/],
    [{ data: null }, /^data must be a JSON object, got null$/],
    [{ data: 'text' }, /^data must be a JSON object, got string$/],
    [{ data: [1, 2] }, /^data must be a JSON object, got array$/],
    [{ extra: true }, /^unknown field "extra"/]
  ]
  for (const [patch, reason] of cases) {
    const reasons = reasonsOf({ ...GOOD, ...patch })
    assert.equal(reasons.length, 1, JSON.stringify(patch) + ' → ' + JSON.stringify(reasons))
    assert.match(reasons[0]!, reason)
  }
  assert.equal(collectedAtProblem('2024-02-29T23:59:59.999Z'), null, 'leap day')
  assert.equal(collectedAtProblem('0001-01-01T00:00:00Z'), null, 'years below 100 are real years')
})

test('non-objects are rejected with one reason', () => {
  for (const [value, type] of [[null, 'null'], [[], 'array'], ['x', 'string'], [3, 'number'], [undefined, 'undefined']] as const) {
    assert.deepEqual(reasonsOf(value), [`envelope must be a JSON object, got ${type}`])
  }
})

test('buildEnvelope fills version and a millisecond UTC collectedAt, and validates', () => {
  const before = Date.now()
  const env = buildEnvelope({ definitionUrl: GOOD.$schema, scope: 'instagram.profile', data: { username: 'bob' } })
  assert.equal(env.version, '1.0')
  assert.equal(env.$schema, GOOD.$schema)
  assert.match(env.collectedAt, /^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}\.\d{3}Z$/)
  assert.ok(Date.parse(env.collectedAt) >= before - 1 && Date.parse(env.collectedAt) <= Date.now())
  assert.equal(buildEnvelope({ ...GOOD, definitionUrl: GOOD.$schema, collectedAt: new Date(Date.UTC(2026, 0, 21, 10)) }).collectedAt, '2026-01-21T10:00:00.000Z')
  assert.equal(buildEnvelope({ ...GOOD, definitionUrl: GOOD.$schema, collectedAt: '2026-01-21T10:00:00Z' }).collectedAt, '2026-01-21T10:00:00Z')
  assert.throws(() => buildEnvelope({ ...GOOD, definitionUrl: GOOD.$schema, collectedAt: new Date('nope') }), (e: unknown) => isHearthError(e, 'INVALID_ENVELOPE'))
  assert.throws(() => buildEnvelope({ definitionUrl: GOOD.$schema, scope: 'Bad.scope', data: {} }), (e: unknown) => isHearthError(e, 'INVALID_ENVELOPE'))
  assert.throws(() => buildEnvelope({ definitionUrl: GOOD.$schema, scope: 'a.b', data: new Map() as unknown as Record<string, unknown> }), (e: unknown) => isHearthError(e, 'INVALID_ENVELOPE'))
})

test('serializeEnvelope writes a fixed key order and parses back to the same envelope', () => {
  const shuffled = { data: { b: 1, a: [true, null, 'ü'] }, collectedAt: GOOD.collectedAt, scope: GOOD.scope, version: '1.0', $schema: GOOD.$schema }
  const bytes = serializeEnvelope(checkEnvelope(shuffled))
  const text = new TextDecoder().decode(bytes)
  assert.equal(text, `{"$schema":"${GOOD.$schema}","version":"1.0","scope":"instagram.profile","collectedAt":"2026-01-21T10:00:00Z","data":{"b":1,"a":[true,null,"ü"]}}`)
  assert.deepEqual(parseEnvelopeBytes(bytes), shuffled)
  assert.deepEqual(serializeEnvelope(parseEnvelopeBytes(bytes)), bytes)
})

test('parseEnvelopeBytes: INVALID_JSON for bad UTF-8 or JSON, INVALID_ENVELOPE for a bad envelope', () => {
  const enc = new TextEncoder()
  assert.throws(() => parseEnvelopeBytes(new Uint8Array([0x7b, 0xff, 0xfe, 0x7d])), (e: unknown) => isHearthError(e, 'INVALID_JSON') && e.details?.reason === 'invalid UTF-8')
  assert.throws(() => parseEnvelopeBytes(enc.encode('{"a":')), (e: unknown) => isHearthError(e, 'INVALID_JSON'))
  assert.throws(() => parseEnvelopeBytes(new Uint8Array()), (e: unknown) => isHearthError(e, 'INVALID_JSON'))
  assert.throws(() => parseEnvelopeBytes(enc.encode('[1,2]')), (e: unknown) => isHearthError(e, 'INVALID_ENVELOPE'))
  assert.throws(() => parseEnvelopeBytes(enc.encode(JSON.stringify({ ...GOOD, version: '2.0' }))), (e: unknown) => isHearthError(e, 'INVALID_ENVELOPE'))
  assert.deepEqual(parseEnvelopeBytes(enc.encode('\n  ' + JSON.stringify(GOOD, null, 2) + '\n')), GOOD)
})

test('collectedAt ⇄ file name round trips, milliseconds kept', () => {
  const pairs = [
    ['2026-01-21T10:00:00Z', '2026-01-21T10-00-00Z.json'],
    ['2026-01-21T10:00:00.123Z', '2026-01-21T10-00-00.123Z.json'],
    ['2026-01-21T10:00:00.000Z', '2026-01-21T10-00-00.000Z.json'],
    ['1999-12-31T23:59:59.999Z', '1999-12-31T23-59-59.999Z.json']
  ]
  for (const [iso, name] of pairs) {
    assert.equal(collectedAtToFileName(iso!), name)
    assert.equal(fileNameToCollectedAt(name!), iso)
  }
  const now = new Date().toISOString()
  assert.equal(fileNameToCollectedAt(collectedAtToFileName(now)), now)
})

test('names that are not data file names map to null; bad collectedAt cannot become a name', () => {
  for (const name of [
    '2026-01-21T10:00:00Z.json', '2026-01-21T10-00-00Z', '2026-01-21T10-00-00Z.json.tmp', 'profile.json',
    '2026-02-30T10-00-00Z.json', '2026-01-21T10-00-00.1Z.json', '../2026-01-21T10-00-00Z.json', '.2026-01-21T10-00-00Z.json', ''
  ]) {
    assert.equal(fileNameToCollectedAt(name), null, name)
  }
  assert.throws(() => collectedAtToFileName('2026-01-21T10:00:00+01:00'), (e: unknown) => isHearthError(e, 'INVALID_ENVELOPE'))
  assert.throws(() => collectedAtToFileName('../../etc/passwd'), (e: unknown) => isHearthError(e, 'INVALID_ENVELOPE'))
})

test('a collectedAt just found valid (remembered for the checks that follow) never makes another string pass', () => {
  assert.notEqual(collectedAtProblem(''), null, 'the empty string, before any stamp was checked')
  const stamp = '2026-11-26T15:00:00.123Z'
  assert.equal(collectedAtProblem(stamp), null)
  assert.equal(collectedAtProblem(stamp), null, 'the same stamp again')
  for (const bad of ['', '2026-11-26T15:00:00.123', '2026-02-30T15:00:00.123Z', '2026-11-26T15:00:00.1234Z', `${stamp} `]) {
    assert.notEqual(collectedAtProblem(bad), null, bad)
    assert.equal(collectedAtProblem(stamp), null)
  }
  assert.equal(collectedAtToFileName(stamp), '2026-11-26T15-00-00.123Z.json')
  assert.throws(() => collectedAtToFileName('2026-02-30T15:00:00.123Z'), (e: unknown) => isHearthError(e, 'INVALID_ENVELOPE'))
})

test('a collectedAt is a real date and time exactly when a Date set to its fields reads them back (every day of leap and common years, hour, minute and second bounds)', () => {
  const byDate = (s: string): boolean => {
    const [year, month, day, hour, minute, second] = s.slice(0, 19).split(/[-T:]/).map(Number) as [number, number, number, number, number, number]
    const t = new Date(0)
    t.setUTCFullYear(year, month - 1, day)
    t.setUTCHours(hour, minute, second, 0)
    return t.getUTCFullYear() === year && t.getUTCMonth() === month - 1 && t.getUTCDate() === day && t.getUTCHours() === hour && t.getUTCMinutes() === minute && t.getUTCSeconds() === second
  }
  const pad = (n: number, width = 2): string => String(n).padStart(width, '0')
  let real = 0
  for (const year of [0, 1, 4, 100, 400, 1900, 1970, 2000, 2023, 2024, 2100, 9999]) {
    for (let month = 0; month <= 13; month++) {
      for (let day = 0; day <= 32; day++) {
        for (const time of ['00:00:00', '23:59:59', '24:00:00', '12:60:00', '12:00:60', '99:99:99']) {
          const s = `${pad(year, 4)}-${pad(month)}-${pad(day)}T${time}.123Z`
          assert.equal(collectedAtProblem(s) === null, byDate(s), s)
          if (byDate(s)) real++
        }
      }
    }
  }
  assert.equal(real, 2 * (365 * 12 + 5), 'two real times a day; years 0, 4, 400, 2000 and 2024 are leap years')
})

test('a missing $schema names the command that prints it for the file\'s scope', () => {
  const { $schema: _schema, ...rest } = GOOD
  assert.deepEqual(reasonsOf(rest), [`$schema must be a non-empty string: the definitionUrl of the scope's schema (\`hearth schema show ${GOOD.scope}\` prints it; \`hearth put ${GOOD.scope}\` writes the file with it)`])
})
