// GET /v1/connectors: the installed connectors and their scopes, with the labels a consent screen
// shows. Plugins are scanned on each request (a few small files), so a connector dropped into
// <home>/plugins shows up without a restart; their code is never run inside the daemon.
import type { Router } from '../api/router.js'
import { ok } from '../api/http.js'
import type { Logger } from '../log.js'
import { scanConnectors } from './loader.js'
import type { ConnectorMetadata, ConnectorScope, PluginError } from './types.js'

export interface ConnectorsBody {
  connectors: Array<{ connectorId: string; displayName: string; version: string; scopes: ConnectorScope[] }>
  errors: PluginError[]
}

/** The body of `GET /v1/connectors` and of `hearth connectors --json`. */
export function listConnectorsBody (found: { connectors: ReadonlyArray<{ metadata: ConnectorMetadata }>; errors: readonly PluginError[] }): ConnectorsBody {
  return {
    connectors: found.connectors.map(({ metadata: m }) => ({
      connectorId: m.connectorId,
      displayName: m.displayName,
      version: m.version,
      scopes: m.scopes.map((s) => ({ scope: s.scope, label: s.label, description: s.description }))
    })),
    errors: found.errors.map((e) => ({ id: e.id, code: e.code, message: e.message }))
  }
}

export function addConnectorRoutes (router: Router, deps: { dirs: readonly string[]; logger?: Logger }): void {
  router.get('/v1/connectors', async () => ok(listConnectorsBody(await scanConnectors(deps.dirs, deps.logger !== undefined ? { logger: deps.logger } : {}))))
}
