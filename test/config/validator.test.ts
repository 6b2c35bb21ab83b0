// The build's standalone configuration validator (scripts/build-config-validator.mjs) fills in the
// same defaults and reports the same problems as the one compiled at run time, and the build's
// file is what a built daemon loads.
import { test } from 'node:test'
import assert from 'node:assert/strict'
import { existsSync } from 'node:fs'
import { createRequire } from 'node:module'
import type { ValidateFunction } from 'ajv'
import { compileConfigValidator, configValidatorSource, GENERATED_VALIDATOR_FILE } from '../../src/config/validator.js'

/** The standalone source evaluated as the CommonJS module the build writes (its `require` resolves from here). */
function standalone (): ValidateFunction {
  const module = { exports: {} as unknown }
  // eslint-disable-next-line no-new-func -- the generated module's own text, evaluated as node would
  new Function('module', 'exports', 'require', configValidatorSource())(module, module.exports, createRequire(import.meta.url))
  return module.exports as ValidateFunction
}

const INPUTS: unknown[] = [
  {},
  { logLevel: 'debug', api: { tcp: { enabled: true, port: 9000 } }, sync: { mdns: false } },
  { logLevel: 'loud' },
  { api: { tcp: { port: 70000 } } },
  { api: { maxBodyBytes: 1.5 } },
  { unknownKey: 1, storage: { backend: 'embedded', extra: true } },
  { ui: { listen: 'no port here' } },
  { api: { tcp: { host: '' } } },
  { api: { tcp: { host: '𝒽'.repeat(200) } } },
  { restore: { gateways: ['ftp://x'] } },
  { sync: 'on' },
  [],
  null
]

test('the standalone validator gives the compiled one\'s verdict, defaults and errors for every input', () => {
  const compiled = compileConfigValidator()
  const generated = standalone()
  for (const input of INPUTS) {
    const a = structuredClone(input)
    const b = structuredClone(input)
    const okA = compiled(a)
    const okB = generated(b)
    assert.equal(okB, okA, JSON.stringify(input))
    assert.deepEqual(b, a, `defaults filled in alike: ${JSON.stringify(input)}`)
    assert.deepEqual(generated.errors ?? null, compiled.errors ?? null, `errors alike: ${JSON.stringify(input)}`)
  }
  assert.equal(compiled({}), true, 'the defaults alone are a valid configuration')
  assert.equal(compiled({ logLevel: 'loud' }), false)
})

test('the build writes the standalone validator beside the compiled module, and only needs Ajv\'s small runtime', () => {
  const source = configValidatorSource()
  assert.match(source, /module\.exports = validate/)
  assert.deepEqual([...source.matchAll(/require\("([^"]+)"\)/g)].map((m) => m[1]).filter((m) => !m!.startsWith('ajv/dist/runtime/')), [])
  const built = new URL(`../../dist/config/${GENERATED_VALIDATOR_FILE}`, import.meta.url)
  if (existsSync(new URL('../../dist/config/validator.js', import.meta.url))) {
    assert.ok(existsSync(built), 'npm run build wrote dist/config/' + GENERATED_VALIDATOR_FILE)
    const fromBuild = createRequire(import.meta.url)(built.pathname) as ValidateFunction & { schemaDigest?: string }
    assert.match(fromBuild.schemaDigest ?? '', /^[0-9a-f]{64}$/, 'stamped with the schema it was made from')
    assert.ok(source.includes(fromBuild.schemaDigest!), 'dist/ was built from this schema (npm run build)')
    const value = {}
    assert.equal(fromBuild(value), true)
    assert.deepEqual(value, (() => { const v = {}; compileConfigValidator()(v); return v })())
  }
})
