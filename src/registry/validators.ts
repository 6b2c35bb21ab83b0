// Compiled JSON Schema validators for schema definitions (docs/protocol.md §2.2), and readable
// reasons when data does not match. Compiling costs milliseconds (the first compile of an Ajv
// instance ~80 ms for its meta-schema), validating microseconds, so compiled validators are
// cached. Definitions are content-addressed, so a definitionUrl names one schema forever and is a
// sound cache key.
//
// Schemas and data can both be hostile, so neither may stall the daemon:
//   - `pattern` / `patternProperties` run on RE2 (linear time; no lookaround or backreferences):
//     `^(a+)+$` against "a"×35 + "!" answers in microseconds instead of minutes;
//   - compile time grows with the schema (~0.4 ms per node, superlinear past thousands), so a
//     schema may have at most MAX_SCHEMA_VALUES objects and arrays;
//   - data is first checked by a validator that stops at the first error; the one that lists every
//     error (allErrors) runs only for data of at most MAX_DETAILED_VALUES, so a body with a million
//     keys against `additionalProperties: false` costs one pass, not a million error objects.
import { Ajv2020 } from 'ajv/dist/2020.js'
import { Ajv2019 } from 'ajv/dist/2019.js'
import AjvDraft07 from 'ajv'
import type { ErrorObject, ValidateFunction } from 'ajv'
import type { RegExpEngine } from 'ajv/dist/types/index.js'
import addFormats from 'ajv-formats'
import RE2 from 're2'
import { HearthError } from '../errors.js'
import type { Logger } from '../log.js'
import type { ResolvedSchema } from './types.js'

export type ValidationResult = { ok: true } | { ok: false; reasons: string[] }

export type JsonSchemaDraft = '2020-12' | '2019-09' | 'draft-07'

// Accepted spellings of `$schema`, mapped to the draft and to the meta-schema id Ajv knows.
// Definitions in the wild write these with and without the trailing '#', and with https.
const DRAFTS: Array<{ draft: JsonSchemaDraft; pattern: RegExp; canonical: string }> = [
  { draft: '2020-12', pattern: /^https?:\/\/json-schema\.org\/draft\/2020-12\/schema#?$/, canonical: 'https://json-schema.org/draft/2020-12/schema' },
  { draft: '2019-09', pattern: /^https?:\/\/json-schema\.org\/draft\/2019-09\/schema#?$/, canonical: 'https://json-schema.org/draft/2019-09/schema' },
  { draft: 'draft-07', pattern: /^https?:\/\/json-schema\.org\/draft-07\/schema#?$/, canonical: 'http://json-schema.org/draft-07/schema#' }
]

/** Which draft a schema is written in: its `$schema`, or 2020-12 when it has none (docs/protocol.md §2.2). */
export function schemaDraft (schema: Record<string, unknown>): { draft: JsonSchemaDraft; canonical: string | null } | { problem: string } {
  const declared = schema.$schema
  if (declared === undefined) return { draft: '2020-12', canonical: null }
  if (typeof declared !== 'string') return { problem: '$schema must be a string' }
  const known = DRAFTS.find((d) => d.pattern.test(declared))
  if (known === undefined) {
    return { problem: `unsupported $schema ${JSON.stringify(declared)} (supported: JSON Schema 2020-12, 2019-09, draft-07)` }
  }
  return { draft: known.draft, canonical: known.canonical }
}

type AnyAjv = Ajv2020 | Ajv2019 | AjvDraft07.default

/** Largest schema compiled, in JSON values (shipped schemas have under 150). */
export const MAX_SCHEMA_VALUES = 5_000
/** Largest data for which every validation error is listed, in JSON values; larger data reports the first one. */
export const MAX_DETAILED_VALUES = 10_000

const re2Engine: RegExpEngine = Object.assign((pattern: string, flags: string) => new RE2(pattern, flags), { code: 'require("re2")' })

/**
 * Whether `value` holds more than `limit` JSON values (itself, every member and element). Stops at
 * the limit, and walks members with for-in (no array of a million values is ever built).
 */
export function exceedsValues (value: unknown, limit: number): boolean {
  let count = 0
  const stack: unknown[] = [value]
  while (stack.length > 0) {
    const v = stack.pop()
    if (++count > limit) return true
    if (v === null || typeof v !== 'object') continue
    if (Array.isArray(v)) {
      if (count + v.length > limit) return true
      for (const child of v) stack.push(child)
      continue
    }
    for (const key in v) {
      if (count + stack.length >= limit) return true
      stack.push((v as Record<string, unknown>)[key])
    }
  }
  return false
}

/**
 * Compiles schemas with one Ajv instance per draft. Schemas are compiled with `addUsedSchema:
 * false` so two definitions declaring the same `$id` (two versions of one schema) never collide
 * in Ajv's registry, and `release` drops Ajv's own reference so evicted schemas can be collected.
 */
export interface SchemaCompiler {
  /** Throws INVALID_SCHEMA_DEFINITION with `details.reasons` when the schema does not compile. */
  compile (schema: Record<string, unknown>): CompiledSchema
}

export interface CompiledSchema {
  readonly draft: JsonSchemaDraft
  validate (data: unknown): ValidationResult
  /** Forget Ajv's internal reference to this schema. The compiled function stays usable. */
  release (): void
}

export function createSchemaCompiler (opts: { logger?: Logger; maxReasons?: number } = {}): SchemaCompiler {
  const maxReasons = opts.maxReasons ?? 50
  const instances = new Map<string, AnyAjv>()
  // Unknown keywords and formats are common in definitions written for other validators; they
  // are ignored (strict off) but worth a debug line when someone wonders why a rule is not applied.
  const ajvLogger = {
    log: () => {},
    warn: (...args: unknown[]) => opts.logger?.debug({ ajv: args.map(String).join(' ') }, 'schema compile warning'),
    error: (...args: unknown[]) => opts.logger?.warn({ ajv: args.map(String).join(' ') }, 'schema compile error')
  }

  function instance (draft: JsonSchemaDraft, allErrors: boolean): AnyAjv {
    const key = `${draft}:${String(allErrors)}`
    let ajv = instances.get(key)
    if (ajv !== undefined) return ajv
    const options = { allErrors, strict: false, addUsedSchema: false, logger: ajvLogger, code: { regExp: re2Engine } }
    ajv = draft === '2020-12'
      ? new Ajv2020(options)
      : draft === '2019-09' ? new Ajv2019(options) : new AjvDraft07.default(options)
    addFormats.default(ajv as Parameters<typeof addFormats.default>[0])
    instances.set(key, ajv)
    return ajv
  }

  function compileWith (ajv: AnyAjv, schema: Record<string, unknown>): ValidateFunction {
    try {
      return ajv.compile(schema)
    } catch (err) {
      ajv.removeSchema(schema)
      throw invalid([`schema does not compile: ${(err as Error).message}`])
    }
  }

  return {
    compile (schema) {
      if (schema === null || typeof schema !== 'object' || Array.isArray(schema)) {
        throw invalid(['schema must be a JSON object'])
      }
      const detected = schemaDraft(schema)
      if ('problem' in detected) throw invalid([detected.problem])
      if (exceedsValues(schema, MAX_SCHEMA_VALUES)) {
        throw invalid([`schema has more than ${MAX_SCHEMA_VALUES} JSON values (compiling it would stall the daemon)`])
      }
      const firstError = instance(detected.draft, false)
      // A shallow copy: the copy's identity keys Ajv's internal cache (released on eviction) and
      // carries the `$schema` spelling Ajv recognises; the caller's object is never modified.
      const compiled: Record<string, unknown> = { ...schema }
      if (detected.canonical !== null) compiled.$schema = detected.canonical
      const fast = compileWith(firstError, compiled)
      // compiled on the first failure that deserves a full list of reasons
      let detailed: ValidateFunction | null = null
      return {
        draft: detected.draft,
        validate (data) {
          if (fast(data) === true) return { ok: true }
          if (exceedsValues(data, MAX_DETAILED_VALUES)) {
            return { ok: false, reasons: [...formatErrors(fast.errors ?? [], maxReasons), `(only the first error is listed: the data has more than ${MAX_DETAILED_VALUES} JSON values)`] }
          }
          detailed ??= compileWith(instance(detected.draft, true), compiled)
          detailed(data)
          return { ok: false, reasons: formatErrors(detailed.errors ?? [], maxReasons) }
        },
        release () {
          firstError.removeSchema(compiled)
          if (detailed !== null) instance(detected.draft, true).removeSchema(compiled)
        }
      }
    }
  }
}

function invalid (reasons: string[]): HearthError {
  return new HearthError('INVALID_SCHEMA_DEFINITION', `invalid schema definition: ${reasons.join('; ')}`, { reasons })
}

/** Ajv errors as "<json pointer>: <message>" lines, the pointer left out for the root. */
export function formatErrors (errors: ErrorObject[], maxReasons = 50): string[] {
  const lines: string[] = []
  const seen = new Set<string>()
  for (const e of errors) {
    const line = (e.instancePath === '' ? '' : `${e.instancePath}: `) + describe(e)
    // allErrors can report one failure several times (e.g. through anyOf branches).
    if (seen.has(line)) continue
    seen.add(line)
    lines.push(line)
  }
  if (lines.length <= maxReasons) return lines
  return [...lines.slice(0, maxReasons), `…and ${lines.length - maxReasons} more`]
}

function describe (e: ErrorObject): string {
  const p = e.params as Record<string, unknown>
  switch (e.keyword) {
    case 'additionalProperties': return `must NOT have additional property '${String(p.additionalProperty)}'`
    case 'unevaluatedProperties': return `must NOT have unevaluated property '${String(p.unevaluatedProperty)}'`
    case 'enum': return `must be one of ${short(p.allowedValues)}`
    case 'const': return `must be equal to ${short(p.allowedValue)}`
    case 'format': return `must match format "${String(p.format)}"`
    default: return e.message ?? `fails ${e.keyword}`
  }
}

function short (value: unknown): string {
  const text = JSON.stringify(value) ?? String(value)
  return text.length <= 120 ? text : `${text.slice(0, 117)}...`
}

/** The part of a resolved schema a validator needs: its cache key and its definition. */
export type ValidatableSchema = Pick<ResolvedSchema, 'definitionUrl' | 'definition'>

export interface SchemaValidators {
  /** Validate `data` (an envelope's `data`) against the schema's definition. */
  validateData (resolved: ValidatableSchema, data: unknown): ValidationResult
  /** The compiled validator (compiling and caching it on first use). Throws INVALID_SCHEMA_DEFINITION. */
  compiled (resolved: ValidatableSchema): CompiledSchema
  /** Number of compiled validators held. */
  readonly size: number
  /** Compilations so far; lets callers (and tests) see that the cache is reused. */
  readonly compilations: number
}

/**
 * A bounded LRU of compiled validators keyed by definitionUrl. Evicted entries are released from
 * Ajv as well, so memory stays bounded however many schema versions pass through a long-lived daemon.
 */
export function createSchemaValidators (opts: { maxEntries?: number; maxReasons?: number; logger?: Logger } = {}): SchemaValidators {
  const maxEntries = Math.max(1, opts.maxEntries ?? 256)
  const compiler = createSchemaCompiler(opts)
  const lru = new Map<string, CompiledSchema>()
  let compilations = 0

  function compiled (resolved: ValidatableSchema): CompiledSchema {
    const key = resolved.definitionUrl
    const hit = lru.get(key)
    if (hit !== undefined) {
      lru.delete(key)
      lru.set(key, hit)
      return hit
    }
    const fresh = compiler.compile(resolved.definition.schema)
    compilations++
    lru.set(key, fresh)
    while (lru.size > maxEntries) {
      const [oldestKey, oldest] = lru.entries().next().value as [string, CompiledSchema]
      lru.delete(oldestKey)
      oldest.release()
    }
    return fresh
  }

  return {
    compiled,
    validateData (resolved, data) { return compiled(resolved).validate(data) },
    get size () { return lru.size },
    get compilations () { return compilations }
  }
}
