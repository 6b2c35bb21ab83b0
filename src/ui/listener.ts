// The dashboard's listener: the owner's routes (the same ones the CLI calls over the socket) plus
// the page and its assets, on loopback TCP, for a browser holding a session cookie. Order of
// checks for every request: Host and Origin (request-guard.ts), then the login link, then the
// session cookie; nothing — not even a stylesheet — is served without a live session.
import type { IncomingMessage } from 'node:http'
import { HearthError } from '../errors.js'
import type { Reply } from '../api/http.js'
import type { Listener } from '../api/server.js'
import type { AssetTable, Asset } from './assets.js'
import type { SessionStore } from './sessions.js'
import { checkRequestOrigin } from './request-guard.js'

export interface DashboardListenerDeps {
  sessions: SessionStore
  assets: AssetTable
  /** The `host:port` names of this listener; known once it is bound (port 0 in tests). */
  hosts (): ReadonlySet<string>
  /** Distinguishes the cookies of two daemons on one machine (cookies ignore the port). */
  cookieName (): string
}

/** Access name of routes only a dashboard session may call (logout); owner routes are served too. */
export const DASHBOARD_ACCESS = 'dashboard'

export function sessionCookie (header: string | undefined, name: string): string | null {
  if (header === undefined) return null
  for (const part of header.split(';')) {
    const eq = part.indexOf('=')
    if (eq > 0 && part.slice(0, eq).trim() === name) return part.slice(eq + 1).trim()
  }
  return null
}

function html (status: number, title: string, text: string, headers: Record<string, string> = {}): Reply {
  const body = `<!doctype html><html lang="en"><head><meta charset="utf-8"><meta name="viewport" content="width=device-width,initial-scale=1"><title>${title}</title></head>` +
    `<body style="font:16px/1.5 system-ui,sans-serif;max-width:36rem;margin:3rem auto;padding:0 1rem;color:#1a1a1a;background:#fff"><h1 style="font-size:1.4rem">${title}</h1><p>${text}</p></body></html>`
  return { status, body: Buffer.from(body), headers: { 'content-type': 'text/html; charset=utf-8', 'cache-control': 'no-store', ...headers } }
}

function assetReply (req: IncomingMessage, asset: Asset): Reply {
  const headers = { 'content-type': asset.type, 'cache-control': 'no-cache', etag: asset.etag }
  if (req.headers['if-none-match'] === asset.etag) return { status: 304, headers }
  return { status: 200, body: asset.body, headers }
}

const LOGIN_HELP = 'Run <code>hearth ui</code> on this computer for a new one-time login link.'

export function dashboardListener (deps: DashboardListenerDeps): Listener {
  const { sessions, assets } = deps
  const cookieAttributes = 'HttpOnly; SameSite=Strict; Path=/'

  function hasSession (req: IncomingMessage): boolean {
    const id = sessionCookie(req.headers.cookie, deps.cookieName())
    return id !== null && sessions.touch(id)
  }

  return {
    name: 'dashboard',
    serves: ['owner', DASHBOARD_ACCESS],
    headers: () => ({
      'content-security-policy': assets.csp,
      'x-content-type-options': 'nosniff',
      'x-frame-options': 'DENY',
      'referrer-policy': 'no-referrer',
      'cross-origin-opener-policy': 'same-origin',
      'cross-origin-resource-policy': 'same-origin'
    }),
    intercept (req, url) {
      const method = (req.method ?? 'GET').toUpperCase()
      const refused = checkRequestOrigin({ method, host: req.headers.host, origin: req.headers.origin }, deps.hosts())
      if (refused !== null) throw refused
      if (url.pathname === '/login') {
        if (method !== 'GET' && method !== 'HEAD') throw new HearthError('METHOD_NOT_ALLOWED', `${method} is not allowed on /login`, { allow: ['GET', 'HEAD'] })
        const session = sessions.redeem(url.searchParams.get('token') ?? '')
        if (session === null) return html(401, 'This login link is not valid', `It was used already, it expired, or the daemon restarted since it was made. ${LOGIN_HELP}`)
        return {
          status: 303,
          headers: {
            location: '/',
            'cache-control': 'no-store',
            'set-cookie': `${deps.cookieName()}=${session.id}; Max-Age=${Math.floor(session.maxAgeMs / 1000)}; ${cookieAttributes}`
          }
        }
      }
      if (url.pathname === '/logout' && method === 'POST') {
        const id = sessionCookie(req.headers.cookie, deps.cookieName())
        if (id !== null) sessions.end(id)
        return { status: 204, headers: { 'set-cookie': `${deps.cookieName()}=; Max-Age=0; ${cookieAttributes}` } }
      }
      const page = url.pathname === '/' || url.pathname === '/index.html'
      const asset = page ? assets.page : assets.files.get(url.pathname === '/favicon.ico' ? '/assets/icon.svg' : url.pathname)
      if (asset === undefined) return null // the API: authenticate() checks the session
      if (method !== 'GET' && method !== 'HEAD') throw new HearthError('METHOD_NOT_ALLOWED', `${method} is not allowed on ${url.pathname}`, { allow: ['GET', 'HEAD'] })
      if (!hasSession(req)) {
        if (page) return html(401, 'Log in to Hearth', `This dashboard opens with a one-time login link. ${LOGIN_HELP}`)
        throw new HearthError('UI_SESSION_REQUIRED', 'no dashboard session; run `hearth ui` for a login link')
      }
      return assetReply(req, asset)
    },
    authenticate (req) {
      const id = sessionCookie(req.headers.cookie, deps.cookieName())
      if (id === null || !sessions.touch(id)) throw new HearthError('UI_SESSION_REQUIRED', 'no dashboard session; run `hearth ui` for a login link')
      return { access: ['owner', DASHBOARD_ACCESS], id: 'dashboard-session' }
    }
  }
}
