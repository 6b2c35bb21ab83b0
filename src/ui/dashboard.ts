// The dashboard service: loads the shipped page, keeps the login sessions, and serves the
// dashboard listener on `ui.listen` through the API server (one route table, see listener.ts).
// A dashboard that cannot listen (the port is taken) is reported with the setting to change, and
// the daemon runs on. The route table is served before the dashboard listens: a login link asked
// for meanwhile answers DAEMON_STARTING (the CLI asks again), never "off".
import { HearthError } from '../errors.js'
import type { Logger } from '../log.js'
import type { ApiServer } from '../api/server.js'
import { loadAssets } from './assets.js'
import { dashboardListener } from './listener.js'
import { allowedHosts } from './request-guard.js'
import { createSessionStore, type SessionOptions } from './sessions.js'

export interface DashboardDeps {
  /** `ui.listen`: `host:port` on loopback (`[::1]:8470` for IPv6); port 0 picks a free one. */
  listen: string
  logger: Logger
  sessions?: Partial<SessionOptions>
}

export interface Dashboard {
  /** Serve the dashboard listener on the daemon's API server (the one route table). */
  start (api: Pick<ApiServer, 'listen'>): Promise<void>
  /** The dashboard's address (http://host:port/), or null when it is not listening. */
  url (): string | null
  /** A one-time login link; DAEMON_STARTING before the dashboard listens, CONFLICT when it could not. */
  loginLink (): { url: string; expiresAt: string }
  status (): { listening: boolean; url: string | null; sessions: number; error?: string }
}

export function parseListen (value: string): { host: string; port: number } {
  const m = /^(?:\[([0-9a-fA-F:]+)\]|([^:\s[\]]+)):(\d{1,5})$/.exec(value.trim())
  const port = m === null ? NaN : Number(m[3])
  if (m === null || port > 65535) throw new HearthError('CONFIG_INVALID', `ui.listen must be host:port on loopback (e.g. 127.0.0.1:8470), got ${JSON.stringify(value.slice(0, 80))}`, { key: 'ui.listen' })
  return { host: m[1] ?? m[2]!, port }
}

export function createDashboard (deps: DashboardDeps): Dashboard {
  const sessions = createSessionStore(deps.sessions)
  const { host, port } = parseListen(deps.listen)
  let hosts: ReadonlySet<string> = new Set()
  let address: string | null = null
  let failure: string | undefined

  return {
    async start (api) {
      const assets = await loadAssets()
      let boundPort = port
      const listener = dashboardListener({ sessions, assets, hosts: () => hosts, cookieName: () => `hearth_session_${boundPort}` })
      try {
        const bound = await api.listen(listener, { host, port, configKey: 'ui.listen' })
        boundPort = bound.port ?? port
      } catch (err) {
        if (err instanceof HearthError) throw err // a configuration mistake stops the daemon like any other
        failure = listenFailure(deps.listen, err as NodeJS.ErrnoException)
        deps.logger.warn({ listen: deps.listen, err: (err as Error).message }, `dashboard not started: ${failure}`)
        return
      }
      // port 0: the cookie name and the allowed Host values follow the port actually bound
      hosts = allowedHosts(host, boundPort)
      const shown = host.includes(':') ? `[${host}]` : host
      address = `http://${shown}:${boundPort}/`
    },
    url: () => address,
    loginLink () {
      if (failure !== undefined) throw new HearthError('CONFLICT', `the dashboard is not running: ${failure}`, { key: 'ui.listen' })
      if (address === null) {
        throw new HearthError('DAEMON_STARTING', 'the dashboard is still starting; ask again in 1 s', { starting: 'dashboard', retryAfterSeconds: 1 })
      }
      const link = sessions.createLink()
      return { url: `${address}login?token=${link.token}`, expiresAt: new Date(link.expiresAt).toISOString() }
    },
    status () {
      return { listening: address !== null, url: address, sessions: sessions.status().sessions, ...(failure !== undefined ? { error: failure } : {}) }
    }
  }
}

/** Why the dashboard could not listen, naming the setting that moves it. */
function listenFailure (listen: string, err: NodeJS.ErrnoException): string {
  const move = 'choose another with ui.listen (HEARTH_UI_LISTEN), e.g. 127.0.0.1:0 for any free port'
  if (err.code === 'EADDRINUSE') return `port ${listen} is taken (another program, or another daemon, listens there): ${move}`
  if (err.code === 'EACCES') return `not allowed to listen on ${listen} (a port under 1024?): ${move}`
  return `cannot listen on ${listen} (${err.message}): ${move}`
}
