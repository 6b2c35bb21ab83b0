// Personal data over the socket (docs/protocol.md §3.5): write a file of a scope, list scopes, read a
// version (latest, at-or-before a time, by on-chain file id), list versions, delete a scope.
import { HearthError } from '../../errors.js'
import type { FileIndex } from '../../db/file-index.js'
import type { FileRecord } from '../../db/types.js'
import type { StorageBackend } from '../../storage/types.js'
import type { Logger } from '../../log.js'
import { assertScope } from '../../protocol/scope.js'
import { collectedAtProblem } from '../../protocol/envelope.js'
import type { IngestPipeline } from '../../ingest/pipeline.js'
import { readEnvelope } from '../../ingest/read-back.js'
import { removeScope } from '../../ingest/remove-scope.js'
import { isJsonContentType, ok, type Reply } from '../http.js'
import { intParam, stringParam } from '../query.js'
import type { Router } from '../router.js'

export interface DataRouteDeps {
  dataDir: string
  index: FileIndex
  storage: StorageBackend
  pipeline: IngestPipeline
  masterKey: Uint8Array
  logger: Logger
  /** A scope was deleted: sync tells the other devices. */
  onScopeDeleted?: (scope: string) => void
}

const READABLE = ['stored', 'registered'] as const

export function versionView (r: FileRecord): Record<string, unknown> {
  return {
    collectedAt: r.collectedAt,
    schemaId: r.schemaId,
    url: r.cid === null ? null : `ipfs://${r.cid}`,
    fileId: r.fileId ?? null,
    state: r.state,
    path: r.path,
    size: r.size,
    origin: r.origin,
    ...(r.reasons !== undefined ? { reasons: r.reasons } : {}),
    ...(r.errorCode !== undefined ? { errorCode: r.errorCode } : {}),
    ...(r.supersededFileIds !== undefined ? { supersededFileIds: r.supersededFileIds } : {})
  }
}

/**
 * The version `?fileId=` / `?at=` / (latest) of a scope names; NOT_FOUND when there is none.
 * `foreignFile` decides what a fileId of another scope is (default: not found here).
 */
export async function findVersion (index: FileIndex, scope: string, url: URL, foreignFile?: (record: FileRecord) => HearthError): Promise<FileRecord> {
  const at = stringParam(url, 'at', 64)
  const fileId = stringParam(url, 'fileId', 80)
  let record: FileRecord | null
  if (fileId !== null) {
    if (!/^\d+$/.test(fileId)) throw new HearthError('INVALID_ARGUMENT', 'fileId must be a decimal number')
    record = await index.byFileId(fileId)
    if (record !== null && record.scope !== scope) {
      if (foreignFile !== undefined) throw foreignFile(record)
      record = null
    }
  } else if (at !== null) {
    const problem = collectedAtProblem(at)
    if (problem !== null) throw new HearthError('INVALID_ARGUMENT', `at ${problem}`)
    record = await index.atOrBefore(scope, at, { states: READABLE })
  } else {
    record = await index.latest(scope, { states: READABLE })
  }
  if (record === null) throw new HearthError('NOT_FOUND', `no stored file for ${scope}${at !== null ? ` at or before ${at}` : ''}${fileId !== null ? ` with fileId ${fileId}` : ''}`)
  return record
}

/** The envelope of a stored version, with its facts in x-hearth-* headers. */
export async function versionReply (deps: Pick<DataRouteDeps, 'dataDir' | 'storage' | 'masterKey'>, record: FileRecord): Promise<Reply> {
  const envelope = await readEnvelope(deps, record)
  return ok(envelope, 200, {
    'x-hearth-collected-at': record.collectedAt ?? '',
    'x-hearth-url': record.cid === null ? '' : `ipfs://${record.cid}`,
    'x-hearth-state': record.state,
    ...(record.fileId != null ? { 'x-hearth-file-id': record.fileId } : {})
  })
}

/** `GET /v1/data/{scope}/versions`: a page of versions (`limit`, `offset`, `order`). */
export async function listVersions (index: FileIndex, scope: string, url: URL): Promise<Record<string, unknown>> {
  const limit = intParam(url, 'limit', 100, 1000)
  const offset = intParam(url, 'offset', 0, 1_000_000_000)
  const order = url.searchParams.get('order') === 'asc' ? 'asc' : 'desc'
  const [versions, total] = await Promise.all([
    index.versions(scope, { limit, offset, order }),
    index.countVersions(scope)
  ])
  return { scope, total, limit, offset, versions: versions.map(versionView) }
}

export function addDataRoutes (router: Router, deps: DataRouteDeps): void {
  router.post('/v1/data/:scope', async (req): Promise<Reply> => {
    const scope = assertScope(req.params.scope)
    const collectedAt = stringParam(req.url, 'collectedAt', 64)
    if (collectedAt !== null) {
      const problem = collectedAtProblem(collectedAt)
      if (problem !== null) throw new HearthError('INVALID_ARGUMENT', `collectedAt ${problem}`)
    }
    // a large body waits for room before it is read: concurrent large POSTs are bounded in memory
    const declared = Number(req.raw.headers['content-length'])
    const result = await deps.pipeline.admit(Number.isSafeInteger(declared) && declared >= 0 ? declared : null, async () => {
      // a large body is encrypted (on a worker) while it arrives, and while it is parsed and validated here
      const early = isJsonContentType(req.raw.headers['content-type']) && Number.isSafeInteger(declared) ? await deps.pipeline.prepare(scope, declared, collectedAt ?? undefined) : null
      try {
        const body = await req.bytes({ envelopeRoom: true, ...(early !== null ? { into: early } : {}) })
        const started = early?.complete(body) === true ? early : null
        const data = await req.json()
        // the body's own bytes too: a large canonical body is stored as it came, not serialised again
        return await deps.pipeline.submit(scope, data, { json: body, early: started, ...(collectedAt === null ? {} : { collectedAt }) })
      } finally {
        // a body not stored (invalid, a client gone) leaves none of its ciphertext behind
        await early?.cancel()
      }
    })
    if (result.status === 'queued') {
      return ok({ scope: result.scope, collectedAt: result.collectedAt, status: 'queued', state: 'queued', path: result.path, reason: result.reason }, 202)
    }
    return ok({
      scope: result.scope,
      collectedAt: result.collectedAt,
      status: result.status,
      state: result.record.state,
      path: result.path,
      schemaId: result.record.schemaId,
      url: `ipfs://${result.record.cid ?? ''}`
    }, result.status === 'duplicate' ? 200 : 201)
  })

  router.get('/v1/data', async (req) => {
    const prefix = stringParam(req.url, 'scopePrefix', 128) ?? ''
    const limit = intParam(req.url, 'limit', 100, 1000)
    const offset = intParam(req.url, 'offset', 0, 1_000_000_000)
    const scopes = await deps.index.scopes({ prefix, limit, offset })
    return ok({ scopes, limit, offset })
  })

  router.get('/v1/data/:scope', async (req) => {
    const scope = assertScope(req.params.scope)
    return await versionReply(deps, await findVersion(deps.index, scope, req.url))
  })

  router.get('/v1/data/:scope/versions', async (req) => ok(await listVersions(deps.index, assertScope(req.params.scope), req.url)))

  router.delete('/v1/data/:scope', async (req) => {
    const scope = assertScope(req.params.scope)
    const result = await removeScope(deps, scope)
    if (result.deleted === 0) throw new HearthError('NOT_FOUND', `no data for scope ${scope}`)
    deps.onScopeDeleted?.(scope)
    return ok({ scope, ...result })
  })
}
