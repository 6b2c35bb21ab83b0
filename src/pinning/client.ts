// A client of one IPFS Pinning Service API service (the vendor-neutral API that Pinata, Filebase,
// IPFS Cluster's pinsvc endpoint and others serve): POST /pins, GET /pins?cid=…, GET, POST
// (replace) and DELETE /pins/{requestid}, with `Authorization: Bearer <token>`.
//
// Every answer is hostile until checked: bodies are read with a byte cap, parsed, and shaped into
// PinStatus objects field by field (a status outside the four states, a missing requestid, a
// result list that is not a list: PINNING_BAD_RESPONSE). Every request has a deadline. 401/403 is
// PINNING_AUTH_REFUSED (the token, never echoed); a refused connection, a timeout or a 5xx is
// PINNING_UNAVAILABLE; the URL in messages never carries credentials.
import { HearthError } from '../errors.js'

export type RemotePinState = 'queued' | 'pinning' | 'pinned' | 'failed'
const REMOTE_STATES = new Set<string>(['queued', 'pinning', 'pinned', 'failed'])

export interface RemotePin {
  requestId: string
  status: RemotePinState
  cid: string
  /** Text the service gave about the pin (e.g. why it failed), bounded. */
  info: string | null
}

export interface PinRequest {
  cid: string
  name?: string
  /** Multiaddrs of peers that hold the content (the service's node connects to them). */
  origins?: string[]
  meta?: Record<string, string>
}

export interface PinningClient {
  readonly endpoint: string
  add (pin: PinRequest, signal?: AbortSignal): Promise<RemotePin>
  /** The service's pin requests for these CIDs (at most 10 per call, as the API allows). */
  byCids (cids: readonly string[], signal?: AbortSignal): Promise<RemotePin[]>
  get (requestId: string, signal?: AbortSignal): Promise<RemotePin | null>
  /**
   * Asks again for a pin that failed, in one step (`POST /pins/{requestid}`): the API's replace,
   * which never leaves the service without the pin as a remove followed by an add would. A request
   * the service no longer knows is added anew.
   */
  replace (requestId: string, pin: PinRequest, signal?: AbortSignal): Promise<RemotePin>
  /** Removes a pin request; one the service no longer knows is not an error. */
  remove (requestId: string, signal?: AbortSignal): Promise<void>
}

/** The API lets a client ask about at most 10 CIDs in one GET /pins. */
export const MAX_CIDS_PER_QUERY = 10
/** Larger answers are not the API's (a page of 1000 pin statuses is far below this). */
const MAX_RESPONSE_BYTES = 4 * 1024 * 1024
const MAX_INFO_CHARS = 300

export function createPinningClient (opts: { endpoint: string; token: string; timeoutMs: number; fetch?: typeof fetch }): PinningClient {
  // The API authenticates with the bearer token alone; credentials in the URL are dropped (fetch
  // refuses such URLs, and they would show up in messages).
  const base = displayEndpoint(opts.endpoint)
  const shown = base
  const doFetch = opts.fetch ?? fetch

  async function call (method: string, path: string, body: unknown, signal: AbortSignal | undefined, op: string): Promise<{ status: number; json: unknown }> {
    const deadline = AbortSignal.timeout(opts.timeoutMs)
    const combined = signal === undefined ? deadline : AbortSignal.any([signal, deadline])
    let res: Response
    try {
      res = await doFetch(base + path, {
        method,
        headers: { authorization: `Bearer ${opts.token}`, accept: 'application/json', ...(body !== undefined ? { 'content-type': 'application/json' } : {}) },
        body: body === undefined ? undefined : JSON.stringify(body),
        signal: combined,
        redirect: 'error'
      })
    } catch (err) {
      if (signal?.aborted === true) throw signal.reason
      const reason = deadline.aborted ? `did not answer ${op} within ${opts.timeoutMs} ms` : `is unreachable (${networkReason(err)})`
      throw new HearthError('PINNING_UNAVAILABLE', `the pinning service at ${shown} ${reason}`, { endpoint: shown, op })
    }
    let text: string
    try {
      text = await readCapped(res, MAX_RESPONSE_BYTES)
    } catch (err) {
      if (signal?.aborted === true) throw signal.reason
      if (err instanceof HearthError) throw err
      const reason = deadline.aborted ? `did not finish its answer to ${op} within ${opts.timeoutMs} ms` : `broke off its answer to ${op}`
      throw new HearthError('PINNING_UNAVAILABLE', `the pinning service at ${shown} ${reason}`, { endpoint: shown, op })
    }
    if (res.status === 401 || res.status === 403) {
      throw new HearthError('PINNING_AUTH_REFUSED', `the pinning service at ${shown} refused the access token (HTTP ${res.status}): check the token file`, { endpoint: shown, op, status: res.status })
    }
    if (res.status >= 500 || res.status === 429 || res.status === 408) {
      throw new HearthError('PINNING_UNAVAILABLE', `the pinning service at ${shown} failed ${op} (HTTP ${res.status}): ${reasonOf(text)}`, { endpoint: shown, op, status: res.status })
    }
    let json: unknown = null
    if (text.length > 0) {
      try { json = JSON.parse(text) } catch {
        throw new HearthError('PINNING_BAD_RESPONSE', `the pinning service at ${shown} answered ${op} with something that is not JSON (HTTP ${res.status})`, { endpoint: shown, op, status: res.status })
      }
    }
    return { status: res.status, json }
  }

  function fail (op: string, status: number, json: unknown): never {
    throw new HearthError('PINNING_BAD_RESPONSE', `the pinning service at ${shown} refused ${op} (HTTP ${status}): ${reasonOf(json)}`, { endpoint: shown, op, status })
  }

  async function add (pin: PinRequest, signal?: AbortSignal): Promise<RemotePin> {
    const { status, json } = await call('POST', '/pins', pin, signal, 'add')
    if (status !== 200 && status !== 202) fail('add', status, json)
    return pinStatus(json, shown)
  }

  return {
    endpoint: shown,
    add,
    async replace (requestId, pin, signal) {
      const { status, json } = await call('POST', `/pins/${encodeURIComponent(requestId)}`, pin, signal, 'replace')
      if (status === 404) return await add(pin, signal)
      if (status !== 200 && status !== 202) fail('replace', status, json)
      return pinStatus(json, shown)
    },
    async byCids (cids, signal) {
      if (cids.length === 0) return []
      if (cids.length > MAX_CIDS_PER_QUERY) throw new HearthError('INVALID_ARGUMENT', `at most ${MAX_CIDS_PER_QUERY} CIDs per query`)
      const query = new URLSearchParams({ cid: cids.join(','), limit: '1000', status: 'queued,pinning,pinned,failed' })
      const { status, json } = await call('GET', `/pins?${query.toString()}`, undefined, signal, 'list')
      if (status !== 200) fail('list', status, json)
      const results = (json as { results?: unknown } | null)?.results
      if (!Array.isArray(results)) throw new HearthError('PINNING_BAD_RESPONSE', `the pinning service at ${shown} answered a pin list without results`, { endpoint: shown })
      return results.map((r) => pinStatus(r, shown))
    },
    async get (requestId, signal) {
      const { status, json } = await call('GET', `/pins/${encodeURIComponent(requestId)}`, undefined, signal, 'get')
      if (status === 404) return null
      if (status !== 200) fail('get', status, json)
      return pinStatus(json, shown)
    },
    async remove (requestId, signal) {
      const { status, json } = await call('DELETE', `/pins/${encodeURIComponent(requestId)}`, undefined, signal, 'remove')
      if (status === 404 || status === 202 || status === 200 || status === 204) return
      fail('remove', status, json)
    }
  }
}

/** One PinStatus object, checked field by field. */
function pinStatus (value: unknown, shown: string): RemotePin {
  const v = value as { requestid?: unknown; status?: unknown; pin?: { cid?: unknown }; info?: unknown } | null
  const ok = v !== null && typeof v === 'object' &&
    typeof v.requestid === 'string' && v.requestid.length > 0 && v.requestid.length <= 512 &&
    typeof v.status === 'string' && REMOTE_STATES.has(v.status) &&
    typeof v.pin === 'object' && v.pin !== null && typeof v.pin.cid === 'string' && v.pin.cid.length <= 512
  if (!ok) throw new HearthError('PINNING_BAD_RESPONSE', `the pinning service at ${shown} answered something that is not a pin status`, { endpoint: shown })
  const info = v.info !== undefined && v.info !== null ? JSON.stringify(v.info).slice(0, MAX_INFO_CHARS) : null
  return { requestId: v.requestid as string, status: v.status as RemotePinState, cid: (v.pin as { cid: string }).cid, info }
}

/** The API's error shape is `{error: {reason, details}}`; anything else is shown bounded. */
function reasonOf (body: unknown): string {
  let parsed = body
  if (typeof body === 'string') { try { parsed = JSON.parse(body) } catch { return body.slice(0, 200).replace(/\s+/g, ' ') || 'no reason given' } }
  const e = (parsed as { error?: { reason?: unknown; details?: unknown } } | null)?.error
  if (e !== undefined && e !== null) return `${String(e.reason ?? '')}${e.details !== undefined ? `: ${String(e.details)}` : ''}`.slice(0, 300)
  return JSON.stringify(parsed ?? null).slice(0, 200)
}

async function readCapped (res: Response, max: number): Promise<string> {
  const declared = Number(res.headers.get('content-length') ?? '0')
  if (declared > max) {
    await res.body?.cancel()
    throw new HearthError('PINNING_BAD_RESPONSE', `a pinning service answered ${declared} bytes, more than ${max}`)
  }
  if (res.body === null) return ''
  const chunks: Uint8Array[] = []
  let length = 0
  for await (const chunk of res.body as AsyncIterable<Uint8Array>) {
    length += chunk.length
    if (length > max) throw new HearthError('PINNING_BAD_RESPONSE', `a pinning service answered more than ${max} bytes`)
    chunks.push(chunk)
  }
  return Buffer.concat(chunks).toString('utf8')
}

function networkReason (err: unknown): string {
  let e: unknown = err
  for (let depth = 0; depth < 4 && e != null; depth++) {
    const code = (e as { code?: unknown }).code
    if (typeof code === 'string') return code
    e = (e as { cause?: unknown }).cause
  }
  return 'fetch failed'
}

/** The endpoint as shown in messages and status: without user:password, query or fragment. */
export function displayEndpoint (endpoint: string): string {
  try {
    const u = new URL(endpoint)
    return `${u.protocol}//${u.host}${u.pathname.replace(/\/+$/, '')}`
  } catch {
    return '(invalid URL)'
  }
}
