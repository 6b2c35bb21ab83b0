// The local API's listeners. One route table (router.ts) is served by several listeners; each
// listener authenticates its callers in its own way and serves the routes whose `access` it can
// grant. Today: the owner's unix socket (mode 0600 in a 0700 folder: whoever can open it is the
// owner), a socket handed over by systemd (LISTEN_FDS), and an optional loopback TCP listener
// that demands the bearer token. All three grant `owner` and carry the `/api/v0/` raw mount.
//
// Adding a listener (e.g. the builder API or the dashboard):
//
//   const builder: Listener = {
//     name: 'builder',
//     serves: ['builder', 'public'],                 // its route set: routes naming one of these
//     async authenticate (req, ctx) {                // throw a HearthError to refuse (it is logged)
//       const body = await ctx.bytes()               // read once; handlers get the same bytes
//       const who = await verifySignedRequest(req, body)   // the listener's own rule
//       return { access: ['builder', 'public'], id: who }
//     },
//     headers: (req) => corsHeaders(req),            // added to every answer, errors included
//     intercept: (req) => req.method === 'OPTIONS' ? preflight(req) : null   // before auth
//   }
//   await api.listen(builder, { host: '127.0.0.1', port: 0, configKey: 'builder.port' })
//
// The server does the rest for every listener alike: the one JSON error shape (also for requests
// Node's HTTP parser rejects, via `clientError`), refusal of `.`/`..` path segments before any
// mount or route sees the path, NOT_FOUND for routes outside the listener's set, UNAUTHORIZED
// when the caller holds none of a route's access names, logging of refused requests, and
// draining unread bodies. Handlers return `{status, body, headers}` (http.ts).
import { createServer, STATUS_CODES, type IncomingMessage, type Server, type ServerResponse } from 'node:http'
import type { Socket } from 'node:net'
import { chmod, mkdir, unlink } from 'node:fs/promises'
import { dirname } from 'node:path'
import { timingSafeEqual } from 'node:crypto'
import { HearthError, toErrorBody, type ErrorBody } from '../errors.js'
import type { Logger } from '../log.js'
import { redactTarget } from '../log-redact.js'
import { errorReply, readBody, readJson, sendReply, type ApiRequest, type BodyRoom, type Caller, type Reply } from './http.js'
import type { Access, Router } from './router.js'
import { refuseDotSegments } from './path.js'
import { resolveLoopback } from './loopback.js'
import type { StartingGate } from './starting.js'

/** What a raw mount gets besides the request: the parsed URL and a body reader with its own limit. */
export interface MountContext {
  url: URL
  /** The body, refused past `limitBytes` with BODY_TOO_LARGE. */
  readBody (limitBytes: number): Promise<Buffer>
}

/**
 * A handler that owns the raw response (the streaming upstream passthrough): it writes `res`
 * itself and returns null, or returns a Reply for the server to write. A thrown error is answered
 * in the one error shape (when nothing was written yet). Paths reach it as sent, dot segments refused.
 */
export interface RawMount {
  prefix: string
  handle (req: IncomingMessage, res: ServerResponse, ctx: MountContext): Promise<Reply | null | void>
}

/** What a listener's authentication may use besides the request head. */
export interface AuthContext {
  url: URL
  /** The request body, read once within the size limit (handlers see the same bytes). */
  bytes (): Promise<Buffer>
}

export interface Listener {
  /** For logs: `owner`, `owner-tcp`, `builder`, `dashboard`. */
  name: string
  /** The access names this listener can grant: routes naming none of them do not exist here. */
  serves: readonly Access[]
  /** Who is calling; throw a HearthError (UNAUTHORIZED, FORBIDDEN, …) to refuse the request. */
  authenticate (req: IncomingMessage, ctx: AuthContext): Caller | Promise<Caller>
  /** Raw mounts (path prefix → handler owning the response), checked after authentication. */
  mounts?: readonly RawMount[]
  /** Headers added to every answer of this listener, errors included (CORS). */
  headers?: (req: IncomingMessage) => Record<string, string>
  /** Largest request body on this listener (default: the server's maxBodyBytes). */
  maxBodyBytes?: number
  /** Answer before authentication and routing (a CORS preflight); null to go on. */
  intercept?: (req: IncomingMessage, url: URL) => Reply | null | Promise<Reply | null>
  /**
   * Told of every error answer before it is sent, wherever the request was refused (a dot-segment
   * path before authentication, a route this listener does not serve after it): a listener that
   * keeps its own record of refusals (the builder's access log). Its refusals are then logged
   * to the daemon's log at debug only.
   */
  refused?: (req: IncomingMessage, error: ErrorBody) => Promise<void>
}

export type ListenTarget =
  | { path: string }
  | { fd: number }
  /**
   * Loopback only: `host` is resolved and every address must be loopback (CONFIG_INVALID naming
   * `configKey`), unless `exposed` (a listener whose callers prove themselves per request, such as
   * signed builder requests, may face the network).
   */
  | { host: string; port: number; configKey?: string; exposed?: boolean }

export interface ApiServerDeps {
  router: Router
  /** Raw mounts of the owner's listeners (socket, systemd fd, bearer TCP). */
  mounts: RawMount[]
  maxBodyBytes: number
  /** Most JSON values in a body (ingest.maxJsonValues; default DEFAULT_MAX_JSON_VALUES). */
  maxJsonValues?: number
  logger: Logger
  /**
   * While the daemon starts: `router` is the first table (health, status), and a request it does
   * not answer waits at this gate for the full table (`serve`) before it is routed.
   */
  starting?: StartingGate
}

/** A whole route table: the routes and the owner's raw mounts. */
export interface RouteTable {
  router: Router
  mounts: readonly RawMount[]
}

export interface ApiServer {
  /** Serve `table` from now on on every listener (the daemon's full API, once its parts are up). */
  serve (table: RouteTable): void
  /** Serve `listener` on a unix socket, an inherited fd or loopback TCP; returns the TCP port (or null). */
  listen (listener: Listener, at: ListenTarget): Promise<{ port: number | null }>
  listenUnix (path: string): Promise<void>
  /** Listen on a file descriptor passed by systemd socket activation. */
  listenFd (fd: number): Promise<void>
  listenTcp (host: string, port: number, token: string): Promise<{ port: number }>
  close (): Promise<void>
}

/** The path of a request target as sent (before its query or fragment), never resolved. */
export function pathOfTarget (target: string): string {
  const query = target.indexOf('?')
  const fragment = target.indexOf('#')
  const end = query < 0 ? fragment : fragment < 0 ? query : Math.min(query, fragment)
  return end < 0 ? target : target.slice(0, end)
}

function isPromise<T> (value: T | Promise<T>): value is Promise<T> {
  return typeof (value as { then?: unknown } | null)?.then === 'function'
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

/** The owner's unix socket (or systemd fd): reaching it is the proof. */
export function ownerSocketListener (mounts: readonly RawMount[]): Listener {
  return { name: 'owner', serves: ['owner'], mounts, authenticate: () => ({ access: ['owner'] }) }
}

/** The owner's loopback TCP listener: the bearer token in `identity/api-token` is the proof. */
export function ownerTokenListener (token: string, mounts: readonly RawMount[]): Listener {
  return {
    name: 'owner-tcp',
    serves: ['owner'],
    mounts,
    authenticate (req) {
      if (!bearerMatches(req.headers.authorization, token)) {
        throw new HearthError('UNAUTHORIZED', 'the TCP listener requires Authorization: Bearer <token> (see identity/api-token)')
      }
      // the app's own Authorization (the TCP bearer) must not travel further (the upstream passthrough)
      delete req.headers.authorization
      return { access: ['owner'] }
    }
  }
}

const PARSER_ERRORS: Record<string, { code: 'HEADERS_TOO_LARGE' | 'REQUEST_TIMEOUT' | 'BODY_TOO_LARGE', message: string }> = {
  HPE_HEADER_OVERFLOW: { code: 'HEADERS_TOO_LARGE', message: 'the request headers are too large' },
  HPE_CHUNK_EXTENSIONS_OVERFLOW: { code: 'BODY_TOO_LARGE', message: 'the chunk extensions are too large' },
  ERR_HTTP_REQUEST_TIMEOUT: { code: 'REQUEST_TIMEOUT', message: 'the request was not received in time' }
}

/** The one error shape for what Node's HTTP parser refuses (there is no request object to answer). */
export function parserErrorResponse (err: NodeJS.ErrnoException): { bytes: string; errorCode: string } {
  const known = PARSER_ERRORS[err.code ?? '']
  const error = known !== undefined
    ? new HearthError(known.code, known.message)
    : new HearthError('MALFORMED_REQUEST', `the request is not valid HTTP/1.1 (${err.code ?? 'parse error'}: ${String(err.message).replace(/[^\x20-\x7e]/g, '?').slice(0, 120)})`)
  const body = JSON.stringify(toErrorBody(error))
  const status = error.status
  return {
    errorCode: error.code,
    bytes: `HTTP/1.1 ${status} ${STATUS_CODES[status] ?? 'Error'}\r\ncontent-type: application/json; charset=utf-8\r\n` +
      `content-length: ${Buffer.byteLength(body)}\r\nconnection: close\r\n\r\n${body}`
  }
}

export function createApiServer (deps: ApiServerDeps): ApiServer {
  const servers: Server[] = []
  const sockets: string[] = []
  let router = deps.router
  // one array shared by the owner's listeners, so `serve` changes their mounts in place
  const ownerMounts: RawMount[] = [...deps.mounts]

  /** True when the table serving now answers this request (or the full table serves). */
  function servedNow (method: string, rawPath: string, listener: Listener): boolean {
    if (deps.starting === undefined || deps.starting.open) return true
    try {
      router.match(method, rawPath, listener.serves)
      return true
    } catch {
      return false
    }
  }

  function logRefusal (listener: Listener, network: boolean, fields: Record<string, unknown>, msg: string): void {
    // refusals on a network listener are worth a look (probing, a misconfigured app); on the
    // owner's socket they are the owner's own mistakes; a listener recording its own refusals
    // (bounded) keeps a flood of them out of the daemon's log
    if (network && listener.refused === undefined) deps.logger.warn({ listener: listener.name, ...fields }, msg)
    else deps.logger.debug({ listener: listener.name, ...fields }, msg)
  }

  async function handle (listener: Listener, network: boolean, req: IncomingMessage, res: ServerResponse): Promise<void> {
    // the request's debug line is built only when it is written (its fields cost a microsecond a request)
    const started = deps.logger.isLevelEnabled('debug') ? performance.now() : null
    let refused: string | null = null
    try {
      const target = req.url ?? '/'
      let url: URL
      try {
        url = new URL(target, 'http://hearth.local')
      } catch {
        throw new HearthError('INVALID_PATH', 'request target is not a valid URL path')
      }
      // match on the raw path, never a resolved one (`url.pathname` is): `/v1/data/../upstream/status`
      // is refused here, before any intercept, mount or route of any listener sees it
      const rawPath = pathOfTarget(target)
      refuseDotSegments(rawPath)
      if (listener.intercept !== undefined) {
        let early: Reply | null
        try {
          early = await listener.intercept(req, url) ?? null
        } catch (err) {
          refused = 'intercept'
          throw err
        }
        if (early !== null) { finish(listener, req, res, early); return }
      }

      let body: Promise<Buffer> | null = null
      const bytes = (opts: { envelopeRoom?: boolean; into?: BodyRoom } = {}): Promise<Buffer> => (body ??= readBody(req, listener.maxBodyBytes ?? deps.maxBodyBytes, opts))
      let caller: Caller
      try {
        // most listeners know their caller at once (the owner's socket): no promise to wait for then
        const known = listener.authenticate(req, { url, bytes })
        caller = isPromise(known) ? await known : known
      } catch (err) {
        refused = 'authentication'
        throw err
      }
      const method = (req.method ?? 'GET').toUpperCase()
      if (!servedNow(method, rawPath, listener)) await deps.starting!.wait()
      const mount = listener.mounts?.find((m) => rawPath.startsWith(m.prefix))
      if (mount !== undefined) {
        const reply = await mount.handle(req, res, { url, readBody: async (limit) => await readBody(req, limit) })
        if (reply != null) finish(listener, req, res, reply)
        return
      }

      const { handler, params, access } = router.match(method, rawPath, listener.serves)
      if (!access.some((a) => caller.access.includes(a))) {
        refused = 'access'
        throw new HearthError('UNAUTHORIZED', `${method} ${rawPath} needs one of: ${access.join(', ')}`)
      }
      const apiReq: ApiRequest = {
        method, url, params, raw: req, caller, listener: listener.name,
        json: () => readJson(req, bytes, deps.maxJsonValues),
        bytes
      }
      const reply = await handler(apiReq)
      finish(listener, req, res, reply, method === 'HEAD')
    } catch (err) {
      const reply = errorReply(err)
      if (reply.status >= 500) deps.logger.error({ err, listener: listener.name, url: redactTarget(req.url), method: req.method }, 'request failed')
      if (refused !== null) logRefusal(listener, network, { method: req.method, url: redactTarget(req.url), remote: req.socket.remoteAddress, errorCode: (reply.body as ErrorBody).error.errorCode, step: refused }, 'request refused')
      if (listener.refused !== undefined) {
        await listener.refused(req, reply.body as ErrorBody).catch((hookErr: unknown) => deps.logger.error({ err: hookErr, listener: listener.name }, 'cannot record a refused request'))
      }
      if (res.headersSent) { res.destroy(); return }
      finish(listener, req, res, reply)
    } finally {
      if (started !== null) deps.logger.debug({ listener: listener.name, method: req.method, url: redactTarget(req.url), status: res.statusCode, ms: +(performance.now() - started).toFixed(2) }, 'request')
    }
  }

  /**
   * Answer with the listener's own headers under the reply's (a HEAD answer without its body),
   * discarding an unread body while the answer goes out so the client sees it, not EPIPE. An answer
   * before the whole body arrived (over the limit, refused before it was read) closes the connection
   * after it (Node then ends the socket once the answer is written): kept open, the rest would be
   * read and discarded for as long as the sender keeps sending, a chunked body up to Node's
   * requestTimeout (300 s).
   */
  function finish (listener: Listener, req: IncomingMessage, res: ServerResponse, reply: Reply, head = false): void {
    if (!req.readableEnded) req.resume()
    let answer: Reply = head ? { status: reply.status, ...(reply.headers !== undefined ? { headers: reply.headers } : {}) } : reply
    if (!req.complete && hasBody(req)) answer = { ...answer, headers: { ...answer.headers, connection: 'close' } }
    sendReply(res, answer, listener.headers?.(req))
  }

  function makeServer (listener: Listener, network: boolean): Server {
    const server = createServer((req, res) => { void handle(listener, network, req, res) })
    server.keepAliveTimeout = 5_000
    server.on('clientError', (err: NodeJS.ErrnoException, socket: Socket) => {
      const inFlight = (socket as Socket & { _httpMessage?: ServerResponse })._httpMessage
      if (err.code === 'ECONNRESET' || !socket.writable || inFlight?.headersSent === true) { socket.destroy(); return }
      const answer = parserErrorResponse(err)
      logRefusal(listener, network, { remote: socket.remoteAddress, errorCode: answer.errorCode, parserError: err.code }, 'request refused by the HTTP parser')
      socket.end(answer.bytes)
    })
    servers.push(server)
    return server
  }

  function listening (server: Server, arg: Parameters<Server['listen']>[0]): Promise<void> {
    return new Promise((resolve, reject) => {
      server.once('error', reject)
      server.listen(arg, () => { server.off('error', reject); resolve() })
    })
  }

  async function listen (listener: Listener, at: ListenTarget): Promise<{ port: number | null }> {
    if ('path' in at) {
      await mkdir(dirname(at.path), { recursive: true, mode: 0o700 })
      await chmod(dirname(at.path), 0o700)
      // a socket left by a crashed daemon; the daemon lock already proved nobody is serving it
      await unlink(at.path).catch(() => {})
      await listening(makeServer(listener, false), at.path)
      await chmod(at.path, 0o600)
      sockets.push(at.path)
      return { port: null }
    }
    if ('fd' in at) {
      await listening(makeServer(listener, false), { fd: at.fd })
      return { port: null }
    }
    const address = at.exposed === true ? at.host : await resolveLoopback(at.host, at.configKey ?? 'host')
    const server = makeServer(listener, true)
    await listening(server, { host: address, port: at.port })
    const addr = server.address()
    return { port: typeof addr === 'object' && addr !== null ? addr.port : at.port }
  }

  const owner = ownerSocketListener(ownerMounts)
  return {
    serve (table) {
      router = table.router
      ownerMounts.splice(0, ownerMounts.length, ...table.mounts)
    },
    listen,
    async listenUnix (path) { await listen(owner, { path }) },
    async listenFd (fd) { await listen(owner, { fd }) },
    async listenTcp (host, port, token) {
      const { port: bound } = await listen(ownerTokenListener(token, ownerMounts), { host, port, configKey: 'api.tcp.host' })
      return { port: bound ?? port }
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

/** Whether a request says a body follows (a length over 0, or chunked); one without a body is whole once its headers are. */
function hasBody (req: IncomingMessage): boolean {
  return req.headers['transfer-encoding'] !== undefined || (req.headers['content-length'] !== undefined && req.headers['content-length'] !== '0')
}
