import { test } from 'node:test'
import assert from 'node:assert/strict'
import { canonicalJson, parseSchemaDefinition, serializeDefinition } from '../../src/registry/definition.js'
import { isHearthError } from '../../src/errors.js'
import { definitionDoc } from '../support/registry-fixtures.js'

function reasonsOf (input: unknown): string[] {
  try {
    parseSchemaDefinition(input)
  } catch (err) {
    assert.ok(isHearthError(err, 'INVALID_SCHEMA_DEFINITION'), `expected INVALID_SCHEMA_DEFINITION, got ${String(err)}`)
    assert.equal(err.status, 400)
    return err.details?.reasons as string[]
  }
  assert.fail('the definition was accepted')
}

test('a valid definition parses from an object, JSON text and UTF-8 bytes, keeping only the protocol fields', () => {
  const doc: Record<string, unknown> = { ...definitionDoc('instagram.profile'), extra: 'dropped' }
  const fromObject = parseSchemaDefinition(doc)
  assert.deepEqual(fromObject, {
    name: 'instagram.profile test schema',
    version: '1.0.0',
    scope: 'instagram.profile',
    dialect: 'json',
    description: 'test definition',
    schema: doc.schema
  })
  assert.deepEqual(parseSchemaDefinition(JSON.stringify(doc)), fromObject)
  // With a byte order mark, as some editors write it.
  const bytes = new Uint8Array([0xef, 0xbb, 0xbf, ...new TextEncoder().encode(JSON.stringify(doc))])
  assert.deepEqual(parseSchemaDefinition(bytes), fromObject)
  const { description: _, ...withoutDescription } = definitionDoc('spotify.savedTracks')
  assert.equal(parseSchemaDefinition(withoutDescription).description, undefined)
})

test('camelCase and three-segment scopes are accepted exactly as written', () => {
  assert.equal(parseSchemaDefinition(definitionDoc('spotify.savedTracks')).scope, 'spotify.savedTracks')
  assert.equal(parseSchemaDefinition(definitionDoc('google.maps.timeline')).scope, 'google.maps.timeline')
})

test('every problem of a bad definition is reported, each with a precise reason', () => {
  const cases: Array<{ what: string; input: unknown; reasons: Array<string | RegExp> }> = [
    { what: 'not JSON text', input: '{"name": ', reasons: [/^the definition is not valid JSON: /] },
    { what: 'not UTF-8', input: new Uint8Array([0x7b, 0xff, 0xfe, 0x7d]), reasons: ['the definition is not valid UTF-8'] },
    { what: 'an array', input: [], reasons: ['a schema definition must be a JSON object, got array'] },
    { what: 'null', input: 'null', reasons: ['a schema definition must be a JSON object, got null'] },
    {
      what: 'everything missing',
      input: {},
      reasons: ['name is missing', 'version is missing', 'scope is missing', 'dialect is missing (must be "json")', 'schema is missing']
    },
    { what: 'empty name', input: definitionDoc('a.b', { name: '  ' }), reasons: ['name is empty'] },
    { what: 'numeric version', input: definitionDoc('a.b', { version: 2 }), reasons: ['version must be a string, got number'] },
    { what: 'uppercase source', input: definitionDoc('Instagram.profile'), reasons: ['scope "Instagram.profile" segment 1 (source) must match ^[a-z0-9][a-z0-9_]*$'] },
    { what: 'four segments', input: definitionDoc('a.b.c.d'), reasons: ['scope "a.b.c.d" has 4 segments; a scope has 2 or 3'] },
    { what: 'scope not a string', input: definitionDoc('a.b', { scope: 7 }), reasons: ['scope must be a string, got number'] },
    { what: 'other dialect', input: definitionDoc('a.b', { dialect: 'sqlite' }), reasons: ['dialect must be "json", got "sqlite"'] },
    { what: 'description not text', input: definitionDoc('a.b', { description: ['x'] }), reasons: ['description must be a string, got array'] },
    { what: 'schema an array', input: definitionDoc('a.b', { schema: [] }), reasons: ['schema must be a JSON Schema object, got array'] },
    { what: 'schema a boolean', input: definitionDoc('a.b', { schema: true }), reasons: ['schema must be a JSON Schema object, got boolean'] },
    {
      what: 'schema with an invalid type',
      input: definitionDoc('a.b', { schema: { type: 'strin' } }),
      reasons: [/^schema does not compile: schema is invalid: data\/type must be equal to one of the allowed values/]
    },
    {
      what: 'schema with a dangling $ref',
      input: definitionDoc('a.b', { schema: { type: 'object', properties: { x: { $ref: '#/$defs/missing' } } } }),
      reasons: [/^schema does not compile: can't resolve reference #\/\$defs\/missing/]
    },
    {
      what: 'unsupported $schema',
      input: definitionDoc('a.b', { schema: { $schema: 'http://json-schema.org/draft-04/schema#', type: 'object' } }),
      reasons: ['unsupported $schema "http://json-schema.org/draft-04/schema#" (supported: JSON Schema 2020-12, 2019-09, draft-07)']
    },
    {
      what: 'several problems at once',
      input: { name: 'x', version: '1', scope: 'a', dialect: 'JSON', schema: 'nope' },
      reasons: ['scope "a" has 1 segment; a scope has 2 or 3', 'dialect must be "json", got "JSON"', 'schema must be a JSON Schema object, got string']
    }
  ]
  for (const c of cases) {
    const reasons = reasonsOf(c.input)
    assert.equal(reasons.length, c.reasons.length, `${c.what}: ${JSON.stringify(reasons)}`)
    c.reasons.forEach((expected, i) => {
      if (typeof expected === 'string') assert.equal(reasons[i], expected, c.what)
      else assert.match(reasons[i]!, expected, c.what)
    })
  }
})

test('unknown keywords in a schema are tolerated (definitions written for other validators)', () => {
  const parsed = parseSchemaDefinition(definitionDoc('a.b', { schema: { type: 'object', 'x-display': 'card', properties: { a: { type: 'string', format: 'not-a-known-format' } } } }))
  assert.equal(parsed.scope, 'a.b')
})

test('the canonical serialization sorts keys at every depth, so key order never changes the bytes', () => {
  const a = parseSchemaDefinition(definitionDoc('a.b', { schema: { type: 'object', required: ['x'], properties: { x: { type: 'string', minLength: 1 } } } }))
  const b = parseSchemaDefinition({
    schema: { properties: { x: { minLength: 1, type: 'string' } }, required: ['x'], type: 'object' },
    description: 'test definition',
    dialect: 'json',
    scope: 'a.b',
    version: '1.0.0',
    name: 'a.b test schema'
  })
  assert.deepEqual(serializeDefinition(a), serializeDefinition(b))
  assert.equal(canonicalJson({ b: [3, { d: 1, c: null }], a: 'é' }), '{"a":"é","b":[3,{"c":null,"d":1}]}')
  // Serialized bytes parse back to the same definition.
  assert.deepEqual(parseSchemaDefinition(serializeDefinition(a)), a)
})

test('checkCompiles: false (the shipped definitions, compiled by their own test) skips only the compile check', () => {
  const dangling = definitionDoc('a.b', { schema: { type: 'object', properties: { x: { $ref: '#/$defs/missing' } } } })
  assert.match(reasonsOf(dangling)[0]!, /^schema does not compile/)
  assert.equal(parseSchemaDefinition(dangling, { checkCompiles: false }).scope, 'a.b')
  assert.throws(() => parseSchemaDefinition(definitionDoc('a.b', { dialect: 'csv' }), { checkCompiles: false }),
    (err: unknown) => isHearthError(err, 'INVALID_SCHEMA_DEFINITION'))
})
