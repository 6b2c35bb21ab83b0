import { test } from 'node:test'
import assert from 'node:assert/strict'
import { createSchemaValidators, exceedsValues, schemaDraft } from '../../src/registry/validators.js'
import { parseSchemaDefinition } from '../../src/registry/definition.js'
import { isHearthError } from '../../src/errors.js'
import type { SchemaDefinition } from '../../src/registry/types.js'

function schemaAt (url: string, schema: Record<string, unknown>, scope = 'instagram.profile'): { definitionUrl: string; definition: SchemaDefinition } {
  return { definitionUrl: url, definition: parseSchemaDefinition({ name: 'n', version: '1', scope, dialect: 'json', schema }) }
}

const profile = schemaAt('ipfs://profile-v1', {
  type: 'object',
  properties: {
    username: { type: 'string' },
    followers: { type: 'integer', minimum: 0 },
    email: { type: 'string', format: 'email' },
    kind: { enum: ['personal', 'business'] },
    links: { type: 'array', items: { type: 'string', format: 'uri' } },
    'a/b': { type: 'boolean' }
  },
  required: ['username'],
  additionalProperties: false
})

test('valid data passes; invalid data gets one readable reason per problem, with JSON pointers', () => {
  const v = createSchemaValidators()
  assert.deepEqual(v.validateData(profile, { username: 'ada', followers: 3, email: 'ada@example.org', kind: 'personal', links: ['https://x.org'] }), { ok: true })

  assert.deepEqual(v.validateData(profile, { username: 5 }), { ok: false, reasons: ['/username: must be string'] })
  assert.deepEqual(v.validateData(profile, {}), { ok: false, reasons: ["must have required property 'username'"] })
  const all = v.validateData(profile, {
    followers: -1, email: 'not-mail', kind: 'robot', links: ['ok?', 'https://fine.org'], 'a/b': 'yes', extra: 1
  })
  assert.deepEqual(all, {
    ok: false,
    reasons: [
      "must have required property 'username'",
      "must NOT have additional property 'extra'",
      '/followers: must be >= 0',
      '/email: must match format "email"',
      '/kind: must be one of ["personal","business"]',
      '/links/0: must match format "uri"',
      '/a~1b: must be boolean'
    ]
  })
  assert.deepEqual(v.validateData(profile, 'a string'), { ok: false, reasons: ['must be object'] })
})

test('the number of reasons is capped so a huge invalid array does not produce a huge rejection', () => {
  const v = createSchemaValidators({ maxReasons: 5 })
  const list = schemaAt('ipfs://list', { type: 'object', properties: { xs: { type: 'array', items: { type: 'string' } } } })
  const result = v.validateData(list, { xs: Array.from({ length: 1000 }, (_, i) => i) })
  assert.equal(result.ok, false)
  assert.deepEqual(!result.ok && result.reasons, ['/xs/0: must be string', '/xs/1: must be string', '/xs/2: must be string', '/xs/3: must be string', '/xs/4: must be string', '…and 995 more'])
})

test('a definition whose schema declares draft-07 is validated with draft-07 semantics', () => {
  const v = createSchemaValidators()
  // In draft-07 `items` as an array is tuple validation and `definitions` holds $ref targets;
  // 2020-12 would reject array-form `items` at compile time.
  for (const declared of ['http://json-schema.org/draft-07/schema#', 'http://json-schema.org/draft-07/schema', 'https://json-schema.org/draft-07/schema#']) {
    const d7 = schemaAt(`ipfs://d7-${declared}`, {
      $schema: declared,
      type: 'object',
      definitions: { handle: { type: 'string', pattern: '^@' } },
      properties: { handle: { $ref: '#/definitions/handle' }, pair: { type: 'array', items: [{ type: 'string' }, { type: 'number' }] } },
      required: ['handle']
    })
    assert.equal(v.compiled(d7).draft, 'draft-07')
    assert.deepEqual(v.validateData(d7, { handle: '@ada', pair: ['x', 1] }), { ok: true })
    assert.deepEqual(v.validateData(d7, { handle: 'ada', pair: [1, 'x'] }), {
      ok: false,
      reasons: ['/handle: must match pattern "^@"', '/pair/0: must be string', '/pair/1: must be number']
    })
  }
  assert.deepEqual(schemaDraft({}), { draft: '2020-12', canonical: null })
  assert.equal((schemaDraft({ $schema: 'https://json-schema.org/draft/2019-09/schema' }) as { draft: string }).draft, '2019-09')
})

test('compiled validators are reused per definitionUrl and the cache is bounded (LRU)', () => {
  const v = createSchemaValidators({ maxEntries: 3 })
  const defs = [1, 2, 3, 4].map((n) => schemaAt(`ipfs://v${n}`, { type: 'object', properties: { n: { const: n } } }))
  for (let round = 0; round < 5; round++) {
    assert.deepEqual(v.validateData(defs[0]!, { n: 1 }), { ok: true })
  }
  assert.equal(v.compilations, 1)
  assert.equal(v.compiled(defs[0]!), v.compiled(defs[0]!))

  v.validateData(defs[1]!, { n: 2 })
  v.validateData(defs[2]!, { n: 3 })
  v.validateData(defs[0]!, { n: 1 }) // refreshes v1: v2 is now the least recently used
  v.validateData(defs[3]!, { n: 4 }) // evicts v2
  assert.equal(v.size, 3)
  assert.equal(v.compilations, 4)
  v.validateData(defs[0]!, { n: 1 })
  assert.equal(v.compilations, 4, 'v1 stayed cached')
  assert.deepEqual(v.validateData(defs[1]!, { n: 9 }), { ok: false, reasons: ['/n: must be equal to 2'] })
  assert.equal(v.compilations, 5, 'v2 was evicted and compiled again')
  assert.equal(v.size, 3)
})

test('two versions of a schema declaring the same $id compile side by side, each with its own rules', () => {
  const v = createSchemaValidators()
  const v1 = schemaAt('ipfs://same-id-1', { $id: 'https://schemas.example/profile', type: 'object', properties: { n: { type: 'string' } } })
  const v2 = schemaAt('ipfs://same-id-2', { $id: 'https://schemas.example/profile', type: 'object', properties: { n: { type: 'number' } } })
  for (let i = 0; i < 3; i++) {
    assert.deepEqual(v.validateData(v1, { n: 'x' }), { ok: true })
    assert.deepEqual(v.validateData(v2, { n: 1 }), { ok: true })
    assert.deepEqual(v.validateData(v2, { n: 'x' }), { ok: false, reasons: ['/n: must be number'] })
  }
  assert.equal(v.size, 2)
})

test('a schema that does not compile is an INVALID_SCHEMA_DEFINITION, not a crash', () => {
  const v = createSchemaValidators()
  const broken = { definitionUrl: 'ipfs://broken', definition: { name: 'n', version: '1', scope: 'a.b', dialect: 'json', schema: { type: 'object', properties: { x: { $ref: '#/nowhere' } } } } }
  assert.throws(() => v.validateData(broken, {}), (err: unknown) => {
    assert.ok(isHearthError(err, 'INVALID_SCHEMA_DEFINITION'))
    assert.match((err.details?.reasons as string[])[0]!, /can't resolve reference #\/nowhere/)
    return true
  })
  assert.equal(v.size, 0)
})

test('ReDoS: schema patterns run on RE2, so a catastrophic pattern answers at once; patterns RE2 cannot run are refused', () => {
  const v = createSchemaValidators()
  const evil = schemaAt('ipfs://evil', { type: 'object', properties: { name: { type: 'string', pattern: '^(a+)+$' } }, patternProperties: { '^(b+)+$': { type: 'string' } } })
  const started = process.cpuUsage()
  assert.deepEqual(v.validateData(evil, { name: 'a'.repeat(35) + '!' }), { ok: false, reasons: ['/name: must match pattern "^(a+)+$"'] })
  assert.deepEqual(v.validateData(evil, { ['b'.repeat(40) + '!']: 1 }), { ok: true })
  const cpu = process.cpuUsage(started)
  // with the backtracking engine this is minutes of CPU; RE2 makes it microseconds
  assert.ok(cpu.user + cpu.system < 5_000_000, `took ${cpu.user + cpu.system} µs of CPU`)
  assert.throws(() => schemaAt('ipfs://lookahead', { type: 'string', pattern: 'a(?=b)' }),
    (err) => isHearthError(err, 'INVALID_SCHEMA_DEFINITION') && /does not compile/.test(String((err.details?.reasons as string[])[0])))
})

test('a schema with 50,000 properties is refused before compiling; the limit counts JSON values', () => {
  const properties: Record<string, unknown> = {}
  for (let i = 0; i < 50_000; i++) properties[`p${i}`] = { type: 'string' }
  const started = process.cpuUsage()
  assert.throws(() => schemaAt('ipfs://wide', { type: 'object', properties }),
    (err) => isHearthError(err, 'INVALID_SCHEMA_DEFINITION') && /more than 5000 JSON values/.test(err.message))
  const cpu = process.cpuUsage(started)
  assert.ok(cpu.user + cpu.system < 2_000_000, `took ${cpu.user + cpu.system} µs of CPU`)
  assert.equal(exceedsValues({ a: [1, 2, { b: null }] }, 6), false)
  assert.equal(exceedsValues({ a: [1, 2, { b: null }] }, 5), true)
})

test('a million keys against additionalProperties:false: one pass, the first error only, no million error objects', () => {
  const v = createSchemaValidators()
  const strict = schemaAt('ipfs://strict', { type: 'object', properties: { username: { type: 'string' } }, additionalProperties: false })
  const data: Record<string, number> = {}
  for (let i = 0; i < 1_000_000; i++) data[`k${i}`] = i
  const heap = process.memoryUsage().heapUsed
  const result = v.validateData(strict, data)
  assert.equal(result.ok, false)
  assert.deepEqual(!result.ok && result.reasons, ["must NOT have additional property 'k0'", '(only the first error is listed: the data has more than 10000 JSON values)'])
  assert.ok(process.memoryUsage().heapUsed - heap < 100 * 1024 * 1024)
  // small invalid data still gets every reason
  assert.equal((v.validateData(strict, { a: 1, b: 2 }) as { reasons: string[] }).reasons.length, 2)
})
