// The OAuth 2.1 state of the assistants' listener: registered clients (RFC 7591, public clients
// with PKCE, kept in the database), authorization flows waiting for the owner and codes (in
// memory, short-lived, bounded), and tokens — stored only as their SHA-256, so a copy of the
// database gives no working token. Access tokens are short-lived; a refresh token is used once
// and replaced by the next (rotation); revoking a connection drops every token it holds.
import { createHash, randomBytes, timingSafeEqual } from 'node:crypto'
import type { HearthDatabase, Sublevel } from '../db/database.js'

export interface OAuthClient {
  clientId: string
  clientName: string
  redirectUris: string[]
  createdAt: string
}

export interface Flow {
  id: string
  clientId: string
  redirectUri: string
  codeChallenge: string
  state: string | null
  requestId: string | null
  connectionId: string
  expiresAt: number
}

interface StoredToken { kind: 'access' | 'refresh'; connectionId: string; clientId: string; expiresAt: number }
interface Code { clientId: string; redirectUri: string; codeChallenge: string; connectionId: string; expiresAt: number }

export interface TokenSet { access_token: string; token_type: 'Bearer'; expires_in: number; refresh_token: string }

export const MAX_CLIENTS = 1000
const MAX_FLOWS = 100
const MAX_CODES = 100
export const FLOW_MS = 10 * 60_000
const CODE_MS = 60_000
const REFRESH_MS = 30 * 86_400_000

export class OAuthFailure extends Error {
  constructor (readonly error: 'invalid_request' | 'invalid_client' | 'invalid_grant' | 'unsupported_grant_type' | 'invalid_client_metadata' | 'invalid_redirect_uri' | 'temporarily_unavailable', message: string) { super(message) }
}

function secret (prefix: string): string { return `${prefix}_${randomBytes(32).toString('base64url')}` }
function hash (token: string): string { return createHash('sha256').update(token).digest('hex') }

/** RFC 7636 S256: BASE64URL(SHA256(verifier)) equals the challenge. */
export function pkceMatches (verifier: string, challenge: string): boolean {
  if (!/^[A-Za-z0-9\-._~]{43,128}$/.test(verifier)) return false
  const computed = Buffer.from(createHash('sha256').update(verifier).digest('base64url'))
  const given = Buffer.from(challenge)
  return computed.length === given.length && timingSafeEqual(computed, given)
}

function prune<V extends { expiresAt: number }> (map: Map<string, V>, now: number): void {
  for (const [k, v] of map) if (v.expiresAt <= now) map.delete(k)
}

export function openOAuthStore (db: HearthDatabase, opts: { accessTokenSeconds: number }) {
  const clients: Sublevel<OAuthClient> = db.sublevel(['assistants', 'oauth-clients'])
  const tokens: Sublevel<StoredToken> = db.sublevel(['assistants', 'oauth-tokens'])
  const flows = new Map<string, Flow>()
  const codes = new Map<string, Code>()

  async function issue (connectionId: string, clientId: string): Promise<TokenSet> {
    const access = secret('hat')
    const refresh = secret('hrt')
    const now = Date.now()
    await db.batch([
      { type: 'put', sublevel: tokens, key: hash(access), value: { kind: 'access', connectionId, clientId, expiresAt: now + opts.accessTokenSeconds * 1000 } },
      { type: 'put', sublevel: tokens, key: hash(refresh), value: { kind: 'refresh', connectionId, clientId, expiresAt: now + REFRESH_MS } }
    ])
    return { access_token: access, token_type: 'Bearer', expires_in: opts.accessTokenSeconds, refresh_token: refresh }
  }

  return {
    async register (client: Omit<OAuthClient, 'clientId' | 'createdAt'>): Promise<OAuthClient> {
      if ((await clients.keys({ limit: MAX_CLIENTS }).all()).length >= MAX_CLIENTS) throw new OAuthFailure('temporarily_unavailable', `${MAX_CLIENTS} clients are registered already`)
      const record: OAuthClient = { clientId: secret('hcl').slice(0, 36), createdAt: new Date().toISOString(), ...client }
      await clients.put(record.clientId, record)
      return record
    },
    async client (clientId: string): Promise<OAuthClient | null> {
      if (clientId.length > 64) return null
      return (await clients.get(clientId)) ?? null
    },

    startFlow (flow: Omit<Flow, 'id' | 'expiresAt'>): Flow {
      const now = Date.now()
      prune(flows, now)
      if (flows.size >= MAX_FLOWS) throw new OAuthFailure('temporarily_unavailable', 'too many authorizations are waiting for the owner; try again later')
      const started: Flow = { ...flow, id: randomBytes(18).toString('base64url'), expiresAt: now + FLOW_MS }
      flows.set(started.id, started)
      return started
    },
    flow (id: string): Flow | null {
      const f = flows.get(id)
      return f === undefined || f.expiresAt <= Date.now() ? null : f
    },
    endFlow (id: string): void { flows.delete(id) },

    /** A one-time code for an approved flow's connection. */
    code (c: Omit<Code, 'expiresAt'>): string {
      const now = Date.now()
      prune(codes, now)
      if (codes.size >= MAX_CODES) throw new OAuthFailure('temporarily_unavailable', 'too many codes are waiting to be exchanged')
      const code = secret('hco')
      codes.set(hash(code), { ...c, expiresAt: now + CODE_MS })
      return code
    },
    /** The tokens for a code, once: the client, redirect URI and PKCE verifier must be the flow's. */
    async exchangeCode (code: string, given: { clientId: string; redirectUri: string | null; verifier: string }): Promise<{ connectionId: string; tokens: TokenSet }> {
      const key = hash(code)
      const found = codes.get(key)
      codes.delete(key) // one attempt per code, right or wrong
      if (found === undefined || found.expiresAt <= Date.now()) throw new OAuthFailure('invalid_grant', 'the code is unknown, used or expired')
      if (found.clientId !== given.clientId) throw new OAuthFailure('invalid_grant', 'the code was issued to another client')
      if (given.redirectUri !== null && given.redirectUri !== found.redirectUri) throw new OAuthFailure('invalid_grant', 'redirect_uri differs from the authorization request\'s')
      if (!pkceMatches(given.verifier, found.codeChallenge)) throw new OAuthFailure('invalid_grant', 'code_verifier does not match the code_challenge')
      return { connectionId: found.connectionId, tokens: await issue(found.connectionId, found.clientId) }
    },
    /** Rotation: the refresh token is spent and a new pair issued. */
    async refresh (refreshToken: string, clientId: string): Promise<{ connectionId: string; tokens: TokenSet }> {
      const key = hash(refreshToken)
      const found = await tokens.get(key)
      if (found === undefined || found.kind !== 'refresh' || found.expiresAt <= Date.now() || found.clientId !== clientId) throw new OAuthFailure('invalid_grant', 'the refresh token is unknown, used, expired or another client\'s')
      await tokens.del(key)
      return { connectionId: found.connectionId, tokens: await issue(found.connectionId, found.clientId) }
    },
    /** The connection an access token stands for, or null (unknown or expired). */
    async accessConnection (token: string): Promise<string | null> {
      if (token.length > 128) return null
      const found = await tokens.get(hash(token))
      if (found === undefined || found.kind !== 'access') return null
      if (found.expiresAt <= Date.now()) { await tokens.del(hash(token)); return null }
      return found.connectionId
    },
    /** RFC 7009: the token (access or refresh) is gone; unknown ones are no error. */
    async revoke (token: string): Promise<void> {
      if (token.length <= 128) await tokens.del(hash(token))
    },
    /** Every token of a connection (and the expired ones met on the way) is dropped. */
    async revokeConnection (connectionId: string): Promise<void> {
      const now = Date.now()
      const drop: string[] = []
      for await (const [key, t] of tokens.iterator()) if (t.connectionId === connectionId || t.expiresAt <= now) drop.push(key)
      if (drop.length > 0) await db.batch(drop.map((key) => ({ type: 'del' as const, sublevel: tokens, key })))
    }
  }
}

export type OAuthStore = ReturnType<typeof openOAuthStore>
