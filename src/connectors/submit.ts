// Submits connector items through the daemon's socket: `POST /v1/data/{scope}?collectedAt=<iso>`
// with the data object as body, the same ingest pipeline and validation as any other file.
import { daemonRequest, type DaemonResponse } from '../client/daemon-client.js'
import { ERROR_CODES, HearthError, type ErrorCode } from '../errors.js'
import type { Submit, SubmitResult, SubmitStatus } from './types.js'

export function dataPath (scope: string, collectedAt: string): string {
  return `/v1/data/${encodeURIComponent(scope)}?collectedAt=${encodeURIComponent(collectedAt)}`
}

// A kept-alive connection to a daemon that stopped fails with these instead of ENOENT.
const CONNECTION_LOST = new Set(['EPIPE', 'ECONNRESET'])

export function daemonSubmit (opts: { socketPath: string; timeoutMs?: number }): Submit {
  const post = async (item: Parameters<Submit>[0]): Promise<DaemonResponse> => await daemonRequest(opts.socketPath, {
    method: 'POST',
    path: dataPath(item.scope, item.collectedAt),
    body: item.data,
    ...(opts.timeoutMs !== undefined ? { timeoutMs: opts.timeoutMs } : {})
  })
  return async (item) => {
    let res: DaemonResponse
    try {
      res = await post(item)
    } catch (first) {
      if (!connectionLost(first)) throw first
      // A kept-alive connection the daemon closed while the connector was busy (its idle timeout
      // is 5 s) is only noticed on use: one more try on a new connection. Safe: the same item
      // again is answered `duplicate`.
      try {
        res = await post(item)
      } catch (err) {
        if (!connectionLost(err)) throw err
        throw new HearthError('DAEMON_NOT_RUNNING', `lost the connection to the Hearth daemon (${String((err as NodeJS.ErrnoException).code)}); is it still running?`)
      }
    }
    return interpretDataResponse(res)
  }
}

function connectionLost (err: unknown): boolean {
  const code = (err as NodeJS.ErrnoException).code
  return code !== undefined && CONNECTION_LOST.has(code)
}

const STATUSES: readonly SubmitStatus[] = ['stored', 'duplicate', 'rejected', 'waiting-schema']
// Answers that say "this item cannot be stored" — the import records them and goes on. Every
// other failure (auth, identity missing, daemon errors) would fail every item alike, so it stops.
const ITEM_REJECTIONS = new Set([400, 404, 413, 415, 422])

/** Maps a daemon answer to a SubmitResult (pure); throws a HearthError for answers that must stop the import. */
export function interpretDataResponse (res: Pick<DaemonResponse, 'status' | 'json'>): SubmitResult {
  const body = res.json as Record<string, unknown> | undefined
  const path = typeof body?.path === 'string' ? body.path : undefined
  if (res.status >= 200 && res.status < 300) {
    const declared = STATUSES.find((s) => s === body?.status)
    const status: SubmitStatus = declared ?? (res.status === 202 ? 'waiting-schema' : res.status === 200 ? 'duplicate' : 'stored')
    return { status, ...(path !== undefined ? { path } : {}) }
  }
  const error = (body?.error ?? {}) as { errorCode?: unknown; message?: unknown; details?: { reasons?: unknown } }
  const errorCode = typeof error.errorCode === 'string' ? error.errorCode : `HTTP_${res.status}`
  const message = typeof error.message === 'string' ? error.message : `the daemon answered HTTP ${res.status}`
  if (ITEM_REJECTIONS.has(res.status)) {
    const reasons = Array.isArray(error.details?.reasons) && error.details.reasons.length > 0
      ? error.details.reasons.map(reasonText)
      : [`${errorCode}: ${message}`]
    return { status: 'rejected', reasons, errorCode }
  }
  const code: ErrorCode = errorCode in ERROR_CODES ? errorCode as ErrorCode : 'INTERNAL'
  throw new HearthError(code, `the daemon refused the item: ${message}`, { status: res.status, errorCode })
}

// Reasons are strings ("/posts/0/createdAt: must match format \"date-time\""); Ajv-style objects
// from another daemon version are turned into the same form.
function reasonText (r: unknown): string {
  if (typeof r === 'string') return r
  if (r !== null && typeof r === 'object') {
    const { instancePath, message } = r as { instancePath?: unknown; message?: unknown }
    if (typeof message === 'string') return typeof instancePath === 'string' && instancePath !== '' ? `${instancePath}: ${message}` : message
  }
  return JSON.stringify(r)
}
