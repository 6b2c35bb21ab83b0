// A proxy mounted on a real node:http server on a per-test unix socket (as the daemon mounts it),
// in front of the upstream simulator, with the real database, KV and durable queue.
import { createServer, request as httpRequest, type Server, type IncomingHttpHeaders } from 'node:http'
import { mkdir } from 'node:fs/promises'
import type { TestContext } from 'node:test'
import { homeLayout, type HomeLayout } from '../../src/home.js'
import { openDatabase, openKv, createDurableQueue, type HearthDatabase } from '../../src/db/index.js'
import { createProxy, type Proxy, type ProxyConfig, type QueuedImageRequest } from '../../src/proxy/index.js'
import { sendError } from '../../src/proxy/respond.js'
import { HearthError } from '../../src/errors.js'
import type { Logger } from '../../src/log.js'
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

  const server: Server = createServer((req, res) => {
    const url = new URL(req.url ?? '/', 'http://hearth.local')
    if (proxy.owns(url.pathname)) { void proxy.handle(req, res); return }
    sendError(res, new HearthError('NOT_FOUND', 'not a proxy path'))
  })
  await mkdir(home.run, { recursive: true })
  await new Promise<void>((resolve) => server.listen(socket, resolve))
  t.after(async () => {
    server.closeAllConnections()
    await new Promise<void>((resolve) => server.close(() => resolve()))
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
