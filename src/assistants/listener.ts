// The assistants' listener (`mcp.listen`): the OAuth endpoints (routes of the one router with the
// `mcp-client` access, oauth-routes.ts) and `/mcp`, a raw mount because the SDK's transport writes
// its own answers. Every `/mcp` request carries a bearer access token of an approved connection;
// without one the answer is 401 with the protected-resource metadata's address (RFC 9728 §5.1), so
// a client starts the authorization flow. CORS is open: the proof is the bearer token, never a cookie.
import type { ServerResponse } from 'node:http'
import { HearthError } from '../errors.js'
import type { Logger } from '../log.js'
import type { Listener } from '../api/server.js'
import type { ConnectionStore } from './store.js'
import type { OAuthStore } from './oauth-store.js'
import type { McpSessions } from './sessions.js'
import { MCP_CLIENT_ACCESS } from './oauth-routes.js'

export interface McpListenerDeps {
  connections: ConnectionStore
  oauth: OAuthStore
  sessions: McpSessions
  publicUrl (): string
  logger: Logger
}

/** OAuth's and MCP's request bodies are small: the listener's limit. */
const MAX_BODY_BYTES = 64 * 1024

const CORS = {
  'access-control-allow-origin': '*',
  'access-control-allow-methods': 'GET, POST, DELETE, OPTIONS',
  'access-control-allow-headers': 'authorization, content-type, mcp-session-id, mcp-protocol-version, last-event-id',
  'access-control-expose-headers': 'mcp-session-id, www-authenticate',
  'access-control-max-age': '600'
}

function unauthorized (res: ServerResponse, base: string, error: 'invalid_token' | null, description: string): void {
  const challenge = `Bearer resource_metadata="${base}/.well-known/oauth-protected-resource/mcp"${error === null ? '' : `, error="${error}", error_description="${description}"`}`
  const body = JSON.stringify({ jsonrpc: '2.0', error: { code: -32001, message: `UNAUTHORIZED: ${description}` }, id: null })
  res.writeHead(401, { ...CORS, 'content-type': 'application/json', 'content-length': Buffer.byteLength(body), 'www-authenticate': challenge })
  res.end(body)
}

export function mcpListener (deps: McpListenerDeps): Listener {
  return {
    name: 'mcp',
    serves: [MCP_CLIENT_ACCESS],
    maxBodyBytes: MAX_BODY_BYTES,
    headers: () => ({ ...CORS, 'x-content-type-options': 'nosniff' }),
    intercept: (req) => (req.method === 'OPTIONS' ? { status: 204 } : null),
    authenticate: () => ({ access: [MCP_CLIENT_ACCESS] }),
    mounts: [{
      prefix: '/mcp',
      async handle (req, res, ctx) {
        if (ctx.url.pathname !== '/mcp') throw new HearthError('NOT_FOUND', `no route for ${req.method ?? 'GET'} ${ctx.url.pathname}`)
        const header = req.headers.authorization
        if (header === undefined || !/^Bearer \S+$/i.test(header)) { unauthorized(res, deps.publicUrl(), null, 'an OAuth access token is required'); return null }
        const connectionId = await deps.oauth.accessConnection(header.slice(7))
        const connection = connectionId === null ? null : await deps.connections.get(connectionId)
        if (connection === null || connection.status !== 'active') { unauthorized(res, deps.publicUrl(), 'invalid_token', 'the access token is unknown, expired or revoked'); return null }
        for (const [k, v] of Object.entries(CORS)) res.setHeader(k, v)
        await deps.sessions.handle(req, res, ctx.readBody, { kind: 'connection', connectionId: connection.id })
        return null
      }
    }]
  }
}
