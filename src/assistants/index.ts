// The assistants' side of the daemon (docs/protocol.md §3.9): MCP clients as connections with
// their own grants. Two ways in, one MCP implementation: `hearth mcp` relays a local assistant's
// stdio over the owner's socket to `/v1/assistants/mcp` (a raw mount: the owner's socket is the
// proof, the client's name picks the connection), and — with `mcp.listen` — remote assistants
// reach `/mcp` on a listener of its own after the OAuth 2.1 flow (oauth-*.ts), where "authorize"
// is the owner's approval of the connection.
import type { IncomingMessage } from 'node:http'
import { HearthError } from '../errors.js'
import type { HearthConfig } from '../config/types.js'
import type { HearthDatabase } from '../db/database.js'
import type { FileIndex } from '../db/file-index.js'
import type { Logger } from '../log.js'
import type { Router } from '../api/router.js'
import type { ApiServer, RawMount } from '../api/server.js'
import type { ConsentItem } from '../connectors/consent.js'
import type { Search } from '../search/types.js'
import type { FileRecord } from '../db/types.js'
import type { Envelope } from '../protocol/envelope.js'
import { parseListen } from '../api/listen.js'
import { addAssistantOwnerRoutes } from './owner-routes.js'
import { createMcpSessions } from './sessions.js'
import { openConnectionStore } from './store.js'
import type { ActivityEntry } from './tools.js'
import { openOAuthStore } from './oauth-store.js'
import { mcpListener } from './listener.js'
import { LABEL_HEADER, OWNER_MCP_PATH } from './wire.js'
import { addOAuthRoutes } from './oauth-routes.js'


export interface AssistantsDeps {
  config: HearthConfig['mcp']
  db: HearthDatabase
  index: FileIndex
  readVersion (record: FileRecord): Promise<Envelope>
  search: Search
  consent (patterns: readonly string[]): Promise<ConsentItem[]>
  /** The one access log: a tool call's entry, and a connection's newest entries. */
  activity: { record (entry: ActivityEntry): Promise<void>; recent (connectionId: string, limit: number): Promise<unknown[]> }
  logger: Logger
}

export interface Assistants {
  addRoutes (router: Router): void
  /** The relay's endpoint on the owner's listeners. */
  readonly ownerMount: RawMount
  /** Starts the `/mcp` listener when `mcp.listen` is set; returns its URL (or null). */
  start (api: ApiServer): Promise<string | null>
  stop (): Promise<void>
  status (): Promise<Record<string, unknown>>
}

function label (req: IncomingMessage): string | null {
  const raw = req.headers[LABEL_HEADER]
  if (typeof raw !== 'string') return null
  let text: string
  try { text = decodeURIComponent(raw) } catch { text = raw }
  const clean = text.replace(/[\p{Cc}\p{Cf}]/gu, '').trim().slice(0, 64)
  return clean.length > 0 ? clean : null
}

export function setUpAssistants (deps: AssistantsDeps): Assistants {
  const { config, logger } = deps
  const connections = openConnectionStore(deps.db)
  const oauth = openOAuthStore(deps.db, { accessTokenSeconds: config.accessTokenSeconds })
  const toolDeps = { connections, index: deps.index, readVersion: deps.readVersion, search: deps.search, consent: deps.consent, activity: deps.activity, maxResultBytes: config.maxResultBytes }
  const sessions = createMcpSessions({
    maxSessions: config.maxSessions,
    async stdioConnection (clientName, named) {
      const name = named === null ? clientName : `${clientName} (${named})`
      const { connection, request } = await connections.connect('stdio', name, { name, clientId: null, scopes: [] })
      if (request !== null && connection.status === 'pending') logger.info({ connection: connection.id, request: request.id, name }, 'assistant waiting for approval')
      return connection.id
    },
    makeServer: async (connectionId) => (await import('./mcp-server.js')).createMcpServer(toolDeps, connectionId),
    logger
  })
  let url: string | null = null

  return {
    addRoutes (router) {
      addAssistantOwnerRoutes(router, { connections, consent: deps.consent, activity: deps.activity.recent, onRevoked: async (id) => { await oauth.revokeConnection(id) } })
      if (config.listen !== null) addOAuthRoutes(router, { connections, oauth, consent: deps.consent, base: () => url ?? '' })
    },
    ownerMount: {
      prefix: OWNER_MCP_PATH,
      async handle (req, res, ctx) {
        if (ctx.url.pathname !== OWNER_MCP_PATH) throw new HearthError('NOT_FOUND', `no route for ${req.method ?? 'GET'} ${ctx.url.pathname}`)
        await sessions.handle(req, res, ctx.readBody, { kind: 'stdio', label: label(req) })
        return null
      }
    },
    async start (api) {
      if (config.listen === null) return null
      const { host, port } = parseListen(config.listen, 'mcp.listen')
      const loopback = host === 'localhost' || host === '::1' || host.startsWith('127.')
      const listener = mcpListener({ connections, oauth, sessions, publicUrl: () => url ?? '', logger })
      const bound = await api.listen(listener, { host, port, configKey: 'mcp.listen', exposed: !loopback })
      url = config.publicUrl?.replace(/\/+$/, '') ?? `http://${host.includes(':') ? `[${host}]` : host}:${bound.port ?? port}`
      logger.info({ url }, 'assistants listener ready')
      return url
    },
    async stop () { await sessions.closeAll() },
    async status () {
      const list = await connections.list({ limit: 1000 })
      return {
        listener: url === null ? null : `${url}/mcp`,
        sessions: sessions.count(),
        connections: { active: list.filter((c) => c.status === 'active').length, pending: list.filter((c) => c.status === 'pending').length }
      }
    }
  }
}
