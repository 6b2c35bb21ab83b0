// Health, status and raw storage reads.
import { HearthError } from '../../errors.js'
import type { FileIndex } from '../../db/file-index.js'
import type { StorageBackend } from '../../storage/types.js'
import { ok } from '../http.js'
import { HEARTH_VERSION } from '../../version.js'
import type { Router } from '../router.js'

/** A component's contribution to `GET /v1/status` (chain queue, sync peers, upstream, ...). */
export interface StatusPart {
  name: string
  read (): Promise<unknown>
}

export interface SystemRouteDeps {
  ownerAddress: string
  index: FileIndex
  storage: StorageBackend
  storageBackend: string
  parts: StatusPart[]
}

const CID_PATTERN = /^[a-zA-Z0-9]{10,120}$/

export function addSystemRoutes (router: Router, deps: SystemRouteDeps): void {
  const started = Date.now()
  router.get('/health', async () => ok({ status: 'ok', version: HEARTH_VERSION, owner: deps.ownerAddress, uptimeMs: Date.now() - started }))

  router.get('/v1/status', async () => {
    const [counts, rejected, waiting, storage] = await Promise.all([
      deps.index.countsByState(),
      deps.index.byState('rejected', { limit: 50 }),
      deps.index.byState('waiting-schema', { limit: 50 }),
      deps.storage.health()
    ])
    const body: Record<string, unknown> = {
      owner: deps.ownerAddress,
      files: { counts, total: Object.values(counts).reduce((a, b) => a + b, 0) },
      storage: { backend: deps.storageBackend, ...storage },
      rejected: rejected.map((r) => ({ path: r.path, errorCode: r.errorCode, reasons: r.reasons ?? [] })),
      waiting: waiting.map((r) => ({ path: r.path, scope: r.scope, reasons: r.reasons ?? [] }))
    }
    for (const part of deps.parts) {
      try {
        body[part.name] = await part.read()
      } catch (err) {
        body[part.name] = { error: (err as Error).message }
      }
    }
    return ok(body)
  })

  router.get('/v1/storage/:cid', async (req) => {
    const cid = req.params.cid!
    if (!CID_PATTERN.test(cid)) throw new HearthError('INVALID_ARGUMENT', 'not a CID')
    const bytes = await deps.storage.get(cid)
    return { status: 200, body: bytes, headers: { 'content-type': 'application/octet-stream' } }
  })
}
