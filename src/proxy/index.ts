// The conversation/image proxy the daemon mounts on its socket (docs/protocol.md §3.5, 4).
//
//   const proxy = createProxy({ config: config.upstream, home, kv: openKv(db, 'proxy'),
//                               queue: createDurableQueue(db, 'upstream-images'), logger })
//   await proxy.start()
//   mounts: PROXY_MOUNT_PREFIXES.map((prefix) => ({ prefix, handle: proxy.handle }))
//   addUpstreamRoutes(router, proxy); addImageRoutes(router, proxy)    // src/api/routes/
//   ... at shutdown: await proxy.stop()
//
// `handle` is the raw `/api/v0/...` passthrough (forwarded upstream, streamed); the daemon's own
// endpoints (`/v1/upstream/...`, `/v1/images[/:id]`) are ordinary routes over `login`,
// `credentials`, `status`, `listImages` and `getImage`.
import type { IncomingMessage, ServerResponse } from 'node:http'
import type { HomeLayout } from '../home.js'
import { silentLogger, type Logger } from '../log.js'
import type { DurableQueue } from '../db/types.js'
import { resolveProxyConfig, type ProxyConfig } from './config.js'
import { createCredentialStore, type CredentialStore } from './credentials.js'
import { createHttpTransport } from './upstream.js'
import { createUpstreamApi } from './api.js'
import { createHealthTracker } from './health.js'
import { createLoginFlow, type LoginFlow } from './login.js'
import { createProxyCache } from './cache.js'
import { createModelTracker, type ModelStatus } from './models.js'
import { createDownloader } from './download.js'
import { createImageJobs } from './image-jobs.js'
import { createImageQueue, type QueuedImageRequest } from './image-queue.js'
import { createForwarder } from './forward.js'
import { proxyConfigured, upstreamNotConfigured } from './basics.js'
import { imageView, tokenView, type ImageView } from './views.js'
import type { PassthroughContext, ProxyAnswer, ProxyKv, UpstreamHealth } from './types.js'
import type { Service } from '../lifecycle/service.js'

export type { ProxyConfig } from './config.js'
export type { ProxyKv } from './types.js'
export type { QueuedImageRequest } from './image-queue.js'
export type { ImageView } from './views.js'
export type { LoginFlow } from './login.js'

export interface ProxyDeps {
  /** `upstream.*` from the daemon's config; without a baseUrl every upstream call answers 503. */
  config: Omit<Partial<ProxyConfig>, 'baseUrl'> & { baseUrl?: string | null }
  home: HomeLayout
  /** A persistent KV namespace for the proxy alone (e.g. `openKv(db, 'proxy')`). */
  kv: ProxyKv
  /** A durable queue for image requests made offline (e.g. `createDurableQueue(db, 'upstream-images')`). */
  queue: DurableQueue<QueuedImageRequest>
  logger?: Logger
  /** The token store to use (lazy.ts makes one before the proxy loads); by default one in `home.identity`. */
  credentials?: CredentialStore
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

/** A long-lived part with the service shape (src/lifecycle/service.ts), reporting as "upstream". */
export interface Proxy extends Service {
  readonly name: 'upstream'
  /** False without `upstream.baseUrl`: nothing is ever sent upstream. */
  configured: boolean
  /** The `/api/v0/...` passthrough: streams its answer into `res` (null) or returns one. */
  handle (req: IncomingMessage, res: ServerResponse, ctx: PassthroughContext): Promise<ProxyAnswer | null>
  /** The email one-time-code login (throws UPSTREAM_UNAVAILABLE when not configured). */
  login: LoginFlow
  listImages (): Promise<{ images: ImageView[] }>
  /** A downloaded or followed image job by upstream or local job id. */
  getImage (id: string): Promise<ImageView | null>
  /** The last conversation list the upstream gave (for reading offline), or undefined. */
  cachedConversations (): Promise<{ body: unknown; fetchedAt: number } | undefined>
  status (): Promise<ProxyStatus>
  /** The credential store (for a CLI running without the daemon, or tests). */
  credentials: CredentialStore
  start (): Promise<void>
  stop (): Promise<void>
  /** Resolves when background job following and queue draining in flight have finished. */
  settled (): Promise<void>
}

export { PROXY_MOUNT_PREFIXES } from './basics.js'

export function createProxy (deps: ProxyDeps): Proxy {
  const logger = deps.logger ?? silentLogger()
  const configured = proxyConfigured(deps.config)
  // Unconfigured, nothing below ever sends a request: handle() and start() stop first.
  const config = resolveProxyConfig({ ...deps.config, baseUrl: configured ? deps.config.baseUrl as string : 'http://unconfigured.invalid' })
  const credentials = deps.credentials ?? createCredentialStore({ identityDir: deps.home.identity })
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

  const notConfigured = upstreamNotConfigured
  const loginFlow = createLoginFlow({ api, credentials })
  const login: LoginFlow = {
    async start (email) { if (!configured) throw notConfigured(); await loginFlow.start(email) },
    async finish (email, code) { if (!configured) throw notConfigured(); return await loginFlow.finish(email, code) }
  }

  return {
    name: 'upstream',
    configured,
    credentials,
    login,
    async handle (req, res, ctx) {
      if (!configured) throw notConfigured()
      return await forwarder.handle(req, res, ctx)
    },
    listImages,
    async getImage (id) { const r = await jobs.get(id); return r === null ? null : imageView(r) },
    cachedConversations: async () => await cache.recall({ kind: 'conversations-list' }),
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
