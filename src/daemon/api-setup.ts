// The owner's API: one router with every route set and the upstream proxy's raw mounts (served by
// the owner's listeners, owner-listeners.ts, once the parts are up), and the services of the other
// listeners on the same server (the builders', the dashboard's) and of import jobs.
import type { HomeLayout } from '../home.js'
import type { Logger } from '../log.js'
import type { HearthConfig } from '../config/types.js'
import type { ConfigSource, ConfigSources } from '../config/resolve.js'
import type { FileIndex } from '../db/file-index.js'
import type { StorageBackend } from '../storage/types.js'
import type { IngestPipeline } from '../ingest/pipeline.js'
import type { SyncControl } from '../sync/service.js'
import type { HearthEventHub } from '../lifecycle/events.js'
import { service, type Service } from '../lifecycle/service.js'
import type { ApiServer, RouteTable } from '../api/server.js'
import { Router } from '../api/router.js'
import { addDataRoutes } from '../api/routes/data.js'
import { addSchemaRoutes } from '../api/routes/schemas.js'
import { addSyncRoutes } from '../api/routes/sync.js'
import { addPinRoutes, type PinRouteDeps } from '../api/routes/pins.js'
import { addSystemRoutes, type SystemRouteDeps } from '../api/routes/system.js'
import { addConfigRoutes } from '../api/routes/config.js'
import { addUpstreamRoutes } from '../api/routes/upstream.js'
import { addImageRoutes } from '../api/routes/images.js'
import { addConversationRoutes } from '../api/routes/conversations.js'
import { addImportRoutes } from '../api/routes/imports.js'
import { addUiRoutes } from '../api/routes/ui.js'
import { addSearchRoutes } from '../api/routes/search.js'
import type { Search } from '../search/types.js'
import type { ImportJobs } from '../connectors/import-jobs.js'
import type { Dashboard } from '../ui/dashboard.js'
import type { Builders } from '../builders/index.js'
import type { Assistants } from '../assistants/index.js'
import { addConnectorRoutes } from '../api/routes/connectors.js'
import { connectorDirs } from '../connectors/loader.js'
import type { Proxy } from '../proxy/index.js'
import { PROXY_MOUNT_PREFIXES } from '../proxy/basics.js'
import type { SchemaSetup } from './schemas-setup.js'

export interface OwnerApiDeps {
  /** When the daemon started (`/health`'s uptime). */
  startedAt: number
  config: HearthConfig
  configSources: Record<string, ConfigSource>
  configAmbient: Omit<ConfigSources, 'file'>
  home: HomeLayout
  env: NodeJS.ProcessEnv
  ownerAddress: string
  masterKey: Uint8Array
  index: FileIndex
  storage: StorageBackend
  /** Stored files whose blocks the last check found missing, for `/health`. */
  storageDamage?: SystemRouteDeps['storageDamage']
  pipeline: IngestPipeline
  schemas: Pick<SchemaSetup, 'registry' | 'serving' | 'shipped'>
  sync: SyncControl
  pinning: PinRouteDeps
  proxy: Proxy
  importJobs: ImportJobs
  /** The owner's builder routes (requests, grants, access log) and the builders' own routes. */
  builders: Pick<Builders, 'addRoutes'>
  /** The owner's assistants routes and `hearth mcp`'s relay endpoint. */
  assistants: Pick<Assistants, 'addRoutes' | 'ownerMount'>
  /** Null when `ui.enabled` is false. */
  dashboard: Dashboard | null
  /** The search over the owner's data (`GET /v1/search`). */
  search: Search
  events: HearthEventHub
  /** The status report of the running services, for `GET /v1/status`. */
  servicesStatus (): Promise<Record<string, unknown>>
  logger: Logger
}

/** The owner's whole API: every route set and the upstream proxy's raw mounts. */
export function ownerApi (deps: OwnerApiDeps): RouteTable {
  return { router: ownerRouter(deps), mounts: [...PROXY_MOUNT_PREFIXES.map((prefix) => ({ prefix, handle: deps.proxy.handle })), deps.assistants.ownerMount] }
}

function ownerRouter (deps: OwnerApiDeps): Router {
  const { home, index, storage, logger, events } = deps
  const router = new Router()
  addDataRoutes(router, { dataDir: home.data, index, storage, pipeline: deps.pipeline, masterKey: deps.masterKey, logger, onScopeDeleted: (scope) => events.emit('scope.deleted', { scope }) })
  addSyncRoutes(router, deps.sync)
  addSearchRoutes(router, deps.search)
  addPinRoutes(router, deps.pinning)
  addSchemaRoutes(router, { registry: deps.schemas.registry, serving: deps.schemas.serving, shipped: deps.schemas.shipped, storage, logger, onSchemaAdded: (schema) => events.emit('schema.added', schema) })
  addSystemRoutes(router, { startedAt: deps.startedAt, ownerAddress: deps.ownerAddress, index, storage, ...(deps.storageDamage !== undefined ? { storageDamage: deps.storageDamage } : {}), servicesStatus: deps.servicesStatus })
  addConfigRoutes(router, { configFile: home.config, running: { config: deps.config, sources: deps.configSources }, ambient: deps.configAmbient, logger })
  addConnectorRoutes(router, { dirs: connectorDirs(home), logger })
  addImportRoutes(router, { jobs: deps.importJobs })
  deps.builders.addRoutes(router)
  deps.assistants.addRoutes(router)
  addUiRoutes(router, { dashboard: deps.dashboard })
  addUpstreamRoutes(router, deps.proxy)
  addImageRoutes(router, deps.proxy)
  addConversationRoutes(router, deps.proxy)
  return router
}

/** Imports of uploaded exports (the dashboard's), run by connectors in a child process. */
export function importJobsService (jobs: ImportJobs): Service & { readonly jobs: ImportJobs } {
  return { ...service('imports', { start: async () => { await jobs.start() }, stop: async () => { await jobs.stop() } }), jobs }
}

/** The dashboard's listener on the API server, when `ui.enabled`; it closes with the API. */
export function dashboardService (dashboard: Dashboard | null, server: Pick<ApiServer, 'listen'>, print: (line: string) => void): Service {
  return service('dashboard', {
    async start () {
      if (dashboard === null) return
      await dashboard.start(server)
      const url = dashboard.url()
      print(url !== null ? `dashboard ${url}  (\`hearth ui\` prints a login link)` : `dashboard not started: ${dashboard.status().error ?? ''}`)
    },
    status: async () => dashboard?.status() ?? { listening: false, note: 'ui.enabled is false' }
  })
}

/** The builder side: access-log pruning, the grant relay and, when `builders.listen` is set, the builder listener. */
export function buildersService (builders: Builders, server: ApiServer, print: (line: string) => void): Service & { readonly port: number | null } {
  let port: number | null = null
  return {
    ...service('builders', {
      async start () {
        const listener = await builders.start(server)
        port = listener.port
        if (port !== null) print(`builders  ${listener.audience ?? ''}  (port ${port})`)
      },
      stop: async () => { await builders.stop() },
      status: async () => await builders.status()
    }),
    get port () { return port }
  }
}

/** The assistants' side: MCP sessions, and the `/mcp` listener with OAuth when `mcp.listen` is set. */
export function assistantsService (assistants: Assistants, server: ApiServer, print: (line: string) => void): Service {
  return service('assistants', {
    async start () {
      const url = await assistants.start(server)
      if (url !== null) print(`mcp       ${url}/mcp`)
    },
    stop: async () => { await assistants.stop() },
    status: async () => await assistants.status()
  })
}
