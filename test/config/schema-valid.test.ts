// The configuration schema is compiled at every start without checking it against JSON Schema's
// meta-schema (resolve.ts); this is where that check happens.
import test from 'node:test'
import assert from 'node:assert/strict'
import { Ajv2020 } from 'ajv/dist/2020.js'
import { CONFIG_SCHEMA } from '../../src/config/schema.js'

test('the configuration schema is a valid JSON Schema 2020-12 document under strict mode', () => {
  const ajv = new Ajv2020({ allErrors: true, useDefaults: true, strict: true, validateSchema: true })
  ajv.addVocabulary(['x-env', 'x-live'])
  assert.equal(ajv.validateSchema(CONFIG_SCHEMA), true, JSON.stringify(ajv.errors))
  assert.doesNotThrow(() => ajv.compile(CONFIG_SCHEMA))
})
