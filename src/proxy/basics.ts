// What the daemon needs of the proxy before the proxy itself is loaded (lazy.ts): where it is
// mounted, whether it is configured, and the error it answers while it is not.
import { HearthError } from '../errors.js'

export const API_PREFIX = '/api/v0'

/** Path prefixes to mount `handle` on (the API server's raw mounts). */
export const PROXY_MOUNT_PREFIXES = [`${API_PREFIX}/`] as const

/** Whether `upstream.baseUrl` is set: without it nothing is ever sent upstream. */
export function proxyConfigured (config: { baseUrl?: string | null }): boolean {
  return typeof config.baseUrl === 'string' && config.baseUrl.length > 0
}

/** The error every upstream call answers while no upstream is configured. */
export function upstreamNotConfigured (): HearthError {
  return new HearthError('UPSTREAM_UNAVAILABLE', 'no conversation service is configured; set upstream.baseUrl in config.json')
}
