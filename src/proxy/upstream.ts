// The wire to the upstream: node:http(s) with a keep-alive agent (a fresh connection per request
// would cost more than the proxy's whole latency budget). Network failures become typed errors:
// UPSTREAM_UNAVAILABLE (nothing answered), TIMEOUT (no answer in time), UPSTREAM_BAD_RESPONSE
// (the answer broke off).
import { request as httpRequest, Agent as HttpAgent, type IncomingMessage, type OutgoingHttpHeaders, type ClientRequest } from 'node:http'
import { request as httpsRequest, Agent as HttpsAgent } from 'node:https'
import { HearthError, isHearthError } from '../errors.js'

export interface UpstreamRequest {
  method: string
  /** Absolute URL. */
  url: URL
  headers: OutgoingHttpHeaders
  body?: Buffer
  /** Abort the request (client went away, shutdown). */
  signal?: AbortSignal
  /** Longest wait for the response headers. */
  timeoutMs: number
}

export interface UpstreamResponse {
  status: number
  message: IncomingMessage
  /** Tear the upstream request down (the body is not wanted any more). */
  abort (): void
}

export interface HttpTransport {
  send (req: UpstreamRequest): Promise<UpstreamResponse>
  close (): void
}

const NETWORK_CODES = new Set(['ECONNREFUSED', 'ECONNRESET', 'ENOTFOUND', 'EAI_AGAIN', 'EHOSTUNREACH', 'ENETUNREACH', 'EPIPE', 'ETIMEDOUT', 'ECONNABORTED'])

/** True for failures that mean "the upstream is not there" (cache and queue fall-backs apply). */
export function isOfflineError (err: unknown): boolean {
  return isHearthError(err, 'UPSTREAM_UNAVAILABLE') || isHearthError(err, 'TIMEOUT')
}

class StaleConnectionError extends Error {}

export function createHttpTransport (): HttpTransport {
  const httpAgent = new HttpAgent({ keepAlive: true, maxSockets: 256, maxFreeSockets: 64 })
  const httpsAgent = new HttpsAgent({ keepAlive: true, maxSockets: 256, maxFreeSockets: 64 })

  async function sendOnce (req: UpstreamRequest): Promise<UpstreamResponse> {
    if (req.signal?.aborted === true) throw new HearthError('UPSTREAM_UNAVAILABLE', 'request cancelled')
    return await new Promise<UpstreamResponse>((resolve, reject) => {
      const isHttps = req.url.protocol === 'https:'
      const headers: OutgoingHttpHeaders = { ...req.headers }
      if (req.body !== undefined) headers['content-length'] = req.body.length
      const fn = isHttps ? httpsRequest : httpRequest
      let settled = false
      const cr: ClientRequest = fn(req.url, { method: req.method, headers, agent: isHttps ? httpsAgent : httpAgent }, (message) => {
        settled = true
        clearTimeout(timer)
        resolve({ status: message.statusCode ?? 502, message, abort: () => { cr.destroy() } })
      })
      const timer = setTimeout(() => {
        cr.destroy(new HearthError('TIMEOUT', `the conversation service did not answer within ${req.timeoutMs} ms`))
      }, req.timeoutMs)
      const onAbort = (): void => { cr.destroy(new HearthError('UPSTREAM_UNAVAILABLE', 'request cancelled')) }
      req.signal?.addEventListener('abort', onAbort, { once: true })
      cr.on('close', () => { req.signal?.removeEventListener('abort', onAbort) })
      cr.on('error', (err: NodeJS.ErrnoException) => {
        clearTimeout(timer)
        if (settled) return // errors after the response started surface on the message stream
        if (cr.reusedSocket && (err.code === 'ECONNRESET' || err.code === 'EPIPE')) reject(new StaleConnectionError(err.message))
        else reject(networkError(err))
      })
      cr.end(req.body)
    })
  }

  return {
    async send (req) {
      try {
        return await sendOnce(req)
      } catch (err) {
        // A kept-alive connection the upstream had already closed while idle fails at once with a
        // reset before any answer; browsers and Node's own docs retry once on a fresh connection.
        if (!(err instanceof StaleConnectionError)) throw err
        return await sendOnce(req)
      }
    },
    close () {
      httpAgent.destroy()
      httpsAgent.destroy()
    }
  }
}

export function networkError (err: unknown): HearthError {
  if (err instanceof HearthError) return err
  const code = (err as NodeJS.ErrnoException).code
  return new HearthError('UPSTREAM_UNAVAILABLE', `the conversation service is unreachable${code !== undefined ? ` (${code})` : ''}`,
    code !== undefined && NETWORK_CODES.has(code) ? { reason: code } : undefined)
}

/** Read a whole (non-streamed) answer; a body that breaks off or stalls is the upstream's fault. */
export async function readBody (res: UpstreamResponse, opts: { limitBytes: number, timeoutMs: number }): Promise<Buffer> {
  const chunks: Buffer[] = []
  let size = 0
  const timer = setTimeout(() => {
    res.message.destroy(new HearthError('TIMEOUT', `the conversation service stopped sending its answer (no end within ${opts.timeoutMs} ms)`))
  }, opts.timeoutMs)
  try {
    for await (const chunk of res.message) {
      size += (chunk as Buffer).length
      if (size > opts.limitBytes) {
        res.abort()
        throw new HearthError('UPSTREAM_BAD_RESPONSE', `the conversation service's answer is larger than ${opts.limitBytes} bytes`)
      }
      chunks.push(chunk as Buffer)
    }
  } catch (err) {
    if (err instanceof HearthError) throw err
    throw new HearthError('UPSTREAM_BAD_RESPONSE', 'the conversation service\'s answer broke off before it was complete', { upstreamStatus: res.status })
  } finally {
    clearTimeout(timer)
  }
  if (!res.message.complete) {
    throw new HearthError('UPSTREAM_BAD_RESPONSE', 'the conversation service\'s answer broke off before it was complete', { upstreamStatus: res.status })
  }
  return Buffer.concat(chunks)
}

/** Parse a JSON answer; anything else (HTML error page, truncated text, empty body) is a 502. */
export function parseJsonBody (body: Buffer, status: number): unknown {
  try {
    if (body.length === 0) throw new Error('empty')
    return JSON.parse(body.toString('utf8'))
  } catch {
    throw new HearthError('UPSTREAM_BAD_RESPONSE', 'the conversation service answered with something that is not JSON', {
      upstreamStatus: status,
      bodyStart: body.subarray(0, 120).toString('utf8')
    })
  }
}
