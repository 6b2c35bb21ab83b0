// Compiled JSON Schema validators for schema definitions (DESIGN 2.2), and readable reasons when
// data does not match. Compiling costs milliseconds (the first compile of an Ajv instance ~80 ms
// for its meta-schema), validating microseconds, so compiled validators are cached. Definitions
// are content-addressed, so a definitionUrl names one schema forever and is a sound cache key.
import { Ajv2020 } from 'ajv/dist/2020.js'
import { Ajv2019 } from 'ajv/dist/2019.js'
import AjvDraft07 from 'ajv'
import type { ErrorObject, ValidateFunction } from 'ajv'
import addFormats from 'ajv-formats'
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

/** Which draft a schema is written in: its `$schema`, or 2020-12 when it has none (DESIGN 2.2). */
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
  const instances = new Map<JsonSchemaDraft, AnyAjv>()
  // Unknown keywords and formats are common in definitions written for other validators; they
  // are ignored (strict off) but worth a debug line when someone wonders why a rule is not applied.
  const ajvLogger = {
    log: () => {},
    warn: (...args: unknown[]) => opts.logger?.debug({ ajv: args.map(String).join(' ') }, 'schema compile warning'),
    error: (...args: unknown[]) => opts.logger?.warn({ ajv: args.map(String).join(' ') }, 'schema compile error')
  }

  function instance (draft: JsonSchemaDraft): AnyAjv {
    let ajv = instances.get(draft)
    if (ajv !== undefined) return ajv
    const options = { allErrors: true, strict: false, addUsedSchema: false, logger: ajvLogger }
    ajv = draft === '2020-12'
      ? new Ajv2020(options)
      : draft === '2019-09' ? new Ajv2019(options) : new AjvDraft07.default(options)
    addFormats.default(ajv as Parameters<typeof addFormats.default>[0])
    instances.set(draft, ajv)
    return ajv
  }

  return {
    compile (schema) {
      if (schema === null || typeof schema !== 'object' || Array.isArray(schema)) {
        throw invalid(['schema must be a JSON object'])
      }
      const detected = schemaDraft(schema)
      if ('problem' in detected) throw invalid([detected.problem])
      const ajv = instance(detected.draft)
      // A shallow copy: the copy's identity keys Ajv's internal cache (released on eviction) and
      // carries the `$schema` spelling Ajv recognises; the caller's object is never modified.
      const compiled: Record<string, unknown> = { ...schema }
      if (detected.canonical !== null) compiled.$schema = detected.canonical
      let fn: ValidateFunction
      try {
        fn = ajv.compile(compiled)
      } catch (err) {
        ajv.removeSchema(compiled)
        throw invalid([`schema does not compile: ${(err as Error).message}`])
      }
      return {
        draft: detected.draft,
        validate (data) {
          if (fn(data) === true) return { ok: true }
          return { ok: false, reasons: formatErrors(fn.errors ?? [], maxReasons) }
        },
        release () { ajv.removeSchema(compiled) }
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
