// The dashboard service: loads the shipped page, keeps the login sessions, and serves the
// dashboard listener on `ui.listen` through the API server (one route table, see listener.ts).
// A dashboard that cannot listen (the port is taken) is reported, and the daemon runs on.
import { parseListen } from '../api/listen.js'
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
  /** A one-time login link; throws CONFLICT when the dashboard is not listening. */
  loginLink (): { url: string; expiresAt: string }
  status (): { listening: boolean; url: string | null; sessions: number; error?: string }
}

export function createDashboard (deps: DashboardDeps): Dashboard {
  const sessions = createSessionStore(deps.sessions)
  const { host, port } = parseListen(deps.listen, 'ui.listen')
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
        failure = `cannot listen on ${deps.listen}: ${(err as Error).message}`
        deps.logger.warn({ listen: deps.listen, err: (err as Error).message }, 'dashboard not started')
        return
      }
      // port 0: the cookie name and the allowed Host values follow the port actually bound
      hosts = allowedHosts(host, boundPort)
      const shown = host.includes(':') ? `[${host}]` : host
      address = `http://${shown}:${boundPort}/`
    },
    url: () => address,
    loginLink () {
      if (address === null) throw new HearthError('CONFLICT', failure !== undefined ? `the dashboard is not running: ${failure}` : 'the dashboard is off (ui.enabled is false)')
      const link = sessions.createLink()
      return { url: `${address}login?token=${link.token}`, expiresAt: new Date(link.expiresAt).toISOString() }
    },
    status () {
      return { listening: address !== null, url: address, sessions: sessions.status().sessions, ...(failure !== undefined ? { error: failure } : {}) }
    }
  }
}
