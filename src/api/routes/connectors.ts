// GET /v1/connectors: the installed connectors and their scopes, with the labels a consent screen
// shows. Plugins are scanned on each request (a few small files), so a connector dropped into
// <home>/plugins shows up without a restart; their code is never run inside the daemon.
import type { Logger } from '../../log.js'
import { scanConnectors } from '../../connectors/loader.js'
import { listConnectorsBody } from '../../connectors/listing.js'
import { ok } from '../http.js'
import type { Router } from '../router.js'

export function addConnectorRoutes (router: Router, deps: { dirs: readonly string[]; logger?: Logger }): void {
  router.get('/v1/connectors', async () => ok(listConnectorsBody(await scanConnectors(deps.dirs, deps.logger !== undefined ? { logger: deps.logger } : {}))))
}
