// Reads an HTTP answer from a unix socket chunk by chunk, as an app consuming a chat stream would.
import { request as httpRequest, type ClientRequest, type IncomingMessage } from 'node:http'

export interface OpenStream {
  status: number
  headers: IncomingMessage['headers']
  req: ClientRequest
  res: IncomingMessage
  /** Resolves with the next chunk, or null at the end of the body. */
  next (): Promise<Buffer | null>
  /** Everything still to come, as text. */
  rest (): Promise<string>
}

export async function openStream (socketPath: string, path: string, body: unknown): Promise<OpenStream> {
  return await new Promise((resolve, reject) => {
    const req = httpRequest({ socketPath, method: 'POST', path, headers: { 'content-type': 'application/json' } }, (res) => {
      const queue: Array<Buffer | null> = []
      const waiting: Array<(c: Buffer | null) => void> = []
      const push = (c: Buffer | null): void => { const w = waiting.shift(); if (w !== undefined) w(c); else queue.push(c) }
      res.on('data', (c: Buffer) => push(c))
      res.on('end', () => push(null))
      res.on('error', () => push(null))
      res.on('aborted', () => push(null))
      const next = async (): Promise<Buffer | null> => queue.length > 0 ? queue.shift()! : await new Promise((r) => waiting.push(r))
      resolve({
        status: res.statusCode ?? 0,
        headers: res.headers,
        req,
        res,
        next,
        async rest () {
          const parts: Buffer[] = []
          for (let c = await next(); c !== null; c = await next()) parts.push(c)
          return Buffer.concat(parts).toString('utf8')
        }
      })
    })
    req.on('error', reject)
    req.end(JSON.stringify(body))
  })
}

/** Fails instead of hanging when something that should happen does not. */
export async function within<T> (ms: number, what: string, p: Promise<T>): Promise<T> {
  let timer: NodeJS.Timeout | undefined
  try {
    return await Promise.race([p, new Promise<never>((_, reject) => { timer = setTimeout(() => reject(new Error(`${what} did not happen within ${ms} ms`)), ms) })])
  } finally { clearTimeout(timer) }
}

/** Waits (bounded) until `check` holds. */
export async function eventually (what: string, check: () => boolean | Promise<boolean>, ms = 10_000): Promise<void> {
  const until = Date.now() + ms
  while (!(await check())) {
    if (Date.now() > until) throw new Error(`${what} did not happen within ${ms} ms`)
    await new Promise((r) => setTimeout(r, 10))
  }
}
