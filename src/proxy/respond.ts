// Writing answers to the app. Errors the daemon produces use the project's one error shape.
import type { IncomingMessage, OutgoingHttpHeaders, ServerResponse } from 'node:http'
import { HearthError, toErrorBody } from '../errors.js'

export function sendJson (res: ServerResponse, status: number, body: unknown, headers: OutgoingHttpHeaders = {}): void {
  sendBytes(res, status, Buffer.from(JSON.stringify(body)), { 'content-type': 'application/json; charset=utf-8', ...headers })
}

export function sendBytes (res: ServerResponse, status: number, body: Buffer, headers: OutgoingHttpHeaders): void {
  if (res.headersSent) { res.destroy(); return }
  res.writeHead(status, { ...headers, 'content-length': body.length })
  res.end(body)
}

export function sendError (res: ServerResponse, err: unknown): void {
  const body = toErrorBody(err)
  sendJson(res, body.error.code, body)
}

/** The app's request body, refused past `limitBytes` (BODY_TOO_LARGE, never an unbounded buffer). */
export async function readRequestBody (req: IncomingMessage, limitBytes: number): Promise<Buffer> {
  const declared = Number(req.headers['content-length'])
  if (Number.isFinite(declared) && declared > limitBytes) {
    throw new HearthError('BODY_TOO_LARGE', `request body larger than ${limitBytes} bytes`)
  }
  const chunks: Buffer[] = []
  let size = 0
  for await (const chunk of req) {
    size += (chunk as Buffer).length
    if (size > limitBytes) throw new HearthError('BODY_TOO_LARGE', `request body larger than ${limitBytes} bytes`)
    chunks.push(chunk as Buffer)
  }
  return Buffer.concat(chunks)
}

/** Parse an app's JSON body where the proxy itself needs its fields; bad JSON is INVALID_JSON. */
export function parseAppJson (body: Buffer): Record<string, unknown> {
  if (body.length === 0) return {}
  let v: unknown
  try { v = JSON.parse(body.toString('utf8')) } catch {
    throw new HearthError('INVALID_JSON', 'the request body is not valid JSON')
  }
  if (v === null || typeof v !== 'object' || Array.isArray(v)) throw new HearthError('INVALID_BODY', 'the request body must be a JSON object')
  return v as Record<string, unknown>
}
