// The owner's upstream token: stored in <home>/identity/upstream-token.json (0600, written
// atomically), never logged, never returned to apps. The token is the upstream's JWT; only its
// `exp` claim is read (no signature check — verifying it is the upstream's job) so an expired
// token is reported as UPSTREAM_AUTH_EXPIRED before the upstream has to say it. A pasted token
// that is not a JWT has no known expiry and is used until the upstream rejects it.
import { mkdir, readFile, rename, rm, writeFile, chmod } from 'node:fs/promises'
import { join } from 'node:path'
import { randomUUID } from 'node:crypto'
import { HearthError } from '../errors.js'

export const TOKEN_FILE_NAME = 'upstream-token.json'

interface StoredToken {
  token: string
  /** ms since epoch; null when the token carries no readable exp. */
  expiresAt: number | null
  savedAt: number
  email?: string
}

export interface TokenInfo {
  present: boolean
  expiresAt: number | null
  expired: boolean
  email?: string
}

export interface CredentialStore {
  /** Store a token (replacing any previous one); returns what is known about it, never the token. */
  save (token: string, meta?: { email?: string }): Promise<TokenInfo>
  clear (): Promise<void>
  info (now?: number): Promise<TokenInfo>
  /** The token to send, or UPSTREAM_AUTH_MISSING / UPSTREAM_AUTH_EXPIRED. */
  bearer (now?: number): Promise<string>
}

/** The `exp` claim of a JWT in ms, or null when the token is not a JWT or has no numeric exp. */
export function jwtExpiryMs (token: string): number | null {
  const parts = token.split('.')
  if (parts.length !== 3 || parts[1] === undefined) return null
  try {
    const claims: unknown = JSON.parse(Buffer.from(parts[1], 'base64url').toString('utf8'))
    if (claims !== null && typeof claims === 'object' && typeof (claims as { exp?: unknown }).exp === 'number') {
      return Math.round((claims as { exp: number }).exp * 1000)
    }
  } catch { /* not a JWT payload: no known expiry */ }
  return null
}

/** Tokens go into an HTTP header: anything with whitespace or control characters is rejected. */
export function checkTokenSyntax (token: string): void {
  if (token.length === 0 || token.length > 16_384 || !/^[\x21-\x7e]+$/.test(token)) {
    throw new HearthError('INVALID_ARGUMENT', 'the token must be a non-empty string of printable characters without spaces')
  }
}

export function createCredentialStore (deps: { identityDir: string }): CredentialStore {
  const file = join(deps.identityDir, TOKEN_FILE_NAME)
  let cached: StoredToken | null | undefined

  async function load (): Promise<StoredToken | null> {
    if (cached !== undefined) return cached
    try {
      const parsed = JSON.parse(await readFile(file, 'utf8')) as Partial<StoredToken>
      cached = typeof parsed.token === 'string' && parsed.token.length > 0
        ? { token: parsed.token, expiresAt: typeof parsed.expiresAt === 'number' ? parsed.expiresAt : jwtExpiryMs(parsed.token), savedAt: parsed.savedAt ?? 0, ...(parsed.email !== undefined ? { email: parsed.email } : {}) }
        : null
    } catch {
      // No file, or a damaged one: no token; the owner logs in again.
      cached = null
    }
    return cached
  }

  function describe (t: StoredToken | null, now: number): TokenInfo {
    if (t === null) return { present: false, expiresAt: null, expired: false }
    return { present: true, expiresAt: t.expiresAt, expired: t.expiresAt !== null && t.expiresAt <= now, ...(t.email !== undefined ? { email: t.email } : {}) }
  }

  return {
    async save (token, meta = {}) {
      checkTokenSyntax(token)
      const record: StoredToken = { token, expiresAt: jwtExpiryMs(token), savedAt: Date.now(), ...(meta.email !== undefined ? { email: meta.email } : {}) }
      await mkdir(deps.identityDir, { recursive: true, mode: 0o700 })
      const tmp = `${file}.${randomUUID()}.tmp`
      await writeFile(tmp, JSON.stringify(record), { mode: 0o600 })
      await chmod(tmp, 0o600)
      await rename(tmp, file)
      cached = record
      return describe(record, Date.now())
    },
    async clear () {
      await rm(file, { force: true })
      cached = null
    },
    async info (now = Date.now()) {
      return describe(await load(), now)
    },
    async bearer (now = Date.now()) {
      const t = await load()
      if (t === null) throw new HearthError('UPSTREAM_AUTH_MISSING', 'not logged in to the conversation service; run `hearth login --email <address>` or `hearth login --token -`')
      if (t.expiresAt !== null && t.expiresAt <= now) {
        throw new HearthError('UPSTREAM_AUTH_EXPIRED', `the conversation service token expired at ${new Date(t.expiresAt).toISOString()}; run \`hearth login\` again`, { expiresAt: new Date(t.expiresAt).toISOString() })
      }
      return t.token
    }
  }
}
