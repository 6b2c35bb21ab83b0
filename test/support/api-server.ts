// The API server in-process on a per-test unix socket (and optionally loopback TCP), with a
// logger whose lines the test can read, and raw-socket requests for what a normal client cannot send.
import { connect, type NetConnectOpts } from 'node:net'
import { request } from 'node:http'
import { Writable } from 'node:stream'
import { join } from 'node:path'
import type { TestContext } from 'node:test'
import { pino } from 'pino'
import { createApiServer, type ApiServer, type RawMount } from '../../src/api/server.js'
import type { Router } from '../../src/api/router.js'
import { tempDir } from './tmp.js'

export interface LogLines { lines: Array<Record<string, any>> }

export function capturingLogger (): { logger: pino.Logger, log: LogLines } {
  const log: LogLines = { lines: [] }
  const dest = new Writable({ write (chunk, _enc, cb) { log.lines.push(JSON.parse(String(chunk))); cb() } })
  return { logger: pino({ level: 'debug' }, dest), log }
}

export async function startApi (t: TestContext, router: Router, opts: { mounts?: RawMount[], maxBodyBytes?: number } = {}): Promise<{ api: ApiServer, socket: string, log: LogLines }> {
  const { logger, log } = capturingLogger()
  const api = createApiServer({ router, mounts: opts.mounts ?? [], maxBodyBytes: opts.maxBodyBytes ?? 1 << 20, logger })
  const socket = join(await tempDir(t, 'hearth-api-'), 'run', 'api.sock')
  await api.listenUnix(socket)
  t.after(async () => { await api.close() })
  return { api, socket, log }
}

export interface Answer { status: number, headers: Record<string, string | string[] | undefined>, text: string, json: any }

/** Bytes written as they are to a socket (no client-side checks), the answer parsed loosely. */
export async function rawExchange (target: NetConnectOpts, bytes: string | Buffer): Promise<Answer> {
  const text = await new Promise<string>((resolve, reject) => {
    const s = connect(target)
    const chunks: Buffer[] = []
    s.on('data', (c) => chunks.push(c))
    s.on('end', () => { resolve(Buffer.concat(chunks).toString('utf8')) })
    s.on('error', reject)
    s.write(bytes)
  })
  const [head = '', body = ''] = text.split('\r\n\r\n')
  const [statusLine = '', ...headerLines] = head.split('\r\n')
  const headers: Record<string, string> = {}
  for (const line of headerLines) { const i = line.indexOf(':'); headers[line.slice(0, i).toLowerCase()] = line.slice(i + 1).trim() }
  let json: unknown
  try { json = JSON.parse(body) } catch { json = undefined }
  return { status: Number(statusLine.split(' ')[1]), headers, text: body, json }
}

export async function httpCall (target: { socketPath: string } | { host: string, port: number }, method: string, path: string, opts: { headers?: Record<string, string>, body?: string } = {}): Promise<Answer> {
  return await new Promise((resolve, reject) => {
    const req = request({ ...target, method, path, headers: opts.headers }, (res) => {
      let text = ''
      res.on('data', (c) => { text += c })
      res.on('end', () => {
        let json: unknown
        try { json = JSON.parse(text) } catch { json = undefined }
        resolve({ status: res.statusCode ?? 0, headers: res.headers, text, json })
      })
    })
    req.on('error', reject)
    req.end(opts.body)
  })
}
