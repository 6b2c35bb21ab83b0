// `/api/v0/...` from an app → `{baseUrl}/api/v0/...` with the owner's token (docs/protocol.md §3.5, 4).
// Method, path, query, body and end-to-end headers are preserved; the upstream's answer comes
// back with its status and body as they were. On top of plain forwarding: JSON answers are
// checked (502 when broken), chat streams are passed through frame by frame, good GET answers and
// chat exchanges are cached, offline GETs answer from the cache, offline image requests are
// queued, created image jobs are followed, and model status changes are recorded.
import type { IncomingMessage, ServerResponse } from 'node:http'
import { pipeline } from 'node:stream/promises'
import { HearthError } from '../errors.js'
import type { Logger } from '../log.js'
import type { ProxyConfig } from './config.js'
import type { CredentialStore } from './credentials.js'
import type { ProxyCache } from './cache.js'
import type { ModelTracker } from './models.js'
import type { ImageJobs } from './image-jobs.js'
import type { ImageQueue } from './image-queue.js'
import type { HealthTracker } from './health.js'
import { chatPayload } from './conversation-shape.js'
import { downstreamResponseHeaders, upstreamRequestHeaders } from './headers.js'
import { classifyRoute, isCacheableRoute, isJsonRoute, type Route } from './routes.js'
import { MAX_DATA_DEPTH, parseBoundedJsonBytes } from '../protocol/bounded-json.js'
import type { PassthroughContext, ProxyAnswer } from './types.js'
import { pipeStream } from './stream.js'
import { isOfflineError, parseJsonBody, readBody, type HttpTransport, type UpstreamResponse } from './upstream.js'

import { API_PREFIX } from './basics.js'

export interface ForwardDeps {
  config: ProxyConfig
  transport: HttpTransport
  credentials: CredentialStore
  cache: ProxyCache
  models: ModelTracker
  jobs: ImageJobs
  imageQueue: ImageQueue
  health: HealthTracker
  logger: Logger
}

interface Call {
  req: IncomingMessage
  res: ServerResponse
  route: Route
  /** Path after /api/v0, with the query string. */
  target: string
  body: Buffer
  startedAt: number
}

/** An app's JSON body where the proxy itself needs its fields (same rules as every request body). */
function appJsonObject (body: Buffer): Record<string, unknown> {
  if (body.length === 0) return {}
  const v = parseBoundedJsonBytes(body, { maxDepth: MAX_DATA_DEPTH, subject: 'request body' })
  if (v === null || typeof v !== 'object' || Array.isArray(v)) throw new HearthError('INVALID_BODY', 'the request body must be a JSON object')
  return v as Record<string, unknown>
}

function tryJson (body: Buffer): Record<string, unknown> | null {
  try { return appJsonObject(body) } catch { return null }
}

const json = (status: number, body: unknown, headers: Record<string, string> = {}): ProxyAnswer => ({ status, body, headers })

export function createForwarder (deps: ForwardDeps): { handle (req: IncomingMessage, res: ServerResponse, ctx: PassthroughContext): Promise<ProxyAnswer | null> } {
  const { config, transport, credentials, cache, models, jobs, imageQueue, health, logger } = deps

  /** Bookkeeping the app may look at right after this answer: image jobs, model changes. */
  async function beforeAnswer (call: Call, json: unknown): Promise<void> {
    const { route } = call
    if (route.kind === 'models' && route.id !== undefined) {
      const changes = await models.observe(route.id, json)
      for (const c of changes) logger.info(c, 'character model status changed')
    }
    if (route.kind === 'images') {
      const answer = json as { success?: unknown, jobId?: unknown, output?: unknown }
      if (answer.success === true && typeof answer.jobId === 'string') {
        const prompt = tryJson(call.body)?.prompt
        const output = Array.isArray(answer.output) ? answer.output.filter((u): u is string => typeof u === 'string') : undefined
        await jobs.follow(answer.jobId, { prompt: typeof prompt === 'string' ? prompt : null, ...(output !== undefined ? { synchronousOutput: output } : {}) })
      }
    }
  }

  /** Cache writes, after the answer is out (the cache orders its own reads after its writes). */
  async function afterAnswer (call: Call, json: unknown, raw: Buffer): Promise<void> {
    const { route } = call
    if (isCacheableRoute(route.kind)) await cache.remember(route, json, call.startedAt, raw)
    if (route.kind === 'chat' && route.id !== undefined) {
      const request = chatPayload(tryJson(call.body))
      const reply = chatPayload(json)
      if (request !== null && reply !== null) await cache.recordExchange(route.id, { at: Date.now(), request, reply })
    }
    if (route.kind === 'clear' && route.id !== undefined) await cache.forgetMessages(route.id)
  }

  async function whenOffline (call: Call, err: unknown): Promise<ProxyAnswer> {
    const { route } = call
    if (call.req.method === 'GET' && isCacheableRoute(route.kind)) {
      const cached = await cache.recall(route)
      if (cached !== undefined) {
        return json(200, cached.body, { 'x-hearth-cache': 'hit', 'x-hearth-cached-at': new Date(cached.fetchedAt).toISOString() })
      }
    }
    if (route.kind === 'images') {
      const body = appJsonObject(call.body)
      const localJobId = await imageQueue.enqueue(body)
      logger.info({ localJobId }, 'image request queued until the conversation service is reachable')
      return json(202, { success: true, jobId: localJobId, queued: true })
    }
    throw err
  }

  async function passJson (call: Call, upstream: UpstreamResponse): Promise<void> {
    const bytes = await readBody(upstream, { limitBytes: config.maxBodyBytes, timeoutMs: config.timeoutMs })
    const json = parseJsonBody(bytes, upstream.status)
    const ok = upstream.status >= 200 && upstream.status < 300
    // The app still gets its answer when local bookkeeping fails; only the bookkeeping misses it.
    const bookkeeping = (err: unknown): void => { logger.warn({ route: call.route.kind, err: (err as Error).message }, 'proxy bookkeeping failed') }
    if (ok) await beforeAnswer(call, json).catch(bookkeeping)
    call.res.writeHead(upstream.status, { ...downstreamResponseHeaders(upstream.message.headers), 'content-length': bytes.length }).end(bytes)
    if (ok) await afterAnswer(call, json, bytes).catch(bookkeeping)
  }

  async function passRaw (call: Call, upstream: UpstreamResponse): Promise<void> {
    const headers = downstreamResponseHeaders(upstream.message.headers)
    const length = upstream.message.headers['content-length']
    if (length !== undefined) headers['content-length'] = length
    call.res.writeHead(upstream.status, headers)
    try { await pipeline(upstream.message, call.res) } catch {
      // The app went away or the upstream broke off; the headers are out, so closing is all that is left.
      upstream.abort()
      call.res.destroy()
    }
  }

  /** Streams the answer into `call.res` (null), or returns the answer made here (offline). */
  async function forward (call: Call): Promise<ProxyAnswer | null> {
    const { req, res, route } = call
    const headers = upstreamRequestHeaders(req.headers)
    if (route.kind !== 'auth') headers.authorization = `Bearer ${await credentials.bearer()}`
    const abort = new AbortController()
    const onClose = (): void => { if (!res.writableFinished) abort.abort() }
    res.on('close', onClose)
    let upstream: UpstreamResponse
    try {
      upstream = await transport.send({
        method: req.method ?? 'GET',
        url: new URL(`${config.baseUrl}${API_PREFIX}${call.target}`),
        headers,
        ...(req.method === 'GET' || req.method === 'HEAD' ? {} : { body: call.body }),
        signal: abort.signal,
        timeoutMs: config.timeoutMs
      })
    } catch (err) {
      if (abort.signal.aborted) return null
      health.failed(err)
      if (isOfflineError(err)) return await whenOffline(call, err)
      throw err
    }
    health.ok()
    const ok = upstream.status >= 200 && upstream.status < 300
    if (route.kind === 'chat-stream' && ok) {
      const outcome = await pipeStream(upstream, res, { idleTimeoutMs: config.streamIdleTimeoutMs })
      const request = chatPayload(tryJson(call.body))
      if (outcome.completed && request !== null && route.id !== undefined) {
        await cache.recordExchange(route.id, { at: Date.now(), request, reply: { data: outcome.text, mimeType: 'text/plain' } })
          .catch((err: unknown) => { logger.warn({ err: (err as Error).message }, 'chat exchange not cached') })
      }
      return null
    }
    if (isJsonRoute(route.kind) || route.kind === 'chat-stream') await passJson(call, upstream)
    else await passRaw(call, upstream)
    return null
  }

  /** GET /api/v0/jobs/local-<uuid>: the upstream job once submitted, else the local queued record. */
  async function localJob (call: Call, localJobId: string): Promise<ProxyAnswer | null> {
    const jobId = await jobs.upstreamIdOf(localJobId)
    if (jobId !== null) {
      call.res.setHeader('x-hearth-job-id', jobId)
      return await forward({ ...call, route: { kind: 'job', id: jobId }, target: `/jobs/${encodeURIComponent(jobId)}` })
    }
    const record = await jobs.get(localJobId)
    if (record === null) throw new HearthError('NOT_FOUND', `no image job ${localJobId}`)
    if (record.rejection !== undefined) return json(record.rejection.status, record.rejection.body)
    const created = record.createdAt
    return json(200, {
      success: true,
      queued: true,
      job: {
        id: localJobId, accountId: null, created, type: 'IMAGE_INFERENCE', payload: { prompt: record.prompt },
        status: 'CREATED', statuses: [{ id: `${localJobId}-created`, status: 'CREATED', created }], outputFiles: []
      }
    })
  }

  return {
    async handle (req, res, { url, readBody: readRequestBody }) {
      const target = (url.pathname.slice(API_PREFIX.length) || '/') + url.search
      const route = classifyRoute(req.method ?? 'GET', url.pathname.slice(API_PREFIX.length))
      const started = performance.now()
      try {
        const call: Call = { req, res, route, target, body: await readRequestBody(config.maxBodyBytes), startedAt: Date.now() }
        if (route.kind === 'job' && route.id?.startsWith('local-') === true) return await localJob(call, route.id)
        return await forward(call)
      } catch (err) {
        if (!(err instanceof HearthError)) logger.error({ err: (err as Error).message, route: route.kind }, 'proxy request failed')
        throw err
      } finally {
        logger.debug({ method: req.method, route: route.kind, status: res.statusCode, ms: Math.round((performance.now() - started) * 100) / 100 }, 'proxied')
      }
    }
  }
}
