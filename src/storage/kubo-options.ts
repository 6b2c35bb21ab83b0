// The kubo backend's options, checked without loading its RPC client: the storage factory checks
// them when it builds the (unstarted) backend, so a bad configuration fails before anything starts.
import { HearthError } from '../errors.js'

export const DEFAULT_KUBO_TIMEOUT_MS = 10_000

/** The RPC address and the deadline to use; CONFIG_INVALID for anything unusable. */
export function checkKuboOptions (opts: { url: string; timeoutMs?: number }): { url: string; timeoutMs: number } {
  const timeoutMs = opts.timeoutMs ?? DEFAULT_KUBO_TIMEOUT_MS
  if (!Number.isFinite(timeoutMs) || timeoutMs < 100) {
    throw new HearthError('CONFIG_INVALID', 'storage.kubo.timeoutMs must be a number of milliseconds >= 100', { timeoutMs })
  }
  return { url: validateUrl(opts.url), timeoutMs }
}

function validateUrl (url: string): string {
  if (typeof url !== 'string' || url.length === 0) throw new HearthError('CONFIG_INVALID', 'storage.kubo.url is required')
  if (url.startsWith('/')) return url // a multiaddr such as /ip4/127.0.0.1/tcp/5001
  let parsed: URL
  try { parsed = new URL(url) } catch { throw new HearthError('CONFIG_INVALID', 'storage.kubo.url is not a URL', { url: displayUrl(url) }) }
  if (parsed.protocol !== 'http:' && parsed.protocol !== 'https:') {
    throw new HearthError('CONFIG_INVALID', 'storage.kubo.url must be http:// or https://', { url: displayUrl(url) })
  }
  return url
}

/** The URL as shown in messages and logs: without user:password. */
export function displayUrl (url: string): string {
  try {
    const u = new URL(url)
    u.username = ''
    u.password = ''
    return u.toString().replace(/\/$/, '')
  } catch {
    return url
  }
}
