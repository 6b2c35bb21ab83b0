// The local API's listeners: the unix socket (mode 0600 in a 0700 folder: whoever can open it is
// the owner), a socket handed over by systemd (LISTEN_FDS), and an optional loopback TCP
// listener that demands the bearer token. All share one request handler.
import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http'
import { chmod, mkdir, unlink } from 'node:fs/promises'
import { dirname } from 'node:path'
import { timingSafeEqual } from 'node:crypto'
import { HearthError } from '../errors.js'
import type { Logger } from '../log.js'
import { errorReply, readBody, readJson, sendReply, type ApiRequest } from './http.js'
import type { Router } from './router.js'

/** A handler that owns the raw response (streaming proxy). */
export interface RawMount {
  prefix: string
  handle (req: IncomingMessage, res: ServerResponse): Promise<void>
}

export interface ApiServerDeps {
  router: Router
  mounts: RawMount[]
  maxBodyBytes: number
  logger: Logger
}

export interface ApiServer {
  listenUnix (path: string): Promise<void>
  /** Listen on a file descriptor passed by systemd socket activation. */
  listenFd (fd: number): Promise<void>
  listenTcp (host: string, port: number, token: string): Promise<{ port: number }>
  close (): Promise<void>
}

/** The first socket systemd passed us, when LISTEN_PID/LISTEN_FDS say it is ours (sd_listen_fds). */
export function systemdListenFd (env: NodeJS.ProcessEnv = process.env): number | null {
  if (env.LISTEN_PID !== String(process.pid)) return null
  const count = Number.parseInt(env.LISTEN_FDS ?? '', 10)
  return Number.isInteger(count) && count >= 1 ? 3 : null
}

function bearerMatches (header: string | undefined, token: string): boolean {
  if (header === undefined || !header.startsWith('Bearer ')) return false
  const given = Buffer.from(header.slice(7).trim())
  const want = Buffer.from(token)
  return given.length === want.length && timingSafeEqual(given, want)
}

export function createApiServer (deps: ApiServerDeps): ApiServer {
  const servers: Server[] = []
  const sockets: string[] = []

  async function handle (req: IncomingMessage, res: ServerResponse, tcpToken: string | null): Promise<void> {
    const started = performance.now()
    try {
      if (tcpToken !== null && !bearerMatches(req.headers.authorization, tcpToken)) {
        req.resume()
        throw new HearthError('UNAUTHORIZED', 'the TCP listener requires Authorization: Bearer <token> (see identity/api-token)')
      }
      let url: URL
      try {
        url = new URL(req.url ?? '/', 'http://hearth.local')
      } catch {
        throw new HearthError('INVALID_PATH', 'request target is not a valid URL path')
      }
      const mount = deps.mounts.find((m) => url.pathname.startsWith(m.prefix))
      if (mount !== undefined) {
        // the app's own Authorization (the TCP bearer) must not travel further
        if (tcpToken !== null) delete req.headers.authorization
        await mount.handle(req, res)
        return
      }
      const method = (req.method ?? 'GET').toUpperCase()
      // match on the raw path: URL parsing would resolve `/v1/data/..` into another route
      const rawPath = (req.url ?? '/').split(/[?#]/)[0]!
      const { handler, params } = deps.router.match(method, rawPath)
      const apiReq: ApiRequest = {
        method,
        url,
        params,
        raw: req,
        json: async () => await readJson(req, deps.maxBodyBytes),
        bytes: async () => await readBody(req, deps.maxBodyBytes)
      }
      const reply = await handler(apiReq)
      if (!req.readableEnded) req.resume()
      sendReply(res, method === 'HEAD' ? { ...reply, body: undefined } : reply)
    } catch (err) {
      const reply = errorReply(err)
      if (err instanceof HearthError && err.code === 'METHOD_NOT_ALLOWED') {
        reply.headers = { ...reply.headers, allow: ((err.details?.allow as string[]) ?? []).join(', ') }
      }
      if (reply.status >= 500) deps.logger.error({ err, url: req.url, method: req.method }, 'request failed')
      // an error before the body was read: drain it so the client sees the answer, not EPIPE
      if (!req.readableEnded) req.resume()
      if (res.headersSent) res.destroy(); else sendReply(res, reply)
    } finally {
      deps.logger.debug({ method: req.method, url: req.url, status: res.statusCode, ms: +(performance.now() - started).toFixed(2) }, 'request')
    }
  }

  function makeServer (tcpToken: string | null): Server {
    const server = createServer((req, res) => { void handle(req, res, tcpToken) })
    server.keepAliveTimeout = 5_000
    servers.push(server)
    return server
  }

  function listening (server: Server, arg: Parameters<Server['listen']>[0]): Promise<void> {
    return new Promise((resolve, reject) => {
      server.once('error', reject)
      server.listen(arg, () => { server.off('error', reject); resolve() })
    })
  }

  return {
    async listenUnix (path) {
      await mkdir(dirname(path), { recursive: true, mode: 0o700 })
      await chmod(dirname(path), 0o700)
      // a socket left by a crashed daemon; the daemon lock already proved nobody is serving it
      await unlink(path).catch(() => {})
      const server = makeServer(null)
      await listening(server, path)
      await chmod(path, 0o600)
      sockets.push(path)
    },
    async listenFd (fd) {
      await listening(makeServer(null), { fd })
    },
    async listenTcp (host, port, token) {
      if (!['127.0.0.1', '::1', 'localhost'].includes(host) && !host.startsWith('127.')) {
        throw new HearthError('CONFIG_INVALID', `api.tcp.host must be a loopback address, got ${host}`)
      }
      const server = makeServer(token)
      await listening(server, { host, port })
      const addr = server.address()
      return { port: typeof addr === 'object' && addr !== null ? addr.port : port }
    },
    async close () {
      await Promise.all(servers.map(async (s) => await new Promise<void>((resolve) => {
        s.close(() => resolve())
        s.closeAllConnections()
      })))
      for (const p of sockets) await unlink(p).catch(() => {})
    }
  }
}
