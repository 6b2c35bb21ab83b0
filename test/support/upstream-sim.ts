// A spec-faithful simulator of the hosted conversation/image API (docs/protocol.md §4), on 127.0.0.1:0.
// Tests start it, point the proxy at `baseUrl`, and read what it saw (`requests`, `events`).
// Fault injection: slow, an error status, a stream or body cut mid-way, down (connection refused),
// non-JSON, truncated JSON.
import { createServer, type IncomingMessage, type ServerResponse, type Server } from 'node:http'
import type { Socket } from 'node:net'
import { randomUUID } from 'node:crypto'
import { setTimeout as sleep } from 'node:timers/promises'
import { ApiError, audioBytes, DEFAULT_SIM_OPTIONS, SimState, type SimAccount, type SimJob, type SimOptions } from './upstream-sim-state.js'

export type SimFault = (
  | { kind: 'slow', delayMs: number }
  | { kind: 'status', status: number }
  | { kind: 'cut', afterFrames?: number }
  | { kind: 'down' }
  | { kind: 'non-json' }
  | { kind: 'truncated' }
) & {
  /** Only requests whose path (after /api/v0) contains this; all when absent. */
  path?: string
  /** Only this many requests; unlimited when absent. */
  times?: number
}

export interface RecordedRequest { method: string, path: string, headers: Record<string, string | string[] | undefined>, body: string, at: number }

export interface UpstreamSim {
  baseUrl: string
  /** Where output files and audio are served from: another origin, like a CDN with signed URLs. */
  cdnUrl: string
  state: SimState
  options: SimOptions
  /** Every request received, in order. */
  requests: RecordedRequest[]
  /** Stream lifecycle, in order: `stream:start`, `stream:frame:<n>`, `stream:end`, `stream:aborted`, `stream:cut`. */
  events: string[]
  setFault (fault: SimFault | null): Promise<void>
  issueToken (opts?: { email?: string, expiresInSec?: number }): string
  /** Let held streams (options.holdStreams) send the rest of their frames. */
  releaseStreams (): void
  stop (): Promise<void>
}

type Reply =
  | { status: number, json: unknown }
  | { status: number, raw: Buffer, contentType: string }
  | { stream: { frames: string[], contentType: string } }

const API = '/api/v0'

async function readBody (req: IncomingMessage): Promise<string> {
  const chunks: Buffer[] = []
  for await (const c of req) chunks.push(c as Buffer)
  return Buffer.concat(chunks).toString('utf8')
}

function jsonBody (raw: string): Record<string, unknown> {
  if (raw.length === 0) return {}
  try {
    const v = JSON.parse(raw) as unknown
    if (v !== null && typeof v === 'object' && !Array.isArray(v)) return v as Record<string, unknown>
  } catch { /* fall through */ }
  throw new ApiError(400, 'BadRequestException', 'Body must be a JSON object')
}

export async function startUpstreamSim (opts: Partial<SimOptions> = {}): Promise<UpstreamSim> {
  const options: SimOptions = { ...DEFAULT_SIM_OPTIONS, ...opts }
  const state = new SimState(options)
  const requests: RecordedRequest[] = []
  const events: string[] = []
  const sockets = new Set<Socket>()
  let fault: SimFault | null = null
  let holds: Array<() => void> = []
  let port = 0
  let baseUrl = ''
  let cdnUrl = ''

  function takeFault (path: string): SimFault | null {
    if (fault === null || fault.kind === 'down') return null
    if (fault.path !== undefined && !path.includes(fault.path)) return null
    const f = fault
    if (f.times !== undefined) {
      f.times--
      if (f.times <= 0) fault = null
    }
    return f
  }

  // ---- routes ----------------------------------------------------------------------------

  function conversationDetail (account: SimAccount, id: string): unknown {
    const c = state.conversation(account, id)
    const speakers = state.speakers(c)
    if (options.conversationShape === 'flat') return { id: c.id, speakers, created: c.created, updated: c.updated, messages: c.messages }
    return {
      success: true,
      conversation: {
        id: c.id, speakers, created: c.created, updated: c.updated,
        messages: c.messages.map((m) => ({ id: m.id, content: m.content, mimeType: m.mimetype, participantId: m.participant_id, participantType: m.participant_type, created: m.created }))
      }
    }
  }

  function chatReply (account: SimAccount, id: string, body: Record<string, unknown>): { request: { data: string, mimeType: string }, reply: { data: string, mimeType: string } } {
    const c = state.conversation(account, id)
    const data = typeof body.data === 'string' ? body.data : typeof body.message === 'string' ? body.message : null
    if (data === null || data.length === 0) throw new ApiError(400, 'BadRequestException', 'data must be a non-empty string')
    const mimeType = typeof body.mimeType === 'string' ? body.mimeType : 'text/plain'
    const allow = Array.isArray(body.allow) ? body.allow : ['text/plain']
    const text = state.replyText(c, data)
    let reply = { data: text, mimeType: 'text/plain' }
    if (allow.includes('audio/mpeg') || allow.includes('audio/mp3')) {
      const audio = audioBytes(text)
      reply = options.audioAs === 'base64'
        ? { data: audio.toString('base64'), mimeType: 'audio/mpeg' }
        : { data: `${cdnUrl}/files/audio/${encodeURIComponent(text)}.mp3`, mimeType: 'audio/mpeg' }
    }
    const request = { data, mimeType }
    state.addExchange(c, request, reply)
    return { request, reply }
  }

  function streamFrames (text: string): string[] {
    const id = `chatcmpl-${randomUUID()}`
    const created = Math.floor(Date.now() / 1000)
    const chunk = (content: string, finish: string | null): unknown => ({
      id, object: 'chat.completion.chunk', created, model: 'sim-1', system_fingerprint: 'fp_sim',
      choices: [{ index: 0, delta: { content }, finish_reason: finish }]
    })
    const words = text.split(/(?<= )/)
    const payloads = [...words.map((w) => chunk(w, null)), chunk('', 'stop')].map((p) => JSON.stringify(p))
    if (options.streamFraming === 'bare') return payloads.map((p) => `${p}\n\n`)
    const frames = payloads.map((p) => `data: ${p}\n\n`)
    if (options.streamFraming === 'sse-done') frames.push('data: [DONE]\n\n')
    return frames
  }

  function imageRequest (account: SimAccount, body: Record<string, unknown>): Reply {
    const n = (k: string): number | undefined => typeof body[k] === 'number' ? body[k] as number : undefined
    const bad = (m: string): never => { throw new ApiError(400, 'BadRequestException', m) }
    if (typeof body.prompt !== 'string' || body.prompt.trim() === '') bad('prompt must be a non-empty string')
    const width = n('width') ?? 512
    const height = n('height') ?? 512
    const samples = n('samples') ?? 1
    if (width < 64 || width > 1024 || height < 64 || height > 1024) bad('width and height must be between 64 and 1024')
    if (!Number.isInteger(samples) || samples < 1 || samples > 4) bad('samples must be 1 to 4')
    const g = n('guidanceScale'); if (g !== undefined && (g < 1 || g > 20)) bad('guidanceScale must be 1 to 20')
    const l = n('loraScale'); if (l !== undefined && (l < 0 || l > 1)) bad('loraScale must be 0 to 1')
    const job: SimJob = { id: randomUUID(), accountId: account.id, created: Date.now(), payload: { ...body, width, height, samples }, transactionId: randomUUID(), synchronous: body.synchronous === true }
    state.jobs.set(job.id, job)
    const answer: Record<string, unknown> = { success: true, jobId: job.id, transactionId: job.transactionId }
    if (job.synchronous) answer.output = outputFiles(job).map((f) => f.url)
    return { status: 201, json: answer }
  }

  function outputFiles (job: SimJob): Array<{ name: string, path: string, created: number, size: number, url: string }> {
    const samples = Number(job.payload.samples ?? 1)
    const expires = state.jobDoneAt(job) + options.fileTtlMs
    return Array.from({ length: samples }, (_, i) => {
      const name = `image-${i}.png`
      const path = `/files/${job.id}/${name}`
      return { name, path: `outputs/${job.id}/${name}`, created: state.jobDoneAt(job), size: SimState.imageBytes(job.id, i).length + options.misreportFileSize, url: `${cdnUrl}${path}?expires=${expires}&sig=${state.fileSignature(path, expires)}` }
    })
  }

  function jobView (account: SimAccount, id: string): unknown {
    const job = state.jobs.get(id)
    if (job === undefined || job.accountId !== account.id) throw new ApiError(404, 'JobNotFoundException', `Job ${id} not found`)
    const status = state.jobStatus(job)
    const order = ['CREATED', 'IN_PROGRESS', status === 'FAILED' ? 'FAILED' : 'SUCCESS']
    const reached = job.synchronous ? ['CREATED', 'SUCCESS'] : order.slice(0, order.indexOf(status) + 1)
    const at = (s: string): number => s === 'CREATED' ? job.created : s === 'IN_PROGRESS' ? job.created + options.jobInProgressAfterMs : state.jobDoneAt(job)
    return {
      success: true,
      job: {
        id: job.id, accountId: job.accountId, created: job.created, type: 'IMAGE_INFERENCE', payload: job.payload, status,
        statuses: reached.map((s, i) => ({ id: `${job.id}-${i}`, status: s, created: at(s) })),
        outputFiles: status === 'SUCCESS' ? outputFiles(job) : []
      }
    }
  }

  function serveFile (path: string, url: URL): Reply {
    const audio = /^\/files\/audio\/(.+)\.mp3$/.exec(path)
    if (audio !== null) return { status: 200, raw: audioBytes(decodeURIComponent(audio[1]!)), contentType: 'audio/mpeg' }
    const m = /^\/files\/([^/]+)\/image-(\d+)\.png$/.exec(path)
    const expires = Number(url.searchParams.get('expires'))
    if (m === null || url.searchParams.get('sig') !== state.fileSignature(path, expires)) throw new ApiError(403, 'ForbiddenException', 'Invalid signature')
    if (Date.now() > expires || state.filesExpired) throw new ApiError(403, 'ForbiddenException', 'URL expired')
    return { status: 200, raw: SimState.imageBytes(m[1]!, Number(m[2])), contentType: 'image/png' }
  }

  async function route (req: IncomingMessage, url: URL, raw: string): Promise<Reply> {
    const method = req.method ?? 'GET'
    if (url.pathname.startsWith('/files/')) return serveFile(url.pathname, url)
    if (!url.pathname.startsWith(`${API}/`)) throw new ApiError(404, 'NotFoundException', `Cannot ${method} ${url.pathname}`)
    const path = url.pathname.slice(API.length)
    const p = path.split('/').filter(Boolean).map(decodeURIComponent)
    const is = (m: string, ...parts: Array<string | null>): boolean =>
      method === m && p.length === parts.length && parts.every((x, i) => x === null || x === p[i])

    if (is('POST', 'auth', 'create-login')) {
      const { email } = jsonBody(raw)
      if (typeof email !== 'string' || !email.includes('@')) throw new ApiError(400, 'BadRequestException', 'email must be an email')
      state.createLoginCode(email)
      return { status: 201, json: { success: true } }
    }
    if (is('POST', 'auth', 'login')) {
      const { email, code } = jsonBody(raw)
      if (typeof email !== 'string' || state.loginCodes.get(email) !== code) throw new ApiError(401, 'UnauthorizedException', 'Invalid login code')
      state.loginCodes.delete(email)
      return { status: 201, json: { success: true, token: state.issueToken({ email }) } }
    }

    const account = state.authenticate(req.headers.authorization)
    if (is('GET', 'conversations')) {
      const conversations = [...state.conversations.values()].filter((c) => c.accountId === account.id)
        .map((c) => ({ id: c.id, speakers: state.speakers(c), created: c.created, updated: c.updated }))
      return { status: 200, json: { success: true, conversations } }
    }
    if (is('POST', 'conversations')) {
      const { characterId } = jsonBody(raw)
      state.character(String(characterId))
      const now = new Date().toISOString()
      const c = { id: randomUUID(), accountId: account.id, characterId: String(characterId), created: now, updated: now, messages: [] }
      state.conversations.set(c.id, c)
      return { status: 201, json: { success: true, id: c.id } }
    }
    if (is('GET', 'conversations', null)) return { status: 200, json: conversationDetail(account, p[1]!) }
    if (is('POST', 'conversations', null, 'chat')) {
      const { reply } = chatReply(account, p[1]!, jsonBody(raw))
      return { status: 201, json: { [options.replyField]: reply.data, mimeType: reply.mimeType } }
    }
    if (is('POST', 'conversations', null, 'chat', 'stream')) {
      const { reply } = chatReply(account, p[1]!, jsonBody(raw))
      return { stream: { frames: streamFrames(reply.data), contentType: options.streamFraming === 'bare' ? 'application/json' : 'text/event-stream' } }
    }
    if (is('POST', 'conversations', null, 'clear')) {
      const c = state.conversation(account, p[1]!)
      c.messages = []
      return { status: 201, json: { success: 'true' } }
    }
    if (is('POST', 'images')) return imageRequest(account, jsonBody(raw))
    if (is('GET', 'jobs', null)) return { status: 200, json: jobView(account, p[1]!) }
    if (is('GET', 'characters', null, 'images', 'models')) return { status: 200, json: { models: state.character(p[1]!).models } }
    if (is('GET', 'accounts', 'me')) return { status: 200, json: { success: true, account } }
    if (is('GET', 'characters')) {
      const search = url.searchParams.get('search')?.toLowerCase()
      const characters = [...state.characters.values()].filter((c) => search === undefined || c.name.toLowerCase().includes(search))
        .map(({ id, name, avatarUrl }) => ({ id, name, avatarUrl }))
      return { status: 200, json: { success: true, characters } }
    }
    if (is('GET', 'characters', null)) {
      const { id, name, avatarUrl } = state.character(p[1]!)
      return { status: 200, json: { success: true, character: { id, name, avatarUrl } } }
    }
    if (is('POST', 'speak')) {
      const { text } = jsonBody(raw)
      if (typeof text !== 'string') throw new ApiError(400, 'BadRequestException', 'text must be a string')
      return { status: 200, raw: audioBytes(text), contentType: 'audio/mpeg' }
    }
    throw new ApiError(404, 'NotFoundException', `Cannot ${method} ${url.pathname}`)
  }

  // ---- sending, with faults ---------------------------------------------------------------

  async function sendStream (req: IncomingMessage, res: ServerResponse, frames: string[], contentType: string, f: SimFault | null): Promise<void> {
    events.push('stream:start')
    let closed = false
    res.on('close', () => { if (!res.writableFinished) { closed = true; events.push('stream:aborted') } })
    res.writeHead(200, { 'content-type': contentType, 'cache-control': 'no-cache' })
    res.flushHeaders()
    for (const [i, frame] of frames.entries()) {
      if (closed) return
      if (f?.kind === 'cut' && i >= (f.afterFrames ?? 1)) {
        events.push('stream:cut')
        // Half a frame, then the connection drops.
        res.write(frame.slice(0, Math.floor(frame.length / 2)))
        await sleep(5)
        res.socket?.destroy()
        return
      }
      if (options.splitFrames) {
        const half = Math.floor(frame.length / 2)
        res.write(frame.slice(0, half))
        await sleep(Math.max(2, options.chunkDelayMs))
        if (closed) return
        res.write(frame.slice(half))
      } else res.write(frame)
      events.push(`stream:frame:${i}`)
      if (i === 0 && options.holdStreams) await new Promise<void>((resolve) => { holds.push(resolve); res.once('close', resolve) })
      else if (options.chunkDelayMs > 0) await sleep(options.chunkDelayMs)
      else await new Promise((resolve) => setImmediate(resolve))
    }
    if (closed) return
    events.push('stream:end')
    res.end()
  }

  function send (res: ServerResponse, reply: Exclude<Reply, { stream: unknown }>, f: SimFault | null): void {
    const body = 'json' in reply ? Buffer.from(JSON.stringify(reply.json)) : reply.raw
    const contentType = 'json' in reply ? 'application/json; charset=utf-8' : reply.contentType
    if (f?.kind === 'non-json') {
      const html = Buffer.from('<html><body><h1>502 Bad Gateway</h1></body></html>')
      res.writeHead(200, { 'content-type': 'text/html', 'content-length': html.length }).end(html)
      return
    }
    if (f?.kind === 'truncated') {
      const half = body.subarray(0, Math.floor(body.length / 2))
      res.writeHead(reply.status, { 'content-type': contentType, 'content-length': half.length }).end(half)
      return
    }
    if (f?.kind === 'cut') {
      res.writeHead(reply.status, { 'content-type': contentType, 'content-length': body.length })
      res.write(body.subarray(0, Math.floor(body.length / 2)))
      setTimeout(() => res.socket?.destroy(), 5)
      return
    }
    res.writeHead(reply.status, { 'content-type': contentType, 'content-length': body.length }).end(body)
  }

  async function onRequest (req: IncomingMessage, res: ServerResponse): Promise<void> {
    const url = new URL(req.url ?? '/', 'http://sim')
    const raw = await readBody(req)
    requests.push({ method: req.method ?? 'GET', path: url.pathname + url.search, headers: { ...req.headers }, body: raw, at: Date.now() })
    const f = takeFault(url.pathname.slice(API.length))
    if (f?.kind === 'slow') await sleep(f.delayMs)
    if (f?.kind === 'status') {
      send(res, { status: f.status, json: { statusCode: f.status, name: 'InternalServerErrorException', message: 'simulated failure' } }, null)
      return
    }
    let reply: Reply
    try {
      reply = await route(req, url, raw)
    } catch (err) {
      if (!(err instanceof ApiError)) throw err
      reply = { status: err.statusCode, json: err.body() }
    }
    if ('stream' in reply) await sendStream(req, res, reply.stream.frames, reply.stream.contentType, f)
    else send(res, reply, f)
  }

  const handler = (req: IncomingMessage, res: ServerResponse): void => {
    onRequest(req, res).catch((err: unknown) => {
      if (!res.headersSent) res.writeHead(500, { 'content-type': 'application/json' }).end(JSON.stringify({ statusCode: 500, name: 'Error', message: String(err) }))
      else res.destroy()
    })
  }
  const server: Server = createServer(handler)
  server.on('connection', (s: Socket) => { sockets.add(s); s.on('close', () => sockets.delete(s)) })
  const cdn: Server = createServer(handler)
  await new Promise<void>((resolve) => cdn.listen(0, '127.0.0.1', resolve))
  cdnUrl = `http://127.0.0.1:${(cdn.address() as { port: number }).port}`

  const listen = async (): Promise<void> => {
    await new Promise<void>((resolve, reject) => {
      server.once('error', reject)
      server.listen(port, '127.0.0.1', () => { server.off('error', reject); resolve() })
    })
    port = (server.address() as { port: number }).port
  }
  const close = async (): Promise<void> => {
    const closed = new Promise<void>((resolve) => server.close(() => resolve()))
    for (const s of sockets) s.destroy()
    for (const release of holds) release()
    holds = []
    await closed
  }
  await listen()
  baseUrl = `http://127.0.0.1:${port}`

  return {
    baseUrl,
    cdnUrl,
    state,
    options,
    requests,
    events,
    async setFault (next) {
      const wasDown = fault?.kind === 'down'
      fault = next
      if (next?.kind === 'down' && !wasDown) await close()
      if (next?.kind !== 'down' && wasDown) await listen()
    },
    issueToken: (o) => state.issueToken(o),
    releaseStreams () {
      const h = holds
      holds = []
      for (const release of h) release()
    },
    async stop () {
      if (fault?.kind !== 'down') await close()
      cdn.closeAllConnections()
      await new Promise<void>((resolve) => cdn.close(() => resolve()))
    }
  }
}
