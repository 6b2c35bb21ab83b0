// The shape of the daemon's configuration, as the rest of the code reads it. The schema in
// schema.ts is the one description of every key (type, range, default, environment variable);
// this interface mirrors it for the type checker, and a test keeps the two in step.

export interface HearthConfig {
  logLevel: string
  /** auto: pino-pretty on a terminal, JSON otherwise. */
  logFormat: 'auto' | 'pretty' | 'json'
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
  pinning: {
    /** Pinning Service API services that keep a copy of every stored ciphertext off this device. */
    services: PinningServiceConfig[]
    batchSize: number
    concurrency: number
    pollIntervalMs: number
    timeoutMs: number
    /** Share of newly pinned CIDs read back through the service's gateway and verified. */
    sampleRate: number
  }
  schemas: {
    /** A DP RPC lookup service (docs/protocol.md §2.6); null = none (cache and chain only). */
    dpRpcUrl: string | null
    timeoutMs: number
    /** How often files waiting for their schema are retried. */
    retryWaitingMs: number
    /** Accounts whose on-chain schemas may become a scope's schema (besides the owner and the tx key). */
    trustedOwners: string[]
    allowHttpDefinitionUrls: boolean
    allowPrivateDefinitionUrls: boolean
  }
  chain: {
    /** null = no chain: registrations wait in the queue. 'dev' = `--dev-chain`. */
    preset: 'vana' | 'moksha' | 'dev' | 'custom' | null
    rpcUrl: string | null
    chainId: number | null
    dataRegistry: string | null
    dataRefinerRegistry: string | null
    multicall: string | null
    /** The builder contracts (docs/protocol.md §3.8); the preset's when null. */
    dataPortabilityGrantees: string | null
    dataPortabilityPermissions: string | null
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
  restore: {
    /** IPFS gateways asked (trustless, block by block, verified) for ciphertexts no device has. */
    gateways: string[]
    requestTimeoutMs: number
    fileTimeoutMs: number
    maxFileBytes: number
  }
  upstream: {
    baseUrl: string | null
    timeoutMs: number
    jobPollMs: number
    jobDeadlineMs: number
  }
  ui: {
    /** The owner's dashboard on loopback (`hearth ui` prints a login link). */
    enabled: boolean
    /** host:port; the host must resolve to loopback; port 0 picks a free one. */
    listen: string
  }
  builders: {
    /** `host:port` of the builder listener; null = off. */
    listen: string | null
    /** What builders sign as `aud`; null = `http://<listen>`. */
    publicUrl: string | null
    rateLimitPerMinute: number
    maxBodyBytes: number
    maxPendingRequests: number
    accessLogDays: number
  }
  mcp: {
    /** `host:port` of the assistants' Streamable HTTP listener; null = off. */
    listen: string | null
    /** The OAuth issuer and resource base; null = `http://<listen>`. */
    publicUrl: string | null
    accessTokenSeconds: number
    maxSessions: number
    maxResultBytes: number
  }
  ingest: {
    concurrency: number
    /** The watcher reads a file once no change of it was seen this long. */
    quietMs: number
    /** A dropped file that is not complete JSON yet is rejected only once it stayed unchanged this long. */
    stabilityMs: number
    /** Rescan the folder periodically instead of change notifications (network filesystems). */
    usePolling: boolean
    pollIntervalMs: number
    /** Largest dropped data file read; larger ones are rejected with FILE_TOO_LARGE unread. */
    maxFileBytes: number
    /** Most object members, objects and arrays in one body, data file or peer's file (JSON_TOO_MANY_VALUES). */
    maxJsonValues: number
    /** Files acknowledged through the ingest journal are synced in the background this long after. */
    checkpointMs: number
    /** Worker threads encrypting files over 64 KiB (0: the main thread encrypts). */
    encryptionWorkers: number
  }
}

/** One IPFS Pinning Service API service (`pinning.services[]`). */
export interface PinningServiceConfig {
  /** Short name, used in the index and in `hearth storage pins`. */
  name: string
  /** API base URL: `{endpoint}/pins`. */
  endpoint: string
  /** File holding the access token (mode 0600). */
  tokenFile: string
  /** A trustless gateway serving what the service pins (sample reads); null = none. */
  gateway?: string | null
}
