// A proxy mounted on a real node:http server on a per-test unix socket (as the daemon mounts it),
// in front of the upstream simulator, with the real database, KV and durable queue.
import { request as httpRequest, type IncomingHttpHeaders } from 'node:http'
import type { TestContext } from 'node:test'
import { homeLayout, type HomeLayout } from '../../src/home.js'
import { openDatabase, openKv, createDurableQueue, type HearthDatabase } from '../../src/db/index.js'
import { createProxy, PROXY_MOUNT_PREFIXES, type Proxy, type ProxyConfig, type QueuedImageRequest } from '../../src/proxy/index.js'
import { silentLogger, type Logger } from '../../src/log.js'
import { createApiServer, type ApiServer } from '../../src/api/server.js'
import { Router } from '../../src/api/router.js'
import { addUpstreamRoutes } from '../../src/api/routes/upstream.js'
import { addImageRoutes } from '../../src/api/routes/images.js'
import { tempDir } from './tmp.js'
import { startUpstreamSim, type UpstreamSim } from './upstream-sim.js'
import type { SimOptions } from './upstream-sim-state.js'

export interface Harness {
  sim: UpstreamSim
  home: HomeLayout
  socket: string
  proxy: Proxy
  /** The upstream token the proxy holds (so tests can check it never leaks). */
  token: string | null
  request (method: string, path: string, body?: unknown, headers?: Record<string, string>): Promise<SocketResponse>
  /** Stop the proxy and database and start them again on the same home (a daemon restart). */
  restart (): Promise<void>
}

export interface SocketResponse { status: number, headers: IncomingHttpHeaders, text: string, json: any }

export interface HarnessOptions {
  sim?: Partial<SimOptions>
  config?: Partial<ProxyConfig>
  /** 'valid' (default) stores a fresh token, 'expired' one that expired, 'none' no token. */
  token?: 'valid' | 'expired' | 'none'
  logger?: Logger
}

export const FAST_CONFIG: Partial<ProxyConfig> = { timeoutMs: 5_000, streamIdleTimeoutMs: 5_000, jobPollMs: 10, jobDeadlineMs: 20_000, queueRetryMs: 50 }

export async function socketRequest (socketPath: string, method: string, path: string, body?: unknown, headers: Record<string, string> = {}): Promise<SocketResponse> {
  const raw = body === undefined ? undefined : typeof body === 'string' || body instanceof Uint8Array ? body : JSON.stringify(body)
  return await new Promise((resolve, reject) => {
    const req = httpRequest({ socketPath, method, path, headers: { ...(raw !== undefined ? { 'content-type': 'application/json' } : {}), ...headers } }, (res) => {
      const chunks: Buffer[] = []
      res.on('data', (c: Buffer) => chunks.push(c))
      res.on('error', reject)
      res.on('end', () => {
        const text = Buffer.concat(chunks).toString('utf8')
        let json: unknown
        try { json = JSON.parse(text) } catch { json = undefined }
        resolve({ status: res.statusCode ?? 0, headers: res.headers, text, json })
      })
    })
    req.on('error', reject)
    req.end(raw)
  })
}

/**
 * The proxy's routes and its `/api/v0/` passthrough on the API server, as the daemon serves them.
 * `current` is read per request, so a restarted proxy is served by the same listener.
 */
export async function serveProxy (socket: string, current: () => Proxy, logger: Logger = silentLogger()): Promise<ApiServer> {
  const router = new Router()
  const live = {
    login: { start: async (email: string) => { await current().login.start(email) }, finish: async (email: string, code: string) => await current().login.finish(email, code) },
    get credentials () { return current().credentials },
    status: async () => await current().status(),
    listImages: async () => await current().listImages(),
    getImage: async (id: string) => await current().getImage(id)
  }
  addUpstreamRoutes(router, live)
  addImageRoutes(router, live)
  const api = createApiServer({ router, mounts: PROXY_MOUNT_PREFIXES.map((prefix) => ({ prefix, handle: async (req, res, ctx) => await current().handle(req, res, ctx) })), maxBodyBytes: 16 * 1024 * 1024, logger })
  await api.listenUnix(socket)
  return api
}

export async function startHarness (t: TestContext, opts: HarnessOptions = {}): Promise<Harness> {
  const sim = await startUpstreamSim(opts.sim)
  t.after(async () => { await sim.stop() })
  const root = await tempDir(t, 'hearth-proxy-')
  const home = homeLayout(root)
  const socket = home.socket
  let db!: HearthDatabase
  let proxy!: Proxy

  async function open (): Promise<void> {
    db = await openDatabase(home.index)
    proxy = createProxy({
      config: { baseUrl: sim.baseUrl, ...FAST_CONFIG, ...opts.config },
      home,
      kv: openKv(db, 'proxy'),
      queue: createDurableQueue<QueuedImageRequest>(db, 'upstream-images'),
      ...(opts.logger !== undefined ? { logger: opts.logger } : {})
    })
    await proxy.start()
  }
  async function close (): Promise<void> {
    await proxy.stop()
    await db.close()
  }
  await open()

  const api = await serveProxy(socket, () => proxy, opts.logger)
  t.after(async () => {
    await api.close()
    await close()
  })

  let token: string | null = null
  if (opts.token !== 'none') {
    token = sim.issueToken({ expiresInSec: opts.token === 'expired' ? -60 : 3600 })
    await proxy.credentials.save(token)
  }

  const harness: Harness = {
    sim,
    home,
    socket,
    get proxy () { return proxy },
    token,
    request: async (method, path, body, headers) => await socketRequest(socket, method, path, body, headers),
    async restart () { await close(); await open() }
  }
  return harness
}
