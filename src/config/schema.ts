// The one description of the configuration: every key's type, range, format and default, the
// environment variable that may set it, and whether a change needs a restart. The daemon
// validates against it (resolve.ts), `hearth config` and the dashboard show it, and the README's
// table is generated from it (scripts/config-table.ts; a test keeps the README in step).
//
// Annotations beside JSON Schema's own keywords (registered as a vocabulary in validator.ts):
//   x-env      the HEARTH_* variable that overrides the key
//   x-live     true when a running daemon applies the change at once (otherwise: at next start)

export interface KeySchema {
  type?: string | string[]
  enum?: readonly unknown[]
  default?: unknown
  description?: string
  minimum?: number
  maximum?: number
  minLength?: number
  maxLength?: number
  maxItems?: number
  pattern?: string
  format?: string
  items?: KeySchema
  properties?: Record<string, KeySchema>
  additionalProperties?: boolean | KeySchema
  required?: string[]
  'x-env'?: string
  'x-live'?: boolean
}

const MS_DAY = 24 * 60 * 60 * 1000

function object (properties: Record<string, KeySchema>, description?: string): KeySchema {
  return { type: 'object', properties, additionalProperties: false, default: {}, ...(description !== undefined ? { description } : {}) }
}

function integer (def: number, minimum: number, maximum: number, description: string, env?: string): KeySchema {
  return { type: 'integer', minimum, maximum, default: def, description, ...(env !== undefined ? { 'x-env': env } : {}) }
}

function boolean (def: boolean, description: string, env?: string): KeySchema {
  return { type: 'boolean', default: def, description, ...(env !== undefined ? { 'x-env': env } : {}) }
}

/** An http(s) URL, or null when the key names an optional service. */
function httpUrl (def: string | null, description: string, env?: string): KeySchema {
  return {
    type: def === null ? ['string', 'null'] : 'string',
    pattern: '^https?://[^\\s]+$',
    maxLength: 2048,
    default: def,
    description,
    ...(env !== undefined ? { 'x-env': env } : {})
  }
}

const ADDRESS = '^0x[0-9a-fA-F]{40}$'
function address (description: string): KeySchema {
  return { type: ['string', 'null'], pattern: ADDRESS, default: null, description }
}

const ROOT_PROPERTIES: Record<string, KeySchema> = {
  logLevel: {
    type: 'string',
    enum: ['fatal', 'error', 'warn', 'info', 'debug', 'trace', 'silent'],
    default: 'info',
    description: 'pino log level',
    'x-env': 'HEARTH_LOG_LEVEL',
    'x-live': true
  },
  logFormat: {
    type: 'string',
    enum: ['auto', 'pretty', 'json'],
    default: 'auto',
    description: 'auto: readable lines (pino-pretty) when stderr (where logs go) is a terminal, JSON lines otherwise',
    'x-env': 'HEARTH_LOG_FORMAT'
  },
  api: object({
    maxBodyBytes: integer(16 * 1024 * 1024, 1024, 1024 * 1024 * 1024, 'largest request body on /v1 routes, in bytes', 'HEARTH_MAX_BODY_BYTES'),
    tcp: object({
      enabled: boolean(false, 'loopback TCP listener (demands the bearer token in identity/api-token)'),
      host: { type: 'string', minLength: 1, maxLength: 253, default: '127.0.0.1', description: 'its address; must resolve to a loopback address' },
      port: integer(8471, 0, 65535, 'its port (0 = any free port)', 'HEARTH_TCP_PORT')
    })
  }),
  storage: object({
    backend: { type: 'string', enum: ['embedded', 'kubo'], default: 'embedded', description: '`embedded` (in-process IPFS) or `kubo`', 'x-env': 'HEARTH_STORAGE' },
    kubo: object({
      url: httpUrl('http://127.0.0.1:5001', 'Kubo RPC API', 'HEARTH_KUBO_URL'),
      timeoutMs: integer(10_000, 1, MS_DAY, 'per-request deadline'),
      headers: { type: 'object', additionalProperties: { type: 'string', maxLength: 8192 }, default: {}, description: 'extra request headers (auth)' }
    })
  }),
  pinning: object({
    services: {
      type: 'array',
      maxItems: 8,
      default: [],
      description: 'IPFS Pinning Service API services asked to keep a copy of every stored ciphertext: `{name, endpoint, tokenFile, gateway}` (the token file must be mode 0600; `gateway`, optional, serves the sample reads that check a "pinned" answer); needs `storage.backend` kubo, whose node serves the blocks',
      items: {
        type: 'object',
        additionalProperties: false,
        required: ['name', 'endpoint', 'tokenFile'],
        properties: {
          name: { type: 'string', pattern: '^[a-z0-9][a-z0-9-]{0,31}$' },
          endpoint: { type: 'string', pattern: '^https?://[^\\s]+$', maxLength: 2048 },
          tokenFile: { type: 'string', minLength: 1, maxLength: 4096 },
          gateway: { type: ['string', 'null'], pattern: '^https?://[^\\s]+$', maxLength: 2048, default: null }
        }
      }
    },
    batchSize: integer(100, 1, 1000, 'pin requests sent per round, per service'),
    concurrency: integer(8, 1, 64, 'requests in flight at once, per service'),
    pollIntervalMs: integer(2_000, 50, MS_DAY, 'how often queued work and unfinished pins are looked at'),
    timeoutMs: integer(30_000, 100, MS_DAY, 'deadline of one request to a service'),
    sampleRate: { type: 'number', minimum: 0, maximum: 1, default: 0.05, description: 'share of newly pinned CIDs read back through the service\'s gateway and verified (at least one per round)' }
  }),
  schemas: object({
    dpRpcUrl: httpUrl(null, 'a DP RPC schema lookup service', 'HEARTH_DP_RPC_URL'),
    timeoutMs: integer(5_000, 1, MS_DAY, 'lookup and definition fetch deadline'),
    retryWaitingMs: integer(30_000, 10, MS_DAY, 'how often `waiting-schema` files are retried'),
    trustedOwners: { type: 'array', items: { type: 'string', pattern: ADDRESS }, maxItems: 256, default: [], description: 'accounts whose on-chain schemas may become a scope\'s schema, besides the owner and this daemon\'s tx key' },
    allowHttpDefinitionUrls: boolean(false, 'fetch schema definitions over plain `http://` (otherwise `ipfs://` and `https://` only)'),
    allowPrivateDefinitionUrls: boolean(false, 'let definition fetches reach loopback, private and link-local addresses')
  }),
  chain: object({
    preset: { type: ['string', 'null'], enum: ['vana', 'moksha', 'dev', 'custom', null], default: null, description: '`vana`, `moksha`, `dev` (`--dev-chain`), `custom`, or none', 'x-env': 'HEARTH_CHAIN' },
    rpcUrl: httpUrl(null, 'chain RPC endpoint (the preset\'s when null)', 'HEARTH_CHAIN_RPC_URL'),
    chainId: { type: ['integer', 'null'], minimum: 1, maximum: Number.MAX_SAFE_INTEGER, default: null, description: 'chain id (the preset\'s when null)' },
    dataRegistry: address('DataRegistry address (the preset\'s when null)'),
    dataRefinerRegistry: address('DataRefinerRegistry address (the preset\'s when null)'),
    multicall: address('Multicall3 address (detected when null)'),
    dataPortabilityGrantees: address('DataPortabilityGrantees address (the preset\'s when null; none = builders only in the local registry)'),
    dataPortabilityPermissions: address('DataPortabilityPermissions address (the preset\'s when null; none = grants stay local)'),
    confirmations: integer(1, 1, 1000, 'blocks before a file counts as registered'),
    batchSize: integer(100, 1, 1000, 'registrations per batched transaction'),
    pollIntervalMs: integer(2_000, 10, MS_DAY, 'queue and event polling interval'),
    signer: { type: 'string', enum: ['daemon', 'owner'], default: 'daemon', description: '`daemon` (own tx key) or `owner` (the owner\'s wallet, when known)' }
  }),
  sync: object({
    enabled: boolean(true, 'libp2p sync with the owner\'s other devices', 'HEARTH_SYNC'),
    listen: { type: 'array', items: { type: 'string', pattern: '^/', maxLength: 512 }, maxItems: 32, default: ['/ip4/0.0.0.0/tcp/4011'], description: 'libp2p listen multiaddrs (comma-separated in the variable)', 'x-env': 'HEARTH_SYNC_LISTEN' },
    mdns: boolean(true, 'LAN discovery', 'HEARTH_MDNS'),
    peers: { type: 'array', items: { type: 'string', pattern: '^/', maxLength: 1024 }, maxItems: 256, default: [], description: 'peer multiaddrs to keep dialing' },
    intervalMs: integer(60_000, 100, MS_DAY, 'periodic sync round')
  }),
  restore: object({
    gateways: { type: 'array', items: { type: 'string', pattern: '^https?://[^\\s]+$', maxLength: 2048 }, maxItems: 16, default: [], description: 'IPFS gateways (base URLs, trustless `/ipfs/{cid}?format=raw`) asked, in order, for a ciphertext neither local storage nor a connected device has; every block is verified against its CID; loopback allowed (comma-separated in the variable)', 'x-env': 'HEARTH_RESTORE_GATEWAYS' },
    requestTimeoutMs: integer(30_000, 100, MS_DAY, 'deadline of one block request to a gateway, and of each frame a device sends'),
    fileTimeoutMs: integer(10 * 60_000, 100, MS_DAY, 'longest one device or gateway may take to provide one ciphertext'),
    maxFileBytes: integer(1024 * 1024 * 1024, 1024, 1024 * 1024 * 1024, 'largest ciphertext accepted from a device or gateway')
  }),
  upstream: object({
    baseUrl: httpUrl(null, 'the conversation/image API (`{baseUrl}/api/v0`)', 'HEARTH_UPSTREAM_URL'),
    timeoutMs: integer(30_000, 1, MS_DAY, 'upstream request deadline'),
    jobPollMs: integer(2_000, 10, MS_DAY, 'image job polling interval'),
    jobDeadlineMs: integer(30 * 60_000, 1_000, 7 * MS_DAY, 'how long an image job is followed')
  }),
  ui: object({
    enabled: boolean(true, 'the owner\'s dashboard on loopback (`hearth ui` prints a login link)', 'HEARTH_UI'),
    listen: { type: 'string', pattern: '^(\\[[0-9a-fA-F:]+\\]|[^:\\s\\[\\]]+):[0-9]{1,5}$', maxLength: 300, default: '127.0.0.1:8470', description: 'the dashboard\'s `host:port`; the host must resolve to a loopback address (port 0 = any free port)', 'x-env': 'HEARTH_UI_LISTEN' }
  }),
  builders: object({
    listen: { type: ['string', 'null'], pattern: '^(\\[[0-9a-fA-F:.]+\\]|[^\\s:\\[\\]/]+):[0-9]{1,5}$', maxLength: 300, default: null, description: '`host:port` of the builder listener (signed requests from third-party apps); null = off', 'x-env': 'HEARTH_BUILDERS_LISTEN' },
    publicUrl: httpUrl(null, 'the URL builders reach the listener at (directly or through a reverse proxy): the `aud` they sign; default `http://<listen>`', 'HEARTH_BUILDERS_PUBLIC_URL'),
    rateLimitPerMinute: integer(600, 1, 1_000_000, 'signed requests per builder (or per address before a valid signature) per minute'),
    maxBodyBytes: integer(16 * 1024, 256, 1024 * 1024, 'largest request body on the builder listener'),
    maxPendingRequests: integer(10, 1, 1000, 'pending access requests per builder'),
    accessLogDays: integer(365, 1, 36_500, 'days of access log kept (whole days are dropped)')
  }),
  mcp: object({
    listen: { type: ['string', 'null'], pattern: '^(\\[[0-9a-fA-F:.]+\\]|[^\\s:\\[\\]/]+):[0-9]{1,5}$', maxLength: 300, default: null, description: '`host:port` of the assistants\' Streamable HTTP listener (`/mcp`, OAuth 2.1); null = off (`hearth mcp` over the socket still works)', 'x-env': 'HEARTH_MCP_LISTEN' },
    publicUrl: httpUrl(null, 'the URL remote assistants reach that listener at (directly or through a TLS reverse proxy): the OAuth issuer and resource; default `http://<listen>`', 'HEARTH_MCP_PUBLIC_URL'),
    accessTokenSeconds: integer(3600, 60, 86_400, 'lifetime of an OAuth access token (refresh tokens last 30 days and rotate at each use)'),
    maxSessions: integer(64, 1, 10_000, 'MCP sessions open at once (both ways in); an idle one closes after 30 minutes'),
    maxResultBytes: integer(48 * 1024, 4096, 1024 * 1024, 'largest tool answer handed to a model (records are paged to fit)')
  }),
  ingest: object({
    concurrency: integer(16, 1, 256, 'files retried or read again processed at once (they wait on fsync more than on the CPU, and concurrent files share syncs); dropped files and the scans go in batches of 32'),
    quietMs: integer(25, 0, 60_000, 'a dropped file is read once no change of it was seen this long; one that is not complete JSON yet waits for `ingest.stabilityMs` instead of being rejected'),
    stabilityMs: integer(300, 0, 60_000, 'a dropped file that is not complete JSON when read is read again once it stayed unchanged this long, and only then rejected'),
    maxFileBytes: integer(16 * 1024 * 1024, 1, 1024 * 1024 * 1024, 'largest dropped data file read; a larger one is rejected unread (`FILE_TOO_LARGE`)'),
    maxJsonValues: integer(500_000, 1_000, 100_000_000, 'most JSON values in one request body, data file or peer\'s file, counting every object member, object and array (not the numbers, strings, booleans and nulls of a list); more is refused before parsing (`JSON_TOO_MANY_VALUES`)', 'HEARTH_MAX_JSON_VALUES'),
    encryptionWorkers: integer(1, 0, 16, 'worker threads that encrypt files over 64 KiB, so the main thread keeps answering (0 = encrypt on the main thread)'),
    usePolling: boolean(false, 'rescan the folder every `ingest.pollIntervalMs` instead of change notifications (network filesystems)'),
    pollIntervalMs: integer(5_000, 100, MS_DAY, 'rescan interval with `ingest.usePolling`'),
    checkpointMs: integer(200, 0, 600_000, 'how long small files acknowledged through the ingest journal wait before they are synced together in the background and their journal entries dropped')
  })
}

export const CONFIG_SCHEMA: KeySchema = { type: 'object', properties: ROOT_PROPERTIES, additionalProperties: false }

/** The schema node of a dotted key path, or undefined when the path names no key. */
export function keySchema (path: string): KeySchema | undefined {
  let node: KeySchema | undefined = CONFIG_SCHEMA
  for (const k of path.split('.')) {
    node = node?.properties?.[k]
    if (node === undefined) return undefined
  }
  return node
}

/** Every leaf key (objects with fixed properties are walked; free-form maps are leaves). */
export function leafKeys (node: KeySchema = CONFIG_SCHEMA, prefix = ''): Array<{ path: string, schema: KeySchema }> {
  if (node.properties === undefined) return [{ path: prefix, schema: node }]
  return Object.entries(node.properties).flatMap(([k, child]) => leafKeys(child, prefix === '' ? k : `${prefix}.${k}`))
}

/** Environment variable name → key path. */
export function envOverrides (): Record<string, string> {
  const out: Record<string, string> = {}
  for (const { path, schema } of leafKeys()) if (schema['x-env'] !== undefined) out[schema['x-env']] = path
  return out
}
