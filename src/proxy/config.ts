// Settings of the conversation/image proxy (docs/protocol.md §4). The daemon's config file supplies
// `upstream.*`; anything missing falls back to the defaults below.
import { HearthError } from '../errors.js'

export interface ProxyConfig {
  /** The upstream's origin (plus optional path prefix); requests go to `{baseUrl}/api/v0/...`. */
  baseUrl: string
  /** Longest wait for an upstream answer (headers and a buffered body) before giving up. */
  timeoutMs: number
  /** Longest silence between two chunks of a streamed reply before the stream is ended with an error. */
  streamIdleTimeoutMs: number
  /** First delay between two polls of an image job; grows with backoff up to 8x. */
  jobPollMs: number
  /** A job not finished this long after it was created is given up (recorded as expired). */
  jobDeadlineMs: number
  /** How often queued offline requests (image jobs) are retried while the upstream is away. */
  queueRetryMs: number
  /** Largest request body accepted from an app (bytes). */
  maxBodyBytes: number
}

export const DEFAULT_PROXY_CONFIG: Omit<ProxyConfig, 'baseUrl'> = {
  timeoutMs: 30_000,
  streamIdleTimeoutMs: 60_000,
  jobPollMs: 2_000,
  jobDeadlineMs: 30 * 60_000,
  queueRetryMs: 10_000,
  maxBodyBytes: 32 * 1024 * 1024
}

/** Fill in defaults and check the values; a bad config is a CONFIG_INVALID error, not a crash later. */
export function resolveProxyConfig (input: Partial<ProxyConfig> & { baseUrl: string }): ProxyConfig {
  const cfg: ProxyConfig = { ...DEFAULT_PROXY_CONFIG, ...stripUndefined(input) } as ProxyConfig
  let url: URL
  try { url = new URL(cfg.baseUrl) } catch {
    throw new HearthError('CONFIG_INVALID', `upstream.baseUrl is not a URL: ${String(cfg.baseUrl)}`)
  }
  if (url.protocol !== 'http:' && url.protocol !== 'https:') {
    throw new HearthError('CONFIG_INVALID', 'upstream.baseUrl must be http: or https:')
  }
  for (const key of ['timeoutMs', 'streamIdleTimeoutMs', 'jobPollMs', 'jobDeadlineMs', 'queueRetryMs', 'maxBodyBytes'] as const) {
    if (!Number.isFinite(cfg[key]) || cfg[key] <= 0) throw new HearthError('CONFIG_INVALID', `upstream.${key} must be a positive number`)
  }
  return { ...cfg, baseUrl: url.href.replace(/\/+$/, '') }
}

function stripUndefined<T extends object> (o: T): Partial<T> {
  return Object.fromEntries(Object.entries(o).filter(([, v]) => v !== undefined)) as Partial<T>
}
