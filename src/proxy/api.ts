// JSON calls the daemon makes on its own behalf (job polling, queued submissions, login), with
// the owner's token added. Apps' requests go through forward.ts instead.
import { HearthError } from '../errors.js'
import type { ProxyConfig } from './config.js'
import type { CredentialStore } from './credentials.js'
import { parseJsonBody, readBody, type HttpTransport } from './upstream.js'

export interface ApiAnswer {
  status: number
  /** The parsed body (an upstream error body for non-2xx answers). */
  json: unknown
}

export interface UpstreamApi {
  /** `{baseUrl}/api/v0{path}` */
  url (path: string): URL
  /** Call a JSON endpoint. Network failures throw (UPSTREAM_UNAVAILABLE, TIMEOUT); non-2xx answers are returned. */
  call (method: string, path: string, body?: unknown, opts?: { auth?: boolean, signal?: AbortSignal }): Promise<ApiAnswer>
}

export function createUpstreamApi (deps: { config: ProxyConfig, transport: HttpTransport, credentials: CredentialStore, onReachable?: (ok: boolean, err?: unknown) => void }): UpstreamApi {
  const { config, transport, credentials } = deps
  const base = `${config.baseUrl}/api/v0`
  const url = (path: string): URL => new URL(base + path)
  return {
    url,
    async call (method, path, body, opts = {}) {
      const headers: Record<string, string> = { accept: 'application/json' }
      if (opts.auth !== false) headers.authorization = `Bearer ${await credentials.bearer()}`
      let raw: Buffer | undefined
      if (body !== undefined) {
        raw = Buffer.from(JSON.stringify(body))
        headers['content-type'] = 'application/json'
      }
      let res
      try {
        res = await transport.send({ method, url: url(path), headers, body: raw, timeoutMs: config.timeoutMs, ...(opts.signal !== undefined ? { signal: opts.signal } : {}) })
      } catch (err) {
        deps.onReachable?.(false, err)
        throw err
      }
      deps.onReachable?.(true)
      const bytes = await readBody(res, { limitBytes: config.maxBodyBytes, timeoutMs: config.timeoutMs })
      return { status: res.status, json: parseJsonBody(bytes, res.status) }
    }
  }
}

/** The upstream's `message` for a failed answer (docs/protocol.md §4: anything but ok && success is failure). */
export function upstreamFailure (answer: ApiAnswer, what: string): HearthError | null {
  const j = answer.json as { success?: unknown, message?: unknown } | null
  const ok = answer.status >= 200 && answer.status < 300
  if (ok && (j?.success === true || j?.success === 'true')) return null
  const message = typeof j?.message === 'string' ? j.message : `status ${answer.status}`
  const code = answer.status === 401 || answer.status === 403 ? 'UNAUTHORIZED' : answer.status === 404 ? 'NOT_FOUND' : answer.status >= 500 ? 'UPSTREAM_UNAVAILABLE' : ok ? 'UPSTREAM_BAD_RESPONSE' : 'INVALID_ARGUMENT'
  return new HearthError(code, `${what}: ${message}`, { upstreamStatus: answer.status })
}
