// Health, status and raw storage reads.
import { HearthError, isHearthError, unwrapHearthError } from '../../errors.js'
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
  // /health answers from memory only, so it answers whatever the index's state; a damaged index
  // makes it `degraded` (the daemon serves what the damage does not touch) and says what to do.
  router.get('/health', async () => {
    const damage = deps.index.damage()
    return ok({
      status: damage === null ? 'ok' : 'degraded',
      version: HEARTH_VERSION,
      owner: deps.ownerAddress,
      uptimeMs: Date.now() - started,
      ...(damage !== null ? { index: { status: 'damaged', ...damage } } : {})
    })
  })

  router.get('/v1/status', async () => {
    const [files, services] = await Promise.all([fileStatus(deps.index), deps.servicesStatus()])
    const damage = deps.index.damage()
    return ok({
      owner: deps.ownerAddress,
      index: damage === null ? { status: 'ok' } : { status: 'damaged', ...damage },
      ...files,
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

/** Counts, rejected and waiting files; null fields when the index is too damaged to tell (its status says why). */
async function fileStatus (index: FileIndex): Promise<Record<string, unknown>> {
  try {
    const [counts, rejected, waiting] = await Promise.all([
      index.countsByState(),
      index.byState('rejected', { limit: 50 }),
      index.byState('waiting-schema', { limit: 50 })
    ])
    return {
      files: { counts, total: Object.values(counts).reduce((a, b) => a + b, 0) },
      rejected: rejected.map((r) => ({ path: r.path, errorCode: r.errorCode, reasons: r.reasons ?? [] })),
      waiting: waiting.map((r) => ({ path: r.path, scope: r.scope, reasons: r.reasons ?? [] }))
    }
  } catch (err) {
    if (!isHearthError(unwrapHearthError(err), 'INDEX_CORRUPT')) throw err
    return { files: null, rejected: null, waiting: null }
  }
}
