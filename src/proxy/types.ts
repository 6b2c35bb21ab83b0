// The storage the proxy needs from the daemon: a small persistent key-value namespace. The daemon
// passes one from `openKv(db, 'proxy')` (src/db); anything with these four methods works.

export interface ProxyKv {
  get (key: string): Promise<unknown | undefined>
  put (key: string, value: unknown): Promise<void>
  del (key: string): Promise<void>
  /** Entries whose key starts with `prefix`, in key order. */
  entries (opts: { prefix: string }): AsyncIterable<[string, unknown]>
}

/** What the proxy remembers about the upstream's reachability (for `hearth status`). */
export interface UpstreamHealth {
  reachable: boolean | null
  lastOkAt: number | null
  lastFailureAt: number | null
  lastError: string | null
}

/** An answer the proxy made itself, written by the server that mounts it (the API's reply shape). */
export interface ProxyAnswer {
  status: number
  body?: unknown
  headers?: Record<string, string>
}

/** What the mounting server gives the passthrough: the parsed URL and a bounded body reader. */
export interface PassthroughContext {
  url: URL
  readBody (limitBytes: number): Promise<Buffer>
}
