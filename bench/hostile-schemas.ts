// Bench of hostile schemas and data against the validator, side by side with what the
// backtracking engine and allErrors-only validation cost. Usage: node --import tsx bench/hostile-schemas.ts
import '../src/polyfill.js'
import { Ajv2020 } from 'ajv/dist/2020.js'
import { createSchemaCompiler, formatErrors } from '../src/registry/validators.js'
import { MAX_DATA_DEPTH, parseBoundedJson } from '../src/protocol/bounded-json.js'

function cpuMs (f: () => unknown): number {
  const started = process.cpuUsage()
  f()
  const used = process.cpuUsage(started)
  return (used.user + used.system) / 1000
}

function row (label: string, ms: number, extra = ''): void {
  console.log(`${label.padEnd(64)} ${ms.toFixed(1).padStart(10)} ms CPU  ${extra}`)
}

const compiler = createSchemaCompiler()
const backtracking = new Ajv2020({ allErrors: true, strict: false })

// ReDoS: the backtracking engine doubles per extra 'a'; 28 keeps this bench short (35 takes minutes)
const redos = { type: 'object', properties: { name: { type: 'string', pattern: '^(a+)+$' } } }
const jsValidate = backtracking.compile(redos)
const re2 = compiler.compile(redos)
for (const n of [24, 26, 28]) {
  const data = { name: 'a'.repeat(n) + '!' }
  row(`pattern ^(a+)+$ vs "a"×${n}+"!": JS RegExp`, cpuMs(() => jsValidate(data)))
  row(`pattern ^(a+)+$ vs "a"×${n}+"!": RE2`, cpuMs(() => re2.validate(data)))
}
row('pattern ^(a+)+$ vs "a"×35+"!": RE2', cpuMs(() => re2.validate({ name: 'a'.repeat(35) + '!' })))

// compile cost by schema size, and the refusal of oversized ones
compiler.compile({ type: 'object' }).release()
for (const n of [100, 500, 1000, 2000]) {
  const properties: Record<string, unknown> = {}
  for (let i = 0; i < n; i++) properties[`p${i}`] = { type: 'string' }
  row(`compile a schema with ${n} properties (${n * 3 + 3} JSON values)`, cpuMs(() => compiler.compile({ type: 'object', properties }).release()))
}
const wide: Record<string, unknown> = {}
for (let i = 0; i < 50_000; i++) wide[`p${i}`] = { type: 'string' }
row('refuse a schema with 50,000 properties (over the limit)', cpuMs(() => { try { compiler.compile({ type: 'object', properties: wide }) } catch {} }))

// a million keys against additionalProperties:false
const strict = { type: 'object', properties: { username: { type: 'string' } }, additionalProperties: false }
const million: Record<string, number> = {}
for (let i = 0; i < 1_000_000; i++) million[`k${i}`] = i
const strictFirst = compiler.compile(strict)
const strictAll = backtracking.compile(strict)
let heap = process.memoryUsage().heapUsed
row('1,000,000 keys: every error and its reasons (allErrors, before)', cpuMs(() => { strictAll(million); formatErrors(strictAll.errors ?? []) }), `heap +${((process.memoryUsage().heapUsed - heap) / 1e6).toFixed(0)} MB`)
strictAll.errors = null
heap = process.memoryUsage().heapUsed
row('1,000,000 keys: first error, size check (now)', cpuMs(() => strictFirst.validate(million)), `heap +${((process.memoryUsage().heapUsed - heap) / 1e6).toFixed(0)} MB`)
const text = JSON.stringify(million)
const parseLimits = { maxDepth: MAX_DATA_DEPTH, subject: 'body' }
const refused = (f: () => unknown): () => void => () => { try { f() } catch {} }
row(`1,000,000 keys: parsing the body (${(text.length / 1e6).toFixed(1)} MB), no value count (before)`, cpuMs(refused(() => parseBoundedJson(text, { ...parseLimits, maxValues: Infinity }))))
row('1,000,000 keys: refused by the value count, no JSON.parse (now)', cpuMs(refused(() => parseBoundedJson(text, parseLimits))))
