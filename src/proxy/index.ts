// The conversation/image proxy the daemon mounts on its socket (DESIGN 3.5, 4).
//
//   const proxy = createProxy({ config: config.upstream, home, kv: openKv(db, 'proxy'),
//                               queue: createDurableQueue(db, 'upstream-images'), logger })
//   await proxy.start()
//   mounts: PROXY_MOUNT_PREFIXES.map((prefix) => ({ prefix, handle: proxy.handle }))
//   ... at shutdown: await proxy.stop()
//
// `handle` answers `/api/v0/...` (forwarded upstream), `/v1/upstream/...` (login, token,
// status) and `/v1/images[/:id]` (downloaded image jobs).
import type { IncomingMessage, ServerResponse } from 'node:http'
import { HearthError } from '../errors.js'
import type { HomeLayout } from '../home.js'
import { silentLogger, type Logger } from '../log.js'
import type { DurableQueue } from '../db/types.js'
import { resolveProxyConfig, type ProxyConfig } from './config.js'
import { createCredentialStore, type CredentialStore } from './credentials.js'
import { createHttpTransport } from './upstream.js'
import { createUpstreamApi } from './api.js'
import { createHealthTracker } from './health.js'
import { createLoginFlow } from './login.js'
import { createProxyCache } from './cache.js'
import { createModelTracker, type ModelStatus } from './models.js'
import { createDownloader } from './download.js'
import { createImageJobs } from './image-jobs.js'
import { createImageQueue, type QueuedImageRequest } from './image-queue.js'
import { API_PREFIX, createForwarder } from './forward.js'
import { createControl, imageView, tokenView, type ImageView } from './control.js'
import { sendError } from './respond.js'
import type { ProxyKv, UpstreamHealth } from './types.js'

export type { ProxyConfig } from './config.js'
export type { ProxyKv } from './types.js'
export type { QueuedImageRequest } from './image-queue.js'
export type { ImageView } from './control.js'

export interface ProxyDeps {
  /** `upstream.*` from the daemon's config; without a baseUrl every upstream call answers 503. */
  config: Omit<Partial<ProxyConfig>, 'baseUrl'> & { baseUrl?: string | null }
  home: HomeLayout
  /** A persistent KV namespace for the proxy alone (e.g. `openKv(db, 'proxy')`). */
  kv: ProxyKv
  /** A durable queue for image requests made offline (e.g. `createDurableQueue(db, 'upstream-images')`). */
  queue: DurableQueue<QueuedImageRequest>
  logger?: Logger
}

export interface ProxyStatus {
  configured: boolean
  baseUrl: string | null
  upstream: UpstreamHealth
  auth: Record<string, unknown>
  queuedImages: number
  images: Record<string, number>
  models: ModelStatus
}

export interface Proxy {
  /** True for the paths `handle` answers. */
  owns (pathname: string): boolean
  handle (req: IncomingMessage, res: ServerResponse): Promise<void>
  listImages (): Promise<{ images: ImageView[] }>
  status (): Promise<ProxyStatus>
  /** The credential store (for a CLI running without the daemon, or tests). */
  credentials: CredentialStore
  start (): Promise<void>
  stop (): Promise<void>
  /** Resolves when background job following and queue draining in flight have finished. */
  settled (): Promise<void>
}

/** Path prefixes to mount `handle` on (e.g. as the API server's raw mounts). */
export const PROXY_MOUNT_PREFIXES = [`${API_PREFIX}/`, '/v1/upstream/', '/v1/images'] as const

export function ownsProxyPath (pathname: string): boolean {
  return pathname === API_PREFIX || pathname.startsWith(`${API_PREFIX}/`) ||
    pathname.startsWith('/v1/upstream/') || pathname === '/v1/images' || pathname.startsWith('/v1/images/')
}

export function createProxy (deps: ProxyDeps): Proxy {
  const logger = deps.logger ?? silentLogger()
  const configured = typeof deps.config.baseUrl === 'string' && deps.config.baseUrl.length > 0
  // Unconfigured, nothing below ever sends a request: handle() and start() stop first.
  const config = resolveProxyConfig({ ...deps.config, baseUrl: configured ? deps.config.baseUrl as string : 'http://unconfigured.invalid' })
  const credentials = createCredentialStore({ identityDir: deps.home.identity })
  const transport = createHttpTransport()
  let onBack = (): void => {}
  const health = createHealthTracker({ onBack: () => { onBack() } })
  const api = createUpstreamApi({ config, transport, credentials, onReachable: (ok, err) => { if (ok) health.ok(); else health.failed(err) } })
  const cache = createProxyCache({ kv: deps.kv })
  const models = createModelTracker({ kv: deps.kv })
  const downloader = createDownloader({
    transport, baseUrl: config.baseUrl, timeoutMs: config.timeoutMs,
    bearer: async () => await credentials.bearer().catch(() => null)
  })
  const jobs = createImageJobs({ kv: deps.kv, api, imagesDir: deps.home.images, downloader, jobPollMs: config.jobPollMs, jobDeadlineMs: config.jobDeadlineMs, logger })
  const imageQueue = createImageQueue({ queue: deps.queue, api, jobs, retryMs: config.queueRetryMs, logger })
  onBack = () => { imageQueue.kick() }
  const forwarder = createForwarder({ config, transport, credentials, cache, models, jobs, imageQueue, health, logger })

  const listImages = async (): Promise<{ images: ImageView[] }> => ({ images: (await jobs.list()).map(imageView) })

  async function status (): Promise<ProxyStatus> {
    const counts: Record<string, number> = {}
    for (const r of await jobs.list()) counts[r.state] = (counts[r.state] ?? 0) + 1
    return {
      configured,
      baseUrl: configured ? config.baseUrl : null,
      upstream: health.snapshot(),
      auth: tokenView(await credentials.info()),
      queuedImages: await deps.queue.size(),
      images: counts,
      models: await models.status()
    }
  }

  const control = createControl({
    credentials,
    login: createLoginFlow({ api, credentials }),
    listImages,
    getImage: async (id) => { const r = await jobs.get(id); return r === null ? null : imageView(r) },
    status,
    maxBodyBytes: config.maxBodyBytes
  })

  const notConfigured = new HearthError('UPSTREAM_UNAVAILABLE', 'no conversation service is configured; set upstream.baseUrl in config.json')

  return {
    owns: ownsProxyPath,
    credentials,
    async handle (req, res) {
      let url: URL
      try { url = new URL(req.url ?? '/', 'http://hearth.local') } catch {
        sendError(res, new HearthError('INVALID_PATH', 'bad request path'))
        return
      }
      const isApi = url.pathname === API_PREFIX || url.pathname.startsWith(`${API_PREFIX}/`)
      if (!configured && (isApi || url.pathname.startsWith('/v1/upstream/login/'))) { req.resume(); sendError(res, notConfigured); return }
      if (isApi) await forwarder.handle(req, res, url)
      else await control.handle(req, res, url)
    },
    listImages,
    status,
    async start () {
      if (!configured) return
      await jobs.start()
      await imageQueue.start()
    },
    async stop () {
      await imageQueue.stop()
      await jobs.stop()
      transport.close()
    },
    async settled () {
      await imageQueue.idle()
      await jobs.settled()
    }
  }
}
