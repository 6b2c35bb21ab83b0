// Request/response plumbing shared by every route: bounded JSON bodies, the one error shape,
// and the `{status, body, headers}` reply contract that keeps handlers free of raw response handling.
import type { IncomingMessage, ServerResponse } from 'node:http'
import { HearthError, toErrorBody } from '../errors.js'
import { MAX_DATA_DEPTH, parseBoundedJsonBytes } from '../protocol/bounded-json.js'
import { withEnvelopeRoom } from '../protocol/envelope.js'
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
 * is then built without copying it); any other body stays in ordinary memory. `into`: read into
 * that room instead (its encryption may start while the body arrives) when the declared length is
 * its length.
 */
export async function readBody (req: IncomingMessage, maxBytes: number, opts: { envelopeRoom?: boolean; into?: BodyRoom } = {}): Promise<Buffer> {
  const declared = Number(req.headers['content-length'])
  if (Number.isFinite(declared) && declared > maxBytes) {
    req.resume()
    throw new HearthError('BODY_TOO_LARGE', `request body is ${declared} bytes; the limit is ${maxBytes}`, { limit: maxBytes })
  }
  // a large body is copied into place as it arrives, with room for the envelope around it
  const into = opts.into !== undefined && declared === opts.into.room.byteLength ? opts.into : null
  const room = into?.room ?? (opts.envelopeRoom === true && Number.isSafeInteger(declared) && declared > ENVELOPE_ROOM_MIN_BYTES ? withEnvelopeRoom(declared) : null)
  const chunks: Buffer[] = []
  let size = 0
  let inRoom = 0
  for await (const chunk of req) {
    size += (chunk as Buffer).length
    if (size > maxBytes) {
      req.resume()
      throw new HearthError('BODY_TOO_LARGE', `request body exceeds the limit of ${maxBytes} bytes`, { limit: maxBytes })
    }
    if (room !== null && chunks.length === 0 && size <= room.byteLength) {
      inRoom += (chunk as Buffer).copy(room, inRoom)
      into?.received(inRoom)
    } else chunks.push(chunk as Buffer)
  }
  if (room === null) return Buffer.concat(chunks)
  // the HTTP parser delivers exactly the declared length; anything else is joined as before
  return chunks.length === 0 ? room.subarray(0, inRoom) : Buffer.concat([room.subarray(0, inRoom), ...chunks])
}

/** Bodies over this size (those a worker encrypts as a stream) are read with envelope room. */
const ENVELOPE_ROOM_MIN_BYTES = 256 * 1024

export function isJsonContentType (header: string | undefined): boolean {
  if (header === undefined) return false
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

export function sendReply (res: ServerResponse, reply: Reply): void {
  if (res.headersSent) { res.end(); return }
  const headers: Record<string, string> = { ...(reply.headers ?? {}) }
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
  const text = JSON.stringify(reply.body, wireValue)
  headers['content-type'] ??= 'application/json; charset=utf-8'
  headers['content-length'] = String(Buffer.byteLength(text))
  res.writeHead(reply.status, headers).end(text)
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
