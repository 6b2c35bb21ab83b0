// The MCP sessions of both ways in (the owner socket's relay for `hearth mcp`, and `/mcp` on the
// assistants' listener): one SDK Streamable HTTP transport and one McpServer per session, bound to
// one connection at its `initialize`. Bounded: a body's size and JSON, messages per batch,
// sessions open at once (idle ones close after IDLE_MS), calls in flight per session. Answers are
// JSON (no server-sent streams): Hearth never sends requests or notifications of its own.
// The SDK (with zod and hono, ~200 modules: ~0.15 s of a daemon's start) is loaded by the first
// MCP request, not with the daemon.
import { randomUUID } from 'node:crypto'
import type { IncomingMessage, ServerResponse } from 'node:http'
import type { StreamableHTTPServerTransport } from '@modelcontextprotocol/sdk/server/streamableHttp.js'
import type { McpServer } from '@modelcontextprotocol/sdk/server/mcp.js'
import { HearthError } from '../errors.js'
import type { Logger } from '../log.js'
import { parseBoundedJsonBytes } from '../protocol/bounded-json.js'

/** Largest JSON-RPC body (a tool call's arguments are small; a search text is 500 characters at most). */
export const MAX_MCP_BODY_BYTES = 64 * 1024
const MAX_BATCH = 16
const MAX_IN_FLIGHT = 8
export const IDLE_MS = 30 * 60_000

interface Session { transport: StreamableHTTPServerTransport; server: McpServer; connectionId: string; lastSeen: number; inFlight: number }

/** Who is asking: the connection is known (a bearer token), or named by the `initialize` (the owner's relay). */
export type McpCaller =
  | { kind: 'connection'; connectionId: string }
  | { kind: 'stdio'; label: string | null }

export interface McpSessionsDeps {
  maxSessions: number
  /** The connection a relayed client's `initialize` names (created pending when new). */
  stdioConnection (clientName: string, label: string | null): Promise<string>
  /** Loads the server's side of the SDK on first use. */
  makeServer (connectionId: string): Promise<McpServer>
  logger: Logger
}

function rpcError (res: ServerResponse, status: number, code: number, message: string, headers: Record<string, string> = {}): void {
  const body = JSON.stringify({ jsonrpc: '2.0', error: { code, message }, id: null })
  res.writeHead(status, { 'content-type': 'application/json', 'content-length': Buffer.byteLength(body), ...headers })
  res.end(body)
}

function clientName (message: unknown): string {
  const info = (message as { params?: { clientInfo?: { name?: unknown } } }).params?.clientInfo
  const name = typeof info?.name === 'string' ? info.name.replace(/[\p{Cc}\p{Cf}]/gu, '').trim() : ''
  if (name.length === 0 || name.length > 128) throw new HearthError('INVALID_ARGUMENT', 'initialize must name the client (clientInfo.name, 1 to 128 characters)')
  return name
}

export function createMcpSessions (deps: McpSessionsDeps) {
  const sessions = new Map<string, Session>()

  function sweep (now = Date.now()): void {
    for (const [id, s] of sessions) {
      if (now - s.lastSeen > IDLE_MS && s.inFlight === 0) { sessions.delete(id); void s.transport.close().catch(() => {}) }
    }
  }
  const timer = setInterval(sweep, 60_000)
  timer.unref()

  async function open (message: unknown, caller: McpCaller): Promise<Session> {
    sweep()
    if (sessions.size >= deps.maxSessions) throw new HearthError('MCP_SESSION_LIMIT', `${deps.maxSessions} MCP sessions are open (mcp.maxSessions); close one or try again later`)
    const connectionId = caller.kind === 'connection' ? caller.connectionId : await deps.stdioConnection(clientName(message), caller.label)
    const [server, { StreamableHTTPServerTransport }] = await Promise.all([deps.makeServer(connectionId), import('@modelcontextprotocol/sdk/server/streamableHttp.js')])
    const session: Session = { transport: null as unknown as StreamableHTTPServerTransport, server, connectionId, lastSeen: Date.now(), inFlight: 0 }
    session.transport = new StreamableHTTPServerTransport({
      sessionIdGenerator: () => randomUUID(),
      enableJsonResponse: true,
      onsessioninitialized: (id) => { sessions.set(id, session) }
    })
    session.transport.onclose = () => {
      const id = session.transport.sessionId
      if (id !== undefined && sessions.get(id) === session) sessions.delete(id)
    }
    await server.connect(session.transport)
    return session
  }

  /** The body, bounded in bytes, nesting, values and batch size. */
  async function readMessage (readBody: (limit: number) => Promise<Buffer>): Promise<unknown> {
    const bytes = await readBody(MAX_MCP_BODY_BYTES)
    const message = parseBoundedJsonBytes(bytes, { maxDepth: 32, maxValues: 10_000, subject: 'MCP message' })
    if (Array.isArray(message) && message.length > MAX_BATCH) throw new HearthError('INVALID_ARGUMENT', `a JSON-RPC batch of more than ${MAX_BATCH} messages`)
    return message
  }

  return {
    async handle (req: IncomingMessage, res: ServerResponse, readBody: (limit: number) => Promise<Buffer>, caller: McpCaller): Promise<void> {
      const method = (req.method ?? 'GET').toUpperCase()
      if (method === 'GET') { rpcError(res, 405, -32000, 'Hearth sends no server-initiated messages: POST requests only', { allow: 'POST, DELETE' }); return }
      if (method !== 'POST' && method !== 'DELETE') { rpcError(res, 405, -32000, `${method} is not allowed on the MCP endpoint`, { allow: 'POST, DELETE' }); return }
      const sessionId = req.headers['mcp-session-id']
      let session = typeof sessionId === 'string' ? sessions.get(sessionId) : undefined
      // a session belongs to the connection that opened it: another caller's token never reaches it
      if (session !== undefined && caller.kind === 'connection' && session.connectionId !== caller.connectionId) session = undefined
      if (typeof sessionId === 'string' && session === undefined) { rpcError(res, 404, -32001, 'Session not found: initialize a new one'); return }
      if (method === 'DELETE') {
        if (session === undefined) { rpcError(res, 400, -32000, 'DELETE needs an Mcp-Session-Id'); return }
        await session.transport.handleRequest(req, res)
        return
      }
      let message: unknown
      try {
        message = await readMessage(readBody)
      } catch (err) {
        const e = err instanceof HearthError ? err : new HearthError('INVALID_JSON', 'the MCP message is not JSON')
        rpcError(res, e.status === 413 ? 413 : 400, -32700, `${e.code}: ${e.message}`)
        return
      }
      if (session === undefined) {
        const { isInitializeRequest } = await import('@modelcontextprotocol/sdk/types.js')
        if (!isInitializeRequest(message)) { rpcError(res, 400, -32000, 'No session: send initialize first (without an Mcp-Session-Id)'); return }
        try {
          session = await open(message, caller)
        } catch (err) {
          const e = err instanceof HearthError ? err : new HearthError('INTERNAL', 'could not open the MCP session', undefined, { cause: err })
          if (e.code === 'INTERNAL') deps.logger.warn({ err }, 'MCP session not opened')
          rpcError(res, e.status, -32000, `${e.code}: ${e.message}`)
          return
        }
      }
      if (session.inFlight >= MAX_IN_FLIGHT) { rpcError(res, 429, -32000, `RATE_LIMITED: more than ${MAX_IN_FLIGHT} calls at once in one session`); return }
      session.inFlight++
      session.lastSeen = Date.now()
      try {
        await session.transport.handleRequest(req, res, message)
      } finally {
        session.inFlight--
      }
    },
    count: () => sessions.size,
    async closeAll (): Promise<void> {
      clearInterval(timer)
      const all = [...sessions.values()]
      sessions.clear()
      await Promise.all(all.map(async (s) => await s.transport.close().catch(() => {})))
    }
  }
}

export type McpSessions = ReturnType<typeof createMcpSessions>
