// The daemon's configuration: one JSON file in the home folder (config.json), every key with a
// default, overridden by environment variables and then by `--set path=value` flags.
// `hearth config` prints the effective result, so the precedence is visible, never guessed.
import { readFile } from 'node:fs/promises'
import { HearthError } from '../errors.js'

export interface HearthConfig {
  logLevel: string
  api: {
    /** Largest request body accepted on /v1 routes, in bytes. */
    maxBodyBytes: number
    /** Optional loopback TCP listener; it demands the bearer token in identity/api-token. */
    tcp: { enabled: boolean; host: string; port: number }
  }
  storage: {
    backend: 'embedded' | 'kubo'
    kubo: { url: string; timeoutMs: number; headers: Record<string, string> }
  }
  schemas: {
    /** A DP RPC lookup service (DESIGN 2.6); null = none (cache and chain only). */
    dpRpcUrl: string | null
    timeoutMs: number
    /** How often files waiting for their schema are retried. */
    retryWaitingMs: number
  }
  chain: {
    /** null = no chain: registrations wait in the queue. 'dev' = `--dev-chain`. */
    preset: 'vana' | 'moksha' | 'dev' | 'custom' | null
    rpcUrl: string | null
    chainId: number | null
    dataRegistry: string | null
    dataRefinerRegistry: string | null
    multicall: string | null
    confirmations: number
    batchSize: number
    pollIntervalMs: number
    /** 'daemon' signs with the daemon's own key; 'owner' with the owner's wallet when it is known. */
    signer: 'daemon' | 'owner'
  }
  sync: {
    enabled: boolean
    listen: string[]
    mdns: boolean
    peers: string[]
    intervalMs: number
  }
  upstream: {
    baseUrl: string | null
    timeoutMs: number
    jobPollMs: number
    jobDeadlineMs: number
  }
  ingest: {
    concurrency: number
    /** A file must stay unchanged this long before the watcher ingests it. */
    stabilityMs: number
    /** Rescan the folder periodically instead of change notifications (network filesystems). */
    usePolling: boolean
    pollIntervalMs: number
    /** Largest dropped data file read; larger ones are rejected with FILE_TOO_LARGE unread. */
    maxFileBytes: number
  }
}

export const DEFAULT_CONFIG: HearthConfig = {
  logLevel: 'info',
  api: { maxBodyBytes: 16 * 1024 * 1024, tcp: { enabled: false, host: '127.0.0.1', port: 8471 } },
  storage: { backend: 'embedded', kubo: { url: 'http://127.0.0.1:5001', timeoutMs: 10_000, headers: {} } },
  schemas: { dpRpcUrl: null, timeoutMs: 5_000, retryWaitingMs: 30_000 },
  chain: {
    preset: null,
    rpcUrl: null,
    chainId: null,
    dataRegistry: null,
    dataRefinerRegistry: null,
    multicall: null,
    confirmations: 1,
    batchSize: 100,
    pollIntervalMs: 2_000,
    signer: 'daemon'
  },
  sync: { enabled: true, listen: ['/ip4/0.0.0.0/tcp/4011'], mdns: true, peers: [], intervalMs: 60_000 },
  upstream: { baseUrl: null, timeoutMs: 30_000, jobPollMs: 2_000, jobDeadlineMs: 30 * 60_000 },
  ingest: { concurrency: 4, stabilityMs: 300, usePolling: false, pollIntervalMs: 5_000, maxFileBytes: 16 * 1024 * 1024 }
}

/** Environment variables that override a config key (documented in the README). */
export const ENV_OVERRIDES: Record<string, string> = {
  HEARTH_LOG_LEVEL: 'logLevel',
  HEARTH_MAX_BODY_BYTES: 'api.maxBodyBytes',
  HEARTH_TCP_PORT: 'api.tcp.port',
  HEARTH_STORAGE: 'storage.backend',
  HEARTH_KUBO_URL: 'storage.kubo.url',
  HEARTH_DP_RPC_URL: 'schemas.dpRpcUrl',
  HEARTH_CHAIN: 'chain.preset',
  HEARTH_CHAIN_RPC_URL: 'chain.rpcUrl',
  HEARTH_SYNC: 'sync.enabled',
  HEARTH_SYNC_LISTEN: 'sync.listen',
  HEARTH_MDNS: 'sync.mdns',
  HEARTH_UPSTREAM_URL: 'upstream.baseUrl'
}

type Json = null | boolean | number | string | Json[] | { [k: string]: Json }

function isPlainObject (v: unknown): v is Record<string, unknown> {
  return typeof v === 'object' && v !== null && !Array.isArray(v)
}

function deepMerge (base: unknown, over: unknown): unknown {
  if (!isPlainObject(base) || !isPlainObject(over)) return over
  const out: Record<string, unknown> = { ...base }
  for (const [k, v] of Object.entries(over)) out[k] = k in base ? deepMerge(base[k], v) : v
  return out
}

/** Parse an override's text: JSON when it parses (numbers, booleans, arrays, null), else the string. */
function parseValue (raw: string): Json {
  try { return JSON.parse(raw) as Json } catch { return raw }
}

function setPath (target: Record<string, unknown>, path: string, value: unknown): void {
  const keys = path.split('.')
  let node: Record<string, unknown> = target
  for (const k of keys.slice(0, -1)) {
    if (!isPlainObject(node[k])) node[k] = {}
    node = node[k] as Record<string, unknown>
  }
  node[keys[keys.length - 1]] = value
}

function getPath (source: unknown, path: string): unknown {
  let node: unknown = source
  for (const k of path.split('.')) {
    if (!isPlainObject(node) || !(k in node)) return undefined
    node = node[k]
  }
  return node
}

/** Type-check the merged result against the defaults' shape, so a typo fails loudly at start. */
function checkShape (value: unknown, reference: unknown, path: string, problems: string[]): void {
  if (isPlainObject(reference)) {
    if (!isPlainObject(value)) { problems.push(`${path || '(root)'} must be an object`); return }
    for (const k of Object.keys(value)) {
      const p = path ? `${path}.${k}` : k
      if (!(k in reference)) problems.push(`${p} is not a configuration key`)
      else if (k !== 'headers') checkShape(value[k], reference[k], p, problems)
    }
    return
  }
  if (reference === null) return // nullable keys hold a string, a number or null
  if (Array.isArray(reference)) {
    if (!Array.isArray(value) || value.some((x) => typeof x !== 'string')) problems.push(`${path} must be an array of strings`)
    return
  }
  if (typeof value !== typeof reference) problems.push(`${path} must be a ${typeof reference}`)
}

const ENUMS: Record<string, readonly unknown[]> = {
  'storage.backend': ['embedded', 'kubo'],
  'chain.preset': ['vana', 'moksha', 'dev', 'custom', null],
  'chain.signer': ['daemon', 'owner']
}

export function validateConfig (value: unknown): HearthConfig {
  const problems: string[] = []
  checkShape(value, DEFAULT_CONFIG, '', problems)
  for (const [path, allowed] of Object.entries(ENUMS)) {
    const v = getPath(value, path)
    if (!allowed.includes(v)) problems.push(`${path} must be one of ${allowed.map((a) => JSON.stringify(a)).join(', ')}`)
  }
  for (const path of ['api.maxBodyBytes', 'api.tcp.port', 'ingest.concurrency', 'ingest.maxFileBytes', 'chain.confirmations', 'chain.batchSize']) {
    const v = getPath(value, path)
    if (typeof v === 'number' && (!Number.isInteger(v) || v < 0)) problems.push(`${path} must be a non-negative integer`)
  }
  if (problems.length > 0) throw new HearthError('CONFIG_INVALID', `invalid configuration: ${problems.join('; ')}`, { reasons: problems })
  return value as HearthConfig
}

export interface ConfigSources {
  /** Contents of config.json (already parsed), or undefined when there is none. */
  file?: unknown
  env?: NodeJS.ProcessEnv
  /** `path=value` strings from --set flags. */
  sets?: string[]
}

export function resolveConfig (sources: ConfigSources): HearthConfig {
  let merged = deepMerge(structuredClone(DEFAULT_CONFIG), sources.file ?? {}) as Record<string, unknown>
  merged = structuredClone(merged)
  for (const [name, path] of Object.entries(ENV_OVERRIDES)) {
    const raw = sources.env?.[name]
    if (raw === undefined || raw === '') continue
    const value = path === 'sync.listen' && !raw.trim().startsWith('[') ? raw.split(',').map((s) => s.trim()) : parseValue(raw)
    setPath(merged, path, value)
  }
  for (const s of sources.sets ?? []) {
    const eq = s.indexOf('=')
    if (eq <= 0) throw new HearthError('CONFIG_INVALID', `--set expects path=value, got ${JSON.stringify(s)}`)
    setPath(merged, s.slice(0, eq), parseValue(s.slice(eq + 1)))
  }
  return validateConfig(merged)
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

export async function loadConfig (configPath: string, env: NodeJS.ProcessEnv, sets: string[] = []): Promise<HearthConfig> {
  return resolveConfig({ file: await readConfigFile(configPath), env, sets })
}
