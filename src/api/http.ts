// Request/response plumbing shared by every route: bounded JSON bodies, the one error shape,
// and the `{status, body, headers}` reply contract that keeps handlers free of raw response handling.
import type { IncomingMessage, ServerResponse } from 'node:http'
import { HearthError, toErrorBody } from '../errors.js'
import { MAX_DATA_DEPTH, parseBoundedJsonBytes } from '../protocol/bounded-json.js'
import { withEnvelopeRoom } from '../protocol/envelope.js'
import { copyIntoShared } from './shared-copy.js'
import type { Access } from './router.js'

export interface Reply {
  status: number
  body?: unknown
  headers?: Record<string, string>
}

/** Who is calling, as the listener's authentication established it. */
export interface Caller {
  /** The access names the caller holds; a route answers when it shares one with them. */
  access: readonly Access[]
  /** Who, for handlers and logs (a builder's id, a session's id); never a secret. */
  id?: string
}

export interface ApiRequest {
  method: string
  url: URL
  params: Record<string, string>
  raw: IncomingMessage
  /** The caller, authenticated by the listener the request came in on. */
  caller: Caller
  /** The listener's name (`owner`, `owner-tcp`, `builder`, …). */
  listener: string
  /** The body parsed as JSON, after the content-type and size checks. */
  json (): Promise<unknown>
  /**
   * The raw body bytes, after the size check (read once; the listener's auth may have read it).
   * `envelopeRoom`: read a large body with room for a data file's envelope around it (readBody),
   * for the one route that stores a body as a data file; it applies when this read is the first.
   */
  bytes (opts?: { envelopeRoom?: boolean; into?: BodyRoom }): Promise<Buffer>
}

export type Handler = (req: ApiRequest) => Promise<Reply>

export function ok (body: unknown, status = 200, headers?: Record<string, string>): Reply {
  return headers === undefined ? { status, body } : { status, body, headers }
}

/** Memory a body of exactly `room.byteLength` bytes is read into, told as each part is there. */
export interface BodyRoom {
  room: Buffer
  received (bytes: number): void
}

/**
 * The request body within `maxBytes`. `envelopeRoom`: a body over 256 KiB is read into shared
 * memory with room for a data file's envelope around it (`POST /v1/data`: a large POST's envelope
 * is then built without copying it; one without a declared length is joined there at its end);
 * any other body stays in ordinary memory. `into`: read into
 * that room instead (its encryption may start while the body arrives) when the declared length is
 * its length.
 */
export function readBody (req: IncomingMessage, maxBytes: number, opts: { envelopeRoom?: boolean; into?: BodyRoom } = {}): Promise<Buffer> {
  const declared = Number(req.headers['content-length'])
  if (Number.isFinite(declared) && declared > maxBytes) {
    req.resume()
    return Promise.reject(new HearthError('BODY_TOO_LARGE', `request body is ${declared} bytes; the limit is ${maxBytes}`, { limit: maxBytes }))
  }
  // Read by the stream's events, not its async iterator: the iterator's promise, result object and
  // end-of-stream bookkeeping per chunk cost more than a small body's whole read (~4 µs a request).
  return new Promise((resolve, reject) => {
    // a large body is copied into place as it arrives, with room for the envelope around it
    const into = opts.into !== undefined && declared === opts.into.room.byteLength ? opts.into : null
    const room = into?.room ?? (opts.envelopeRoom === true && Number.isSafeInteger(declared) && declared > ENVELOPE_ROOM_MIN_BYTES ? withEnvelopeRoom(declared) : null)
    const chunks: Buffer[] = []
    let size = 0
    let inRoom = 0
    const settle = (err: Error | null): void => {
      req.off('data', onData)
      req.off('end', onEnd)
      req.off('error', onError)
      req.off('close', onClose)
      if (err !== null) { reject(err); return }
      // a large body of unknown length (chunked) is joined into room for its envelope at its end:
      // the one copy the join makes anyway, instead of a second one into shared memory later
      if (room === null && opts.envelopeRoom === true && !Number.isSafeInteger(declared) && size > ENVELOPE_ROOM_MIN_BYTES) resolve(joinInto(withEnvelopeRoom(size), chunks))
      else if (room === null) resolve(chunks.length === 1 ? chunks[0]! : Buffer.concat(chunks))
      // the HTTP parser delivers exactly the declared length; anything else is joined as before
      else resolve(chunks.length === 0 ? room.subarray(0, inRoom) : Buffer.concat([room.subarray(0, inRoom), ...chunks]))
    }
    // the read ends early: what else arrives is discarded while the answer is written, and the
    // answer closes the connection (the server's `finish`), so a sender cannot keep it reading
    const abandon = (err: unknown): void => {
      settle(err as Error)
      req.resume()
    }
    const onData = (chunk: Buffer): void => {
      size += chunk.length
      if (size > maxBytes) { abandon(new HearthError('BODY_TOO_LARGE', `request body exceeds the limit of ${maxBytes} bytes`, { limit: maxBytes })); return }
      if (room !== null && chunks.length === 0 && size <= room.byteLength) {
        inRoom += copyIntoShared(chunk, room, inRoom)
        try { into?.received(inRoom) } catch (err) { abandon(err) }
      } else chunks.push(chunk)
    }
    const onEnd = (): void => { settle(null) }
    const onError = (err: Error): void => { settle(err) }
    const onClose = (): void => { settle(prematureClose()) }
    if (req.readableEnded) { settle(null); return }
    if (req.destroyed) { settle(req.errored ?? prematureClose()); return }
    req.on('data', onData)
    req.on('end', onEnd)
    req.on('error', onError)
    req.on('close', onClose)
    // a request paused before (its iterator would read it all the same) flows again
    if (req.readableFlowing === false) req.resume()
  })
}

/** `chunks` copied one after another into `into` (exactly their size). */
function joinInto (into: Buffer, chunks: Buffer[]): Buffer {
  let at = 0
  for (const c of chunks) at += copyIntoShared(c, into, at)
  return into
}

/** A request whose stream closed before its end (what reading it by its iterator threw). */
function prematureClose (): Error {
  return Object.assign(new Error('Premature close'), { code: 'ERR_STREAM_PREMATURE_CLOSE' })
}

/** Bodies over this size (those a worker encrypts as a stream) are read with envelope room. */
const ENVELOPE_ROOM_MIN_BYTES = 256 * 1024

export function isJsonContentType (header: string | undefined): boolean {
  if (header === undefined) return false
  if (header === 'application/json') return true
  const type = header.split(';')[0]!.trim().toLowerCase()
  return type === 'application/json' || (type.startsWith('application/') && type.endsWith('+json'))
}

/** Check the content type, then parse `bytes()` as UTF-8 JSON within the depth, number and count rules. */
export async function readJson (req: IncomingMessage, bytes: () => Promise<Buffer>, maxValues?: number): Promise<unknown> {
  if (!isJsonContentType(req.headers['content-type'])) {
    req.resume()
    throw new HearthError('UNSUPPORTED_MEDIA_TYPE', `expected content-type application/json, got ${JSON.stringify(req.headers['content-type'] ?? null)}`)
  }
  return parseBoundedJsonBytes(await bytes(), { maxDepth: MAX_DATA_DEPTH, subject: 'request body', ...(maxValues !== undefined ? { maxValues } : {}) })
}

/**
 * Values JSON has no form for, as the API writes them: a bigint (block numbers, chain ids, wei
 * amounts, on-chain file ids) is always its decimal string, whatever its size, so a field has one
 * type on the wire and no digit is lost. Everything else follows JSON.stringify (toJSON, Dates).
 */
export function wireValue (_key: string, value: unknown): unknown {
  return typeof value === 'bigint' ? value.toString() : value
}

/** Writes `reply`; `base`: headers under the reply's own (a listener's, on every answer). */
export function sendReply (res: ServerResponse, reply: Reply, base?: Record<string, string>): void {
  if (res.headersSent) { res.end(); return }
  const headers: Record<string, string> = base === undefined ? { ...reply.headers } : { ...base, ...reply.headers }
  if (reply.body === undefined) {
    res.writeHead(reply.status, headers).end()
    return
  }
  if (reply.body instanceof Uint8Array) {
    headers['content-type'] ??= 'application/octet-stream'
    headers['content-length'] = String(reply.body.byteLength)
    res.writeHead(reply.status, headers).end(reply.body)
    return
  }
  const text = wireJson(reply.body)
  headers['content-type'] ??= 'application/json; charset=utf-8'
  headers['content-length'] = String(Buffer.byteLength(text))
  res.writeHead(reply.status, headers).end(text)
}

/**
 * JSON.stringify(value, wireValue), without calling the replacer for every value of a body that
 * has no bigint (nearly every body): only a bigint makes the plain stringify throw a TypeError, and
 * then the replacer's pass writes it (any other TypeError, a cycle, is thrown by that pass again).
 */
export function wireJson (value: unknown): string {
  try {
    return JSON.stringify(value)
  } catch (err) {
    if (!(err instanceof TypeError)) throw err
    return JSON.stringify(value, wireValue)
  }
}

export function errorReply (err: unknown): Reply {
  const body = toErrorBody(err)
  const headers: Record<string, string> = {}
  if (err instanceof HearthError && err.code === 'UNAUTHORIZED') headers['www-authenticate'] = 'Bearer'
  if (err instanceof HearthError && err.code === 'METHOD_NOT_ALLOWED' && Array.isArray(err.details?.allow)) {
    headers.allow = (err.details.allow as string[]).join(', ')
  }
  if (err instanceof HearthError && typeof err.details?.retryAfterSeconds === 'number') headers['retry-after'] = String(err.details.retryAfterSeconds)
  return { status: body.error.code, body, headers }
}
