// HTTP over the daemon's unix socket: the one client of the daemon's API, used by the CLI, the
// connectors' import (which runs in the CLI process) and the tests. It sits below both so neither
// imports the other.
import { request as httpRequest, type IncomingHttpHeaders } from 'node:http'
import { HearthError } from '../errors.js'

export interface DaemonResponse {
  status: number
  headers: IncomingHttpHeaders
  body: Buffer
  /** The body parsed as JSON, or undefined when it is not JSON. */
  json: any
}

export interface DaemonRequest {
  method?: string
  path: string
  body?: unknown
  headers?: Record<string, string>
  /** For the whole request, retries included (default 60 s). */
  timeoutMs?: number
  /** Ask again after Retry-After while the daemon answers DAEMON_STARTING (default true). */
  retryWhileStarting?: boolean
}

/**
 * One request to the daemon. A daemon that is still starting answers DAEMON_STARTING (503) for
 * what is not up yet; that is asked again after its Retry-After, within the request's deadline.
 */
export async function daemonRequest (socketPath: string, req: DaemonRequest): Promise<DaemonResponse> {
  const deadline = Date.now() + (req.timeoutMs ?? 60_000)
  for (;;) {
    const res = await requestOnce(socketPath, { ...req, timeoutMs: Math.max(1, deadline - Date.now()) })
    const seconds = Number(res.headers['retry-after'])
    const retryAfterMs = 1000 * (Number.isFinite(seconds) && seconds > 0 ? Math.min(seconds, 10) : 1)
    if (req.retryWhileStarting === false || res.status !== 503 || res.json?.error?.errorCode !== 'DAEMON_STARTING' || Date.now() + retryAfterMs >= deadline) return res
    await new Promise((resolve) => setTimeout(resolve, retryAfterMs))
  }
}

async function requestOnce (socketPath: string, req: DaemonRequest): Promise<DaemonResponse> {
  const raw = req.body === undefined
    ? undefined
    : (req.body instanceof Uint8Array || typeof req.body === 'string') ? req.body : JSON.stringify(req.body)
  const headers: Record<string, string> = { ...(req.headers ?? {}) }
  if (raw !== undefined && headers['content-type'] === undefined) headers['content-type'] = 'application/json'
  return await new Promise<DaemonResponse>((resolve, reject) => {
    const r = httpRequest({ socketPath, path: req.path, method: req.method ?? 'GET', headers, timeout: req.timeoutMs ?? 60_000 }, (res) => {
      const chunks: Buffer[] = []
      res.on('data', (c: Buffer) => chunks.push(c))
      res.on('error', reject)
      res.on('end', () => {
        const body = Buffer.concat(chunks)
        let json: any
        try { json = body.length > 0 ? JSON.parse(body.toString('utf8')) : undefined } catch { json = undefined }
        resolve({ status: res.statusCode ?? 0, headers: res.headers, body, json })
      })
    })
    r.on('timeout', () => r.destroy(new HearthError('TIMEOUT', `daemon did not answer ${req.method ?? 'GET'} ${req.path} in time`)))
    r.on('error', (err: NodeJS.ErrnoException) => {
      if (err.code === 'ENOENT' || err.code === 'ECONNREFUSED') {
        reject(new HearthError('DAEMON_NOT_RUNNING', `the Hearth daemon is not running (no socket at ${socketPath}); start it with \`hearth daemon\``))
      } else reject(err)
    })
    if (raw !== undefined) r.end(raw); else r.end()
  })
}
