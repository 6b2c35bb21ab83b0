// Schema definition documents (docs/protocol.md §2.2): parsing with every problem reported at once, and the
// canonical byte form that gives one definition one CID wherever it is pinned.
import { HearthError } from '../errors.js'
import { scopeProblem } from '../protocol/scope.js'
import type { SchemaDefinition } from './types.js'
import { createSchemaCompiler, type SchemaCompiler } from './validators.js'

/** The only dialect docs/protocol.md §2.2 defines; the contract stores it next to the definitionUrl. */
export const JSON_DIALECT = 'json'

const MAX_NAME_LENGTH = 256
const MAX_VERSION_LENGTH = 64
const MAX_DESCRIPTION_LENGTH = 10_000

// Checking that a schema compiles needs an Ajv instance whose own meta-schema compile costs
// ~80 ms; one lazily made instance serves every parse. It holds nothing between calls (each
// checked schema is released), so sharing it is invisible to callers.
let defaultCompiler: SchemaCompiler | undefined

export interface ParseDefinitionOptions {
  /** Compiler used for the "schema compiles" check; a shared private one when not given. */
  compiler?: SchemaCompiler
  /**
   * false: skip that check (default true), for definitions known to compile: the shipped ones,
   * which their test compiles, and whose check at every start cost ~20 ms each. A schema that
   * does not compile still refuses every file, with the reason, when the validator is made.
   */
  checkCompiles?: boolean
}

/**
 * A schema definition from JSON bytes, JSON text, or an already parsed value. Only the fields of
 * docs/protocol.md §2.2 are kept. Throws INVALID_SCHEMA_DEFINITION listing every problem in `details.reasons`.
 */
export function parseSchemaDefinition (input: unknown, opts: ParseDefinitionOptions = {}): SchemaDefinition {
  const value = decode(input)
  if (value === null || typeof value !== 'object' || Array.isArray(value)) {
    throw invalid([`a schema definition must be a JSON object, got ${typeName(value)}`])
  }
  const doc = value as Record<string, unknown>
  const reasons: string[] = []

  checkText(doc, 'name', MAX_NAME_LENGTH, reasons)
  checkText(doc, 'version', MAX_VERSION_LENGTH, reasons)
  if (!('scope' in doc)) {
    reasons.push('scope is missing')
  } else {
    const problem = scopeProblem(doc.scope)
    if (problem !== null) reasons.push(`scope ${typeof doc.scope === 'string' ? JSON.stringify(doc.scope) + ' ' : ''}${problem}`)
  }
  if (doc.dialect !== JSON_DIALECT) {
    reasons.push(doc.dialect === undefined
      ? 'dialect is missing (must be "json")'
      : `dialect must be "json", got ${JSON.stringify(doc.dialect) ?? typeName(doc.dialect)}`)
  }
  if (doc.description !== undefined) {
    if (typeof doc.description !== 'string') reasons.push(`description must be a string, got ${typeName(doc.description)}`)
    else if (doc.description.length > MAX_DESCRIPTION_LENGTH) reasons.push(`description is longer than ${MAX_DESCRIPTION_LENGTH} characters`)
  }
  const schema = doc.schema
  if (schema === undefined) {
    reasons.push('schema is missing')
  } else if (schema === null || typeof schema !== 'object' || Array.isArray(schema)) {
    reasons.push(`schema must be a JSON Schema object, got ${typeName(schema)}`)
  } else if (opts.checkCompiles !== false) {
    const compiler = opts.compiler ?? (defaultCompiler ??= createSchemaCompiler())
    try {
      compiler.compile(schema as Record<string, unknown>).release()
    } catch (err) {
      if (err instanceof HearthError && Array.isArray(err.details?.reasons)) reasons.push(...err.details.reasons as string[])
      else throw err
    }
  }

  if (reasons.length > 0) throw invalid(reasons)
  return {
    name: doc.name as string,
    version: doc.version as string,
    scope: doc.scope as string,
    dialect: JSON_DIALECT,
    ...(doc.description !== undefined ? { description: doc.description as string } : {}),
    schema: schema as Record<string, unknown>
  }
}

/**
 * The bytes a definition is pinned as: JSON with object keys sorted (code point order) and no
 * whitespace, UTF-8. The same definition always gives the same bytes and therefore the same CID,
 * which is what makes installing the shipped schemas on every start a no-op after the first.
 */
export function serializeDefinition (definition: SchemaDefinition): Uint8Array {
  return new TextEncoder().encode(canonicalJson(definition))
}

export function canonicalJson (value: unknown): string {
  if (value === null || typeof value !== 'object') {
    const text = JSON.stringify(value)
    if (text === undefined) throw new HearthError('INVALID_ARGUMENT', `cannot serialize ${typeof value} as JSON`)
    return text
  }
  if (Array.isArray(value)) return `[${value.map((v) => canonicalJson(v === undefined ? null : v)).join(',')}]`
  const obj = value as Record<string, unknown>
  const keys = Object.keys(obj).filter((k) => obj[k] !== undefined).sort()
  return `{${keys.map((k) => `${JSON.stringify(k)}:${canonicalJson(obj[k])}`).join(',')}}`
}

function decode (input: unknown): unknown {
  let text: string
  if (input instanceof Uint8Array) {
    try {
      text = new TextDecoder('utf-8', { fatal: true, ignoreBOM: false }).decode(input)
    } catch {
      throw invalid(['the definition is not valid UTF-8'])
    }
  } else if (typeof input === 'string') {
    text = input
  } else {
    return input
  }
  try {
    return JSON.parse(text)
  } catch (err) {
    throw invalid([`the definition is not valid JSON: ${(err as Error).message}`])
  }
}

function checkText (doc: Record<string, unknown>, field: string, maxLength: number, reasons: string[]): void {
  const v = doc[field]
  if (v === undefined) reasons.push(`${field} is missing`)
  else if (typeof v !== 'string') reasons.push(`${field} must be a string, got ${typeName(v)}`)
  else if (v.trim().length === 0) reasons.push(`${field} is empty`)
  else if (v.length > maxLength) reasons.push(`${field} is longer than ${maxLength} characters`)
}

function typeName (v: unknown): string {
  if (v === null) return 'null'
  if (Array.isArray(v)) return 'array'
  return typeof v
}

function invalid (reasons: string[]): HearthError {
  return new HearthError('INVALID_SCHEMA_DEFINITION', `invalid schema definition: ${reasons.join('; ')}`, { reasons })
}
