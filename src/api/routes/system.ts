// Health, status and raw storage reads.
import { HearthError } from '../../errors.js'
import type { FileIndex } from '../../db/file-index.js'
import type { StorageBackend } from '../../storage/types.js'
import { ok } from '../http.js'
import { HEARTH_VERSION } from '../../version.js'
import type { Router } from '../router.js'

export interface SystemRouteDeps {
  ownerAddress: string
  index: FileIndex
  storage: StorageBackend
  /** The running services' own reports by name (storage, chain, sync, upstream, ingest, ...). */
  servicesStatus (): Promise<Record<string, unknown>>
}

const CID_PATTERN = /^[a-zA-Z0-9]{10,120}$/

export function addSystemRoutes (router: Router, deps: SystemRouteDeps): void {
  const started = Date.now()
  router.get('/health', async () => ok({ status: 'ok', version: HEARTH_VERSION, owner: deps.ownerAddress, uptimeMs: Date.now() - started }))

  router.get('/v1/status', async () => {
    const [counts, rejected, waiting, services] = await Promise.all([
      deps.index.countsByState(),
      deps.index.byState('rejected', { limit: 50 }),
      deps.index.byState('waiting-schema', { limit: 50 }),
      deps.servicesStatus()
    ])
    return ok({
      owner: deps.ownerAddress,
      files: { counts, total: Object.values(counts).reduce((a, b) => a + b, 0) },
      rejected: rejected.map((r) => ({ path: r.path, errorCode: r.errorCode, reasons: r.reasons ?? [] })),
      waiting: waiting.map((r) => ({ path: r.path, scope: r.scope, reasons: r.reasons ?? [] })),
      ...services
    })
  })

  router.get('/v1/storage/:cid', async (req) => {
    const cid = req.params.cid!
    if (!CID_PATTERN.test(cid)) throw new HearthError('INVALID_ARGUMENT', 'not a CID')
    const bytes = await deps.storage.get(cid)
    return { status: 200, body: bytes, headers: { 'content-type': 'application/octet-stream' } }
  })
}
