// The owner's listeners (the unix socket or systemd's, and the optional loopback TCP listener with
// a bearer token) as one service. They start before any other part with the first route table
// (`/health`, `/v1/status` saying what is starting); `serve` hands them the daemon's full API once
// its parts are up, and requests that came meanwhile wait at the starting gate (api/starting.ts).
import type { HomeLayout } from '../home.js'
import type { Logger } from '../log.js'
import type { HearthConfig } from '../config/types.js'
import { service, type Service } from '../lifecycle/service.js'
import { createApiServer, systemdListenFd, type ApiServer, type RouteTable } from '../api/server.js'
import { Router } from '../api/router.js'
import { addStartingRoutes, type StartingRouteDeps } from '../api/routes/system.js'
import { createStartingGate } from '../api/starting.js'
import { loadOrCreateApiToken } from './api-token.js'

export interface OwnerListenersDeps {
  config: HearthConfig
  home: HomeLayout
  env: NodeJS.ProcessEnv
  /** What `/health` and `/v1/status` report until the full API serves. */
  starting: StartingRouteDeps
  /** How long a request for a part that is not up yet waits before DAEMON_STARTING. */
  waitMs: number
  logger: Logger
  print: (line: string) => void
}

export interface OwnerListeners extends Service {
  /** Where other listeners (the builders', the dashboard) mount their route sets. */
  readonly server: ApiServer
  /** Where the API listens, once started (null: systemd's socket, or no TCP listener). */
  readonly socketPath: string | null
  readonly tcpPort: number | null
  /** Serve the daemon's full API from now on; requests waiting for it go on. */
  serve (table: RouteTable): void
  /** The start failed: requests waiting for the full API get `err`. */
  failed (err: unknown): void
}

export function ownerListeners (deps: OwnerListenersDeps): OwnerListeners {
  const { config, home } = deps
  const gate = createStartingGate({ waitMs: deps.waitMs, starting: () => deps.starting.progress().starting })
  const router = new Router()
  addStartingRoutes(router, deps.starting)
  const api = createApiServer({ router, mounts: [], maxBodyBytes: config.api.maxBodyBytes, maxJsonValues: config.ingest.maxJsonValues, logger: deps.logger, starting: gate })
  let socketPath: string | null = null
  let tcpPort: number | null = null
  const lifecycle = service('api', {
    async start () {
      const inheritedFd = systemdListenFd(deps.env)
      if (inheritedFd !== null) {
        await api.listenFd(inheritedFd)
        deps.print('listening on the socket passed by systemd')
      } else {
        await api.listenUnix(home.socket)
        socketPath = home.socket
      }
      if (config.api.tcp.enabled) {
        const token = await loadOrCreateApiToken(home)
        tcpPort = (await api.listenTcp(config.api.tcp.host, config.api.tcp.port, token)).port
        deps.print(`TCP listener on ${config.api.tcp.host}:${tcpPort} (bearer token in ${home.identity}/api-token)`)
      }
    },
    async stop () { await api.close() }
  })
  return {
    ...lifecycle,
    server: api,
    get socketPath () { return socketPath },
    get tcpPort () { return tcpPort },
    serve (table) {
      api.serve(table)
      gate.opened()
    },
    failed: (err) => { gate.failed(err) }
  }
}
