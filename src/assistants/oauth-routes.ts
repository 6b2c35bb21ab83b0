// The MCP authorization spec's endpoints on the assistants' listener (docs/protocol.md §3.9):
// protected-resource metadata (RFC 9728), authorization-server metadata (RFC 8414), dynamic client
// registration (RFC 7591), the authorization endpoint (OAuth 2.1, PKCE S256 only) whose consent is
// the owner's approval of the connection — the browser waits on a page that goes on to the client
// once the owner decided — and the token (codes, rotating refresh tokens) and revocation endpoints.
// Errors are OAuth's own shape (`{error, error_description}`), as clients expect.
import { HearthError } from '../errors.js'
import type { Reply } from '../api/http.js'
import type { ApiRequest } from '../api/http.js'
import type { Router } from '../api/router.js'
import { checkPatterns, patternWithin } from '../protocol/scope-pattern.js'
import type { ConsentItem } from '../connectors/consent.js'
import type { ConnectionStore } from './store.js'
import { OAuthFailure, type OAuthStore } from './oauth-store.js'
import { waitPage } from './oauth-page.js'

export const MCP_CLIENT_ACCESS = 'mcp-client'
const ACCESS = { access: [MCP_CLIENT_ACCESS] }

export interface OAuthRouteDeps {
  connections: ConnectionStore
  oauth: OAuthStore
  consent (patterns: readonly string[]): Promise<ConsentItem[]>
  /** The listener's public base URL (issuer), known once it is bound. */
  base (): string
}

function oauthError (err: unknown): Reply {
  if (err instanceof OAuthFailure) return { status: err.error === 'invalid_client' ? 401 : err.error === 'temporarily_unavailable' ? 503 : 400, body: { error: err.error, error_description: err.message }, headers: { 'cache-control': 'no-store' } }
  if (err instanceof HearthError && err.status < 500) return { status: 400, body: { error: 'invalid_request', error_description: `${err.code}: ${err.message}` }, headers: { 'cache-control': 'no-store' } }
  throw err
}

async function form (req: ApiRequest): Promise<URLSearchParams> {
  const type = req.raw.headers['content-type'] ?? ''
  if (!type.startsWith('application/x-www-form-urlencoded')) throw new OAuthFailure('invalid_request', 'the body must be application/x-www-form-urlencoded')
  return new URLSearchParams((await req.bytes()).toString('utf8'))
}

function param (p: URLSearchParams, name: string, max = 2048): string | null {
  const values = p.getAll(name)
  if (values.length > 1) throw new OAuthFailure('invalid_request', `${name} is given more than once`)
  const v = values[0]
  if (v === undefined || v === '') return null
  if (v.length > max) throw new OAuthFailure('invalid_request', `${name} is longer than ${max} characters`)
  return v
}

/** A redirect URI a client may register: https, http on loopback (RFC 8252), or an app's own scheme. */
export function redirectUriProblem (uri: unknown): string | null {
  if (typeof uri !== 'string' || uri.length > 2048) return 'must be a URL of at most 2048 characters'
  let u: URL
  try { u = new URL(uri) } catch { return 'is not a URL' }
  if (u.hash !== '') return 'must not have a fragment'
  if (u.protocol === 'https:') return null
  if (u.protocol === 'http:') return ['localhost', '127.0.0.1', '[::1]'].includes(u.hostname) ? null : 'http is allowed on loopback only'
  return ['javascript:', 'data:', 'file:', 'blob:', 'vbscript:', 'about:'].includes(u.protocol) ? `${u.protocol} is not allowed` : null
}

function withQuery (uri: string, params: Record<string, string | null>): string {
  const u = new URL(uri)
  for (const [k, v] of Object.entries(params)) if (v !== null) u.searchParams.set(k, v)
  return u.href
}

function html (status: number, body: string): Reply {
  return { status, body: Buffer.from(body), headers: { 'content-type': 'text/html; charset=utf-8', 'cache-control': 'no-store', 'content-security-policy': "default-src 'none'; style-src 'unsafe-inline'" } }
}

export function addOAuthRoutes (router: Router, deps: OAuthRouteDeps): void {
  const { oauth, connections } = deps
  const resourceMetadata = async (): Promise<Reply> => ({
    status: 200,
    body: { resource: `${deps.base()}/mcp`, authorization_servers: [deps.base()], bearer_methods_supported: ['header'], resource_name: 'Hearth (the owner\'s personal data)' }
  })
  router.get('/.well-known/oauth-protected-resource', resourceMetadata, ACCESS)
  router.get('/.well-known/oauth-protected-resource/mcp', resourceMetadata, ACCESS)
  router.get('/.well-known/oauth-authorization-server', async () => ({
    status: 200,
    body: {
      issuer: deps.base(),
      authorization_endpoint: `${deps.base()}/authorize`,
      token_endpoint: `${deps.base()}/token`,
      registration_endpoint: `${deps.base()}/register`,
      revocation_endpoint: `${deps.base()}/revoke`,
      response_types_supported: ['code'],
      grant_types_supported: ['authorization_code', 'refresh_token'],
      code_challenge_methods_supported: ['S256'],
      token_endpoint_auth_methods_supported: ['none'],
      revocation_endpoint_auth_methods_supported: ['none']
    }
  }), ACCESS)

  router.post('/register', async (req) => {
    try {
      const meta = await req.json() as Record<string, unknown> | null
      if (meta === null || typeof meta !== 'object' || Array.isArray(meta)) throw new OAuthFailure('invalid_client_metadata', 'expected a JSON object')
      const uris = meta.redirect_uris
      if (!Array.isArray(uris) || uris.length === 0 || uris.length > 10) throw new OAuthFailure('invalid_redirect_uri', 'redirect_uris must list 1 to 10 URIs')
      for (const u of uris) {
        const problem = redirectUriProblem(u)
        if (problem !== null) throw new OAuthFailure('invalid_redirect_uri', `${JSON.stringify(String(u).slice(0, 100))} ${problem}`)
      }
      const name = typeof meta.client_name === 'string' ? meta.client_name.replace(/[\p{Cc}\p{Cf}]/gu, '').trim().slice(0, 100) : ''
      const client = await oauth.register({ clientName: name === '' ? 'Unnamed MCP client' : name, redirectUris: uris as string[] })
      return {
        status: 201,
        body: {
          client_id: client.clientId,
          client_id_issued_at: Math.floor(Date.parse(client.createdAt) / 1000),
          client_name: client.clientName,
          redirect_uris: client.redirectUris,
          token_endpoint_auth_method: 'none',
          grant_types: ['authorization_code', 'refresh_token'],
          response_types: ['code']
        },
        headers: { 'cache-control': 'no-store' }
      }
    } catch (err) { return oauthError(err) }
  }, ACCESS)

  router.get('/authorize', async (req) => {
    const q = req.url.searchParams
    const clientId = q.get('client_id') ?? ''
    const client = await oauth.client(clientId)
    const redirectUri = q.get('redirect_uri') ?? client?.redirectUris[0] ?? ''
    // never redirect to a URI the client did not register: such a request gets a page, not a redirect
    if (client === null || !client.redirectUris.includes(redirectUri)) return html(400, '<h1>Unknown client or redirect URI</h1><p>This authorization request names no client registered with this Hearth, or a redirect URI the client did not register.</p>')
    const state = q.get('state')
    const fail = (error: string, description: string): Reply => ({ status: 302, headers: { location: withQuery(redirectUri, { error, error_description: description, state, iss: deps.base() }), 'cache-control': 'no-store' } })
    if (q.get('response_type') !== 'code') return fail('unsupported_response_type', 'response_type must be code')
    const challenge = q.get('code_challenge') ?? ''
    if (q.get('code_challenge_method') !== 'S256' || !/^[A-Za-z0-9\-_]{43}$/.test(challenge)) return fail('invalid_request', 'PKCE with code_challenge_method=S256 is required')
    const resource = q.get('resource')
    if (resource !== null && resource.replace(/\/+$/, '') !== `${deps.base()}/mcp` && resource.replace(/\/+$/, '') !== deps.base()) return fail('invalid_target', `resource must be ${deps.base()}/mcp`)
    let scopes: string[] = []
    const scope = (q.get('scope') ?? '').trim()
    try { if (scope !== '') scopes = checkPatterns(scope.split(/\s+/), 'scope') } catch (err) { return fail('invalid_scope', (err as Error).message) }
    try {
      const { connection, request } = await connections.connect('http', client.clientId, { name: client.clientName, clientId: client.clientId, scopes })
      const flowBase = { clientId: client.clientId, redirectUri, codeChallenge: challenge, state, connectionId: connection.id }
      if (connection.status === 'active' && scopes.every((p) => patternWithin(p, connection.scopes))) {
        // approved before, nothing new asked: the code at once
        const code = oauth.code(flowBase)
        return { status: 302, headers: { location: withQuery(redirectUri, { code, state, iss: deps.base() }), 'cache-control': 'no-store' } }
      }
      const asked = request ?? await connections.pendingRequestOf(connection.id) ?? await connections.askMore(connection.id, scopes, null)
      const flow = oauth.startFlow({ ...flowBase, requestId: asked.id })
      return { status: 303, headers: { location: `/authorize/wait?flow=${flow.id}`, 'cache-control': 'no-store' } }
    } catch (err) {
      if (err instanceof OAuthFailure) return fail(err.error, err.message)
      if (err instanceof HearthError && err.status < 500) return fail(err.status === 429 ? 'temporarily_unavailable' : 'access_denied', `${err.code}: ${err.message}`)
      throw err
    }
  }, ACCESS)

  router.get('/authorize/wait', async (req) => {
    const flow = oauth.flow(req.url.searchParams.get('flow') ?? '')
    if (flow === null) return html(400, '<h1>This authorization expired</h1><p>Start again from the assistant.</p>')
    const request = flow.requestId === null ? null : await connections.getRequest(flow.requestId)
    const connection = await connections.get(flow.connectionId)
    const decided = request?.status ?? 'denied'
    if (decided === 'pending' && connection !== null && (connection.status === 'pending' || connection.status === 'active')) {
      return html(200, waitPage({ request: request!, clientName: connection.name, consent: await deps.consent(request!.scopes) }))
    }
    oauth.endFlow(flow.id)
    if (decided !== 'approved' || connection?.status !== 'active') {
      return { status: 302, headers: { location: withQuery(flow.redirectUri, { error: 'access_denied', error_description: 'the owner did not approve this assistant', state: flow.state, iss: deps.base() }), 'cache-control': 'no-store' } }
    }
    const code = oauth.code({ clientId: flow.clientId, redirectUri: flow.redirectUri, codeChallenge: flow.codeChallenge, connectionId: flow.connectionId })
    return { status: 302, headers: { location: withQuery(flow.redirectUri, { code, state: flow.state, iss: deps.base() }), 'cache-control': 'no-store' } }
  }, ACCESS)

  router.post('/token', async (req) => {
    try {
      const p = await form(req)
      const clientId = param(p, 'client_id', 64) ?? ''
      if (await oauth.client(clientId) === null) throw new OAuthFailure('invalid_client', 'unknown client_id')
      const grant = param(p, 'grant_type', 64)
      let issued
      if (grant === 'authorization_code') {
        issued = await oauth.exchangeCode(param(p, 'code', 256) ?? '', { clientId, redirectUri: param(p, 'redirect_uri'), verifier: param(p, 'code_verifier', 128) ?? '' })
      } else if (grant === 'refresh_token') {
        issued = await oauth.refresh(param(p, 'refresh_token', 256) ?? '', clientId)
      } else {
        throw new OAuthFailure('unsupported_grant_type', 'grant_type must be authorization_code or refresh_token')
      }
      const connection = await connections.get(issued.connectionId)
      if (connection?.status !== 'active') {
        await oauth.revokeConnection(issued.connectionId)
        throw new OAuthFailure('invalid_grant', 'the owner revoked this assistant\'s access')
      }
      return { status: 200, body: { ...issued.tokens, scope: connection.scopes.join(' ') }, headers: { 'cache-control': 'no-store', pragma: 'no-cache' } }
    } catch (err) { return oauthError(err) }
  }, ACCESS)

  router.post('/revoke', async (req) => {
    try {
      const token = param(await form(req), 'token', 256)
      if (token !== null) await oauth.revoke(token)
      return { status: 200, body: {}, headers: { 'cache-control': 'no-store' } }
    } catch (err) { return oauthError(err) }
  }, ACCESS)
}
