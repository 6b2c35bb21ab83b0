// Dashboard logins: a one-time link (`hearth ui`) is exchanged for a session cookie. Both live
// only in this process's memory, so a restarted daemon forgets them (the owner runs `hearth ui`
// again) and nothing about them is ever written to disk. Secrets are kept as SHA-256 digests:
// a lookup never compares a secret byte by byte, and a heap dump holds no usable cookie.
import { createHash, randomBytes } from 'node:crypto'

export interface SessionOptions {
  /** How long a login link stays usable (it is usable once). */
  linkTtlMs: number
  /** A session ends after this long without a request. */
  idleMs: number
  /** A session ends this long after login, used or not. */
  maxAgeMs: number
  /** Outstanding links and live sessions are bounded; the oldest go first. */
  maxLinks: number
  maxSessions: number
  now?: () => number
}

export const DEFAULT_SESSION_OPTIONS: SessionOptions = {
  linkTtlMs: 5 * 60_000,
  idleMs: 12 * 3600_000,
  maxAgeMs: 7 * 24 * 3600_000,
  maxLinks: 16,
  maxSessions: 32
}

export interface LoginLink { token: string; expiresAt: number }
export interface NewSession { id: string; maxAgeMs: number }

export interface SessionStore {
  /** A fresh one-time login token. */
  createLink (): LoginLink
  /** Spends a login token: a new session, or null when it is unknown, used or expired. */
  redeem (token: string): NewSession | null
  /** True when the cookie value names a live session (and refreshes its idle time). */
  touch (sessionId: string): boolean
  /** Ends a session (logout). */
  end (sessionId: string): void
  status (): { sessions: number; pendingLinks: number }
}

const digest = (secret: string): string => createHash('sha256').update(secret).digest('base64url')
const newSecret = (): string => randomBytes(32).toString('base64url')
const SECRET = /^[A-Za-z0-9_-]{43}$/

export function createSessionStore (options: Partial<SessionOptions> = {}): SessionStore {
  const opts = { ...DEFAULT_SESSION_OPTIONS, ...options }
  const now = opts.now ?? Date.now
  // Map iteration order is insertion order: the first entry is the oldest
  const links = new Map<string, number>()
  const sessions = new Map<string, { createdAt: number; lastSeen: number }>()

  function prune (): void {
    const t = now()
    for (const [k, expiresAt] of links) if (expiresAt <= t) links.delete(k)
    for (const [k, s] of sessions) if (t - s.lastSeen > opts.idleMs || t - s.createdAt > opts.maxAgeMs) sessions.delete(k)
  }

  function bound<V> (map: Map<string, V>, max: number): void {
    while (map.size > max) map.delete(map.keys().next().value as string)
  }

  return {
    createLink () {
      prune()
      const token = newSecret()
      const expiresAt = now() + opts.linkTtlMs
      links.set(digest(token), expiresAt)
      bound(links, opts.maxLinks)
      return { token, expiresAt }
    },
    redeem (token) {
      prune()
      if (!SECRET.test(token)) return null
      const key = digest(token)
      if (!links.has(key)) return null
      links.delete(key)
      const id = newSecret()
      const t = now()
      sessions.set(digest(id), { createdAt: t, lastSeen: t })
      bound(sessions, opts.maxSessions)
      return { id, maxAgeMs: opts.maxAgeMs }
    },
    touch (sessionId) {
      if (!SECRET.test(sessionId)) return false
      const key = digest(sessionId)
      const s = sessions.get(key)
      if (s === undefined) return false
      const t = now()
      if (t - s.lastSeen > opts.idleMs || t - s.createdAt > opts.maxAgeMs) { sessions.delete(key); return false }
      s.lastSeen = t
      return true
    },
    end (sessionId) {
      if (SECRET.test(sessionId)) sessions.delete(digest(sessionId))
    },
    status () {
      prune()
      return { sessions: sessions.size, pendingLinks: links.size }
    }
  }
}
