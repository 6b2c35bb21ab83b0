// Health, status and raw storage reads.
import { HearthError, isHearthError, unwrapHearthError } from '../../errors.js'
import type { FileIndex } from '../../db/file-index.js'
import type { StorageBackend } from '../../storage/types.js'
import { ok } from '../http.js'
import { HEARTH_VERSION } from '../../version.js'
import type { Router } from '../router.js'

export interface SystemRouteDeps {
  /** When the daemon started (uptime is counted from there). */
  startedAt?: number
  ownerAddress: string
  index: FileIndex
  storage: StorageBackend
  /** Stored files whose blocks the last check found missing (null: none, or not checked yet). */
  storageDamage?: () => { missing: number; checked: number; repair: string } | null
  /** The running services' own reports by name (storage, chain, sync, upstream, ingest, ...). */
  servicesStatus (): Promise<Record<string, unknown>>
}

const CID_PATTERN = /^[a-zA-Z0-9]{10,120}$/

export interface StartingRouteDeps {
  startedAt: number
  /** The owner's address once the identity is loaded. */
  owner (): string | null
  /** The parts started so far and the one starting now. */
  progress (): { started: string[]; starting: string | null }
}

/**
 * `/health` and `/v1/status` while the daemon starts (the first route table, served before the
 * index, storage or any feature is up): 200 with `status: "starting"` and what is starting now.
 */
export function addStartingRoutes (router: Router, deps: StartingRouteDeps): void {
  const starting = (): Record<string, unknown> => {
    const { started, starting } = deps.progress()
    return { status: 'starting', version: HEARTH_VERSION, owner: deps.owner(), uptimeMs: Date.now() - deps.startedAt, starting, started }
  }
  router.get('/health', async () => ok(starting()))
  router.get('/v1/status', async () => ok(starting()))
}

export function addSystemRoutes (router: Router, deps: SystemRouteDeps): void {
  const started = deps.startedAt ?? Date.now()
  // /health answers from memory only, so it answers whatever the index's state; a damaged index
  // or lost ciphertext makes it `degraded` (the daemon serves what the damage does not touch) and
  // says what to do.
  router.get('/health', async () => {
    const damage = deps.index.damage()
    const lost = deps.storageDamage?.() ?? null
    return ok({
      status: damage === null && lost === null ? 'ok' : 'degraded',
      version: HEARTH_VERSION,
      owner: deps.ownerAddress,
      uptimeMs: Date.now() - started,
      ...(damage !== null ? { index: { status: 'damaged', ...damage } } : {}),
      ...(lost !== null ? { storage: { status: 'damaged', ...lost } } : {})
    })
  })

  router.get('/v1/status', async () => {
    const [files, services] = await Promise.all([fileStatus(deps.index), deps.servicesStatus()])
    const damage = deps.index.damage()
    return ok({
      owner: deps.ownerAddress,
      index: damage === null ? { status: 'ok' } : { status: 'damaged', ...damage },
      ...files,
      ...services,
      process: processStatus()
    })
  })

  router.get('/v1/storage/:cid', async (req) => {
    const cid = req.params.cid!
    if (!CID_PATTERN.test(cid)) throw new HearthError('INVALID_ARGUMENT', 'not a CID')
    const bytes = await deps.storage.get(cid)
    return { status: 200, body: bytes, headers: { 'content-type': 'application/octet-stream' } }
  })
}

/**
 * The daemon process: its Node.js and the flags it runs with (bin/hearth.js sets them, see the
 * README's "Idle memory"), and its memory in bytes: resident, the V8 heap, memory outside it.
 */
function processStatus (): Record<string, unknown> {
  const { rss, heapTotal, heapUsed, external, arrayBuffers } = process.memoryUsage()
  return { pid: process.pid, node: process.version, flags: process.execArgv, memory: { rss, heapTotal, heapUsed, external, arrayBuffers } }
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
