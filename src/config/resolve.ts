// Resolves the effective configuration: the schema's defaults, then config.json, then HEARTH_*
// variables, then `--set path=value` flags. The result is validated against the schema before
// anything else starts, and every problem names the key and where its value came from, so a bad
// HEARTH_TCP_PORT is reported as such instead of surfacing later as an odd failure.
import { readFile } from 'node:fs/promises'
import type { ErrorObject } from 'ajv'
import { HearthError } from '../errors.js'
import { CONFIG_SCHEMA, envOverrides, keySchema, leafKeys } from './schema.js'
import type { HearthConfig } from './types.js'
import { configValidator } from './validator.js'

/** Where a key's effective value came from: `default`, `file`, `env HEARTH_X` or `--set`. */
export type ConfigSource = 'default' | 'file' | `env ${string}` | '--set' | 'config set'

export interface ResolvedConfig {
  config: HearthConfig
  /** Leaf key path → the source of its value. */
  sources: Record<string, ConfigSource>
}

export interface ConfigSources {
  /** Contents of config.json (already parsed), or undefined when there is none. */
  file?: unknown
  env?: NodeJS.ProcessEnv
  /** `path=value` strings from --set flags. */
  sets?: string[]
  /** Keys of `file` being changed by `hearth config set` now: a problem with one names the command line, not the file. */
  changing?: readonly string[]
}

type Json = null | boolean | number | string | Json[] | { [k: string]: Json }

export function isPlainObject (v: unknown): v is Record<string, unknown> {
  return typeof v === 'object' && v !== null && !Array.isArray(v)
}

/** Parse an override's text: JSON when it parses (numbers, booleans, arrays, null), else the string. */
function parseValue (raw: string): Json {
  try { return JSON.parse(raw) as Json } catch { return raw }
}

export function setPath (target: Record<string, unknown>, path: string, value: unknown): void {
  const keys = path.split('.')
  let node: Record<string, unknown> = target
  for (const k of keys.slice(0, -1)) {
    if (!isPlainObject(node[k])) node[k] = {}
    node = node[k] as Record<string, unknown>
  }
  if (value === undefined) delete node[keys[keys.length - 1]!]
  else node[keys[keys.length - 1]!] = value
}

export function getPath (source: unknown, path: string): unknown {
  let node: unknown = source
  for (const k of path.split('.')) {
    if (!isPlainObject(node) || !(k in node)) return undefined
    node = node[k]
  }
  return node
}

function problemPath (err: ErrorObject): string {
  const base = err.instancePath.split('/').slice(1).join('.')
  if (err.keyword === 'additionalProperties') {
    const extra = String((err.params as { additionalProperty: string }).additionalProperty)
    return base === '' ? extra : `${base}.${extra}`
  }
  return base
}

function describeProblem (err: ErrorObject, sources: Record<string, ConfigSource>, raw: unknown): { key: string, message: string, source: ConfigSource | null } {
  const key = problemPath(err)
  if (err.keyword === 'additionalProperties') return { key, message: `${key} is not a configuration key`, source: sourceOf(key, sources) }
  let message = `${key === '' ? '(root)' : key} ${err.message ?? 'is invalid'}`
  if (err.keyword === 'enum') message += `: ${((err.params as { allowedValues: unknown[] }).allowedValues).map((a) => JSON.stringify(a)).join(', ')}`
  const source = sourceOf(key, sources)
  const value = getPath(raw, key)
  if (source !== null && source !== 'default') message += ` (got ${JSON.stringify(value)} from ${source})`
  return { key, message, source }
}

function sourceOf (key: string, sources: Record<string, ConfigSource>): ConfigSource | null {
  for (let k = key; k !== ''; k = k.includes('.') ? k.slice(0, k.lastIndexOf('.')) : '') {
    if (sources[k] !== undefined) return sources[k]
  }
  return null
}

/** Validate a merged raw configuration (defaults filled in) and return the typed result. */
function validate (raw: Record<string, unknown>, sources: Record<string, ConfigSource>): HearthConfig {
  const value = structuredClone(raw)
  const check = configValidator()
  if (!check(value)) {
    const problems = (check.errors ?? []).map((e) => describeProblem(e, sources, raw))
    const reasons = [...new Set(problems.map((p) => p.message))]
    throw new HearthError('CONFIG_INVALID', `invalid configuration: ${reasons.join('; ')}`, { reasons, problems })
  }
  return value as unknown as HearthConfig
}

function markSources (value: unknown, prefix: string, source: ConfigSource, sources: Record<string, ConfigSource>): void {
  const schema = prefix === '' ? CONFIG_SCHEMA : keySchema(prefix)
  if (isPlainObject(value) && schema?.properties !== undefined) {
    for (const [k, v] of Object.entries(value)) markSources(v, prefix === '' ? k : `${prefix}.${k}`, source, sources)
    return
  }
  sources[prefix] = source
}

function deepMerge (base: unknown, over: unknown): unknown {
  if (!isPlainObject(base) || !isPlainObject(over)) return structuredClone(over)
  const out: Record<string, unknown> = { ...base }
  for (const [k, v] of Object.entries(over)) out[k] = k in base ? deepMerge(base[k], v) : structuredClone(v)
  return out
}

export function resolveConfigWithSources (input: ConfigSources): ResolvedConfig {
  const sources: Record<string, ConfigSource> = {}
  for (const { path } of leafKeys()) sources[path] = 'default'
  if (input.file !== undefined && !isPlainObject(input.file)) {
    throw new HearthError('CONFIG_INVALID', 'invalid configuration: config.json must hold a JSON object', { reasons: ['config.json must hold a JSON object'] })
  }
  const raw = deepMerge({}, input.file ?? {}) as Record<string, unknown>
  markSources(input.file ?? {}, '', 'file', sources)
  for (const path of input.changing ?? []) markSources(getPath(input.file, path), path, 'config set', sources)
  for (const [name, path] of Object.entries(envOverrides())) {
    const text = input.env?.[name]
    if (text === undefined || text === '') continue
    const isList = keySchema(path)?.type === 'array'
    setPath(raw, path, isList && !text.trim().startsWith('[') ? text.split(',').map((s) => s.trim()).filter((s) => s !== '') : parseValue(text))
    sources[path] = `env ${name}`
  }
  for (const s of input.sets ?? []) {
    const eq = s.indexOf('=')
    if (eq <= 0) throw new HearthError('CONFIG_INVALID', `--set expects path=value, got ${JSON.stringify(s)}`, { reasons: [`--set expects path=value, got ${JSON.stringify(s)}`] })
    const path = s.slice(0, eq)
    const value = parseValue(s.slice(eq + 1))
    setPath(raw, path, value)
    markSources(value, path, '--set', sources)
  }
  const config = validate(raw, sources)
  return { config, sources }
}

export function resolveConfig (input: ConfigSources): HearthConfig {
  return resolveConfigWithSources(input).config
}

/** The schema's defaults alone. */
export function defaultConfig (): HearthConfig {
  return resolveConfig({})
}

export async function readConfigFile (path: string): Promise<unknown> {
  let text: string
  try {
    text = await readFile(path, 'utf8')
  } catch (err) {
    if ((err as NodeJS.ErrnoException).code === 'ENOENT') return undefined
    throw new HearthError('CONFIG_INVALID', `cannot read ${path}: ${(err as Error).message}`)
  }
  try {
    return JSON.parse(text)
  } catch (err) {
    throw new HearthError('CONFIG_INVALID', `${path} is not valid JSON: ${(err as Error).message}`)
  }
}

export async function loadConfigWithSources (configPath: string, env: NodeJS.ProcessEnv, sets: string[] = []): Promise<ResolvedConfig> {
  return resolveConfigWithSources({ file: await readConfigFile(configPath), env, sets })
}

export async function loadConfig (configPath: string, env: NodeJS.ProcessEnv, sets: string[] = []): Promise<HearthConfig> {
  return (await loadConfigWithSources(configPath, env, sets)).config
}
