// Conversation/image commands: login, chat, conversations, image, images — clients of the
// daemon's /api/v0 proxy and its /v1/upstream and /v1/images endpoints. The upstream token is
// handed to the daemon once (from stdin, never argv) and never comes back.
import { request as httpRequest, type IncomingHttpHeaders, type IncomingMessage } from 'node:http'
import { readFile } from 'node:fs/promises'
import { createInterface } from 'node:readline'
import { parseArgs } from 'node:util'
import { setTimeout as sleep } from 'node:timers/promises'
import { HearthError, type ErrorCode } from '../../errors.js'
import { daemonRequest, type DaemonRequest, type DaemonResponse } from '../../client/daemon-client.js'
import { EXIT, type Command, type CommandContext } from '../command.js'
import { callDaemon, errorFromResponse, guarded, UsageError, writeJson } from '../output.js'
import { chunkText, FrameSplitter, parseFrame } from '../../proxy/stream-frames.js'

const API = '/api/v0'
const enc = encodeURIComponent

export interface DaemonStream {
  status: number
  headers: IncomingHttpHeaders
  /** The body, chunk by chunk as it arrives. */
  body: AsyncIterable<Buffer>
}

/** Like daemonRequest, but the answer's body is handed over as it arrives (chat streams). */
export async function daemonStream (socketPath: string, req: DaemonRequest): Promise<DaemonStream> {
  const raw = req.body === undefined ? undefined : JSON.stringify(req.body)
  return await new Promise((resolve, reject) => {
    const r = httpRequest({ socketPath, path: req.path, method: req.method ?? 'POST', headers: { 'content-type': 'application/json', accept: 'text/event-stream', ...req.headers } },
      (res: IncomingMessage) => { resolve({ status: res.statusCode ?? 0, headers: res.headers, body: res }) })
    r.on('error', (err: NodeJS.ErrnoException) => {
      reject(err.code === 'ENOENT' || err.code === 'ECONNREFUSED'
        ? new HearthError('DAEMON_NOT_RUNNING', `the Hearth daemon is not running (no socket at ${socketPath}); start it with \`hearth daemon\``)
        : err)
    })
    r.end(raw)
  })
}

/** An error answer as a HearthError: the daemon's own shape, or the upstream's {statusCode, name, message}. */
export function apiError (res: Pick<DaemonResponse, 'status' | 'json'>): HearthError {
  if (res.json?.error !== undefined) return errorFromResponse(res as DaemonResponse)
  const code: ErrorCode = res.status === 401 || res.status === 403 ? 'UNAUTHORIZED' : res.status === 404 ? 'NOT_FOUND' : res.status >= 500 ? 'UPSTREAM_UNAVAILABLE' : res.status >= 400 ? 'INVALID_ARGUMENT' : 'UPSTREAM_BAD_RESPONSE'
  const message = typeof res.json?.message === 'string' ? res.json.message : `the conversation service answered ${res.status}`
  return new HearthError(code, `conversation service: ${message}`, { upstreamStatus: res.status })
}

/** A call through the proxy: anything but 2xx (and success when the answer has it) is a failure. */
async function callApi (ctx: CommandContext, req: DaemonRequest): Promise<DaemonResponse> {
  const res = await daemonRequest(ctx.home.socket, req)
  if (res.status < 200 || res.status >= 300 || res.json?.success === false) throw apiError(res)
  return res
}

async function readLine (ctx: CommandContext, prompt: string): Promise<string> {
  ctx.stderr.write(prompt)
  const rl = createInterface({ input: ctx.stdin, terminal: false })
  try {
    for await (const line of rl) return line.trim()
    throw new UsageError('no input on stdin')
  } finally { rl.close() }
}

async function readAll (stream: NodeJS.ReadableStream): Promise<string> {
  const chunks: Buffer[] = []
  for await (const c of stream) chunks.push(Buffer.isBuffer(c) ? c : Buffer.from(c as string))
  return Buffer.concat(chunks).toString('utf8').trim()
}

function expiryText (expiresAt: unknown): string {
  return typeof expiresAt === 'string' ? `expires ${expiresAt}` : 'no known expiry'
}

// ---- login ------------------------------------------------------------------------------------

const LOGIN_USAGE = `usage: hearth login --email <address>      the service mails a 6-digit code; type it when asked
       hearth login --token - | --token-file F   store a token you already have (stdin or file)
       hearth login --logout                     forget the stored token
  the daemon keeps the token (0600, never logged); apps on the socket never see it`

export const loginCommand: Command = {
  name: 'login',
  usage: LOGIN_USAGE,
  async run (ctx) {
    return await guarded(ctx, LOGIN_USAGE, async () => {
      const { values } = parseArgs({ args: ctx.args, options: { email: { type: 'string' }, token: { type: 'string' }, 'token-file': { type: 'string' }, logout: { type: 'boolean' }, json: { type: 'boolean' } } })
      const chosen = [values.email, values.token, values['token-file'], values.logout].filter((v) => v !== undefined)
      if (chosen.length !== 1) throw new UsageError('give exactly one of --email, --token -, --token-file, --logout')
      let result: any
      if (values.logout === true) {
        await callDaemon(ctx, { method: 'DELETE', path: '/v1/upstream/token' })
        ctx.stdout.write('logged out\n')
        return EXIT.OK
      }
      if (values.email !== undefined) {
        await callDaemon(ctx, { method: 'POST', path: '/v1/upstream/login/start', body: { email: values.email } })
        const code = await readLine(ctx, `a login code was sent to ${values.email}\ncode: `)
        result = await callDaemon(ctx, { method: 'POST', path: '/v1/upstream/login/finish', body: { email: values.email, code } })
      } else {
        if (values.token !== undefined && values.token !== '-') {
          throw new UsageError('--token takes only "-" (read stdin); a token on the command line ends up in shell history — use --token - or --token-file F')
        }
        const token = values.token === '-' ? await readAll(ctx.stdin) : (await readFile(values['token-file']!, 'utf8')).trim()
        result = await callDaemon(ctx, { method: 'POST', path: '/v1/upstream/token', body: { token } })
      }
      if (values.json === true) writeJson(ctx, result)
      else ctx.stdout.write(`logged in${typeof result.email === 'string' ? ` as ${result.email}` : ''} (${expiryText(result.expiresAt)})\n`)
      return EXIT.OK
    })
  }
}

// ---- chat -------------------------------------------------------------------------------------

const CHAT_USAGE = `usage: hearth chat <conversationId> | --character <characterId>
  each line read from stdin is sent; the reply is printed as it streams in.
  /clear empties the conversation; /quit or the end of input stops.`

/** Send one line and print the reply as its frames arrive; returns the whole reply text. */
async function streamReply (ctx: CommandContext, conversationId: string, text: string): Promise<string> {
  const res = await daemonStream(ctx.home.socket, {
    method: 'POST', path: `${API}/conversations/${enc(conversationId)}/chat/stream`,
    body: { data: text, mimeType: 'text/plain', allow: ['text/plain'] }
  })
  if (res.status < 200 || res.status >= 300) {
    const chunks: Buffer[] = []
    for await (const c of res.body) chunks.push(c)
    let json: any
    try { json = JSON.parse(Buffer.concat(chunks).toString('utf8')) } catch { json = undefined }
    throw apiError({ status: res.status, json })
  }
  const splitter = new FrameSplitter()
  let reply = ''
  const handle = (frame: Buffer): void => {
    const parsed = parseFrame(frame)
    if (parsed.kind === 'error') throw apiError({ status: 502, json: parsed.body })
    if (parsed.kind !== 'chunk') return
    const piece = chunkText(parsed.chunk)
    reply += piece
    ctx.stdout.write(piece)
  }
  try {
    for await (const chunk of res.body) for (const frame of splitter.push(chunk)) handle(frame)
    if (splitter.rest().length > 0) handle(splitter.rest())
  } finally { ctx.stdout.write('\n') }
  return reply
}

export const chatCommand: Command = {
  name: 'chat',
  usage: CHAT_USAGE,
  async run (ctx) {
    return await guarded(ctx, CHAT_USAGE, async () => {
      const { values, positionals } = parseArgs({ args: ctx.args, allowPositionals: true, options: { character: { type: 'string' } } })
      if ((positionals.length === 1) === (values.character !== undefined) || positionals.length > 1) throw new UsageError('give a conversation id or --character <id>')
      let id = positionals[0]
      if (id === undefined) {
        const created = await callApi(ctx, { method: 'POST', path: `${API}/conversations`, body: { characterId: values.character } })
        id = String(created.json.id)
        ctx.stderr.write(`conversation ${id}\n`)
      }
      const interactive = (ctx.stdin as { isTTY?: boolean }).isTTY === true
      const rl = createInterface({ input: ctx.stdin, terminal: false })
      let sent = 0
      try {
        if (interactive) ctx.stderr.write('> ')
        for await (const raw of rl) {
          const line = raw.trim()
          if (line === '/quit') break
          if (line === '/clear') {
            await callApi(ctx, { method: 'POST', path: `${API}/conversations/${enc(id)}/clear` })
            ctx.stderr.write('conversation cleared\n')
            sent++
          } else if (line.length > 0) { await streamReply(ctx, id, line); sent++ }
          if (interactive) ctx.stderr.write('> ')
        }
      } finally { rl.close() }
      if (sent === 0 && !interactive) {
        ctx.stderr.write(`nothing sent: stdin was empty. Type your messages (run \`hearth chat ${id}\` in a terminal) or pipe them in, one per line: echo "hello" | hearth chat ${id}\n`)
        return EXIT.USAGE
      }
      return EXIT.OK
    })
  }
}

// ---- conversations ----------------------------------------------------------------------------

const CONVERSATIONS_USAGE = `usage: hearth conversations [conversationId] [--json]
  lists your conversations, or prints the messages of one; works offline from the cache`

export const conversationsCommand: Command = {
  name: 'conversations',
  usage: CONVERSATIONS_USAGE,
  async run (ctx) {
    return await guarded(ctx, CONVERSATIONS_USAGE, async () => {
      const { values, positionals } = parseArgs({ args: ctx.args, allowPositionals: true, options: { json: { type: 'boolean' } } })
      if (positionals.length > 1) throw new UsageError('at most one conversation id')
      const res = await callApi(ctx, { path: positionals[0] === undefined ? `${API}/conversations` : `${API}/conversations/${enc(positionals[0])}` })
      if (res.headers['x-hearth-cache'] === 'hit') ctx.stderr.write(`offline: cached answer from ${String(res.headers['x-hearth-cached-at'])}\n`)
      if (values.json === true) { writeJson(ctx, res.json); return EXIT.OK }
      if (positionals[0] === undefined) {
        for (const c of (res.json.conversations ?? []) as Array<{ id: string, speakers?: Array<{ name?: string, type?: string }>, updated?: string }>) {
          const names = (c.speakers ?? []).filter((s) => s.type === 'character').map((s) => s.name).join(', ')
          ctx.stdout.write(`${c.id}  ${names.padEnd(20)}  ${c.updated ?? ''}\n`)
        }
        return EXIT.OK
      }
      const conv = res.json.conversation ?? res.json
      for (const m of (conv.messages ?? []) as Array<Record<string, unknown>>) {
        const who = String(m.participant_type ?? m.participantType ?? '?')
        const mime = String(m.mimetype ?? m.mimeType ?? 'text/plain')
        ctx.stdout.write(`${who === 'account' ? 'you' : who}: ${mime.startsWith('text/') ? String(m.content) : `[${mime}]`}\n`)
      }
      return EXIT.OK
    })
  }
}

// ---- image, images ----------------------------------------------------------------------------

const IMAGE_USAGE = `usage: hearth image "<prompt>" [--wait] [--width N] [--height N] [--samples N] [--seed N]
                    [--negative TEXT] [--guidance N] [--lora N] [--json]
  asks for an image (a character is referenced as <character-uuid> in the prompt); offline, the
  request is queued. --wait follows the job and prints the local paths of the downloaded files.`

const TERMINAL = new Set(['done', 'failed', 'expired', 'rejected'])

function numberOption (name: string, v: string | undefined): number | undefined {
  if (v === undefined) return undefined
  const n = Number(v)
  if (!Number.isFinite(n)) throw new UsageError(`--${name} must be a number`)
  return n
}

export const imageCommand: Command = {
  name: 'image',
  usage: IMAGE_USAGE,
  async run (ctx) {
    return await guarded(ctx, IMAGE_USAGE, async () => {
      const { values, positionals } = parseArgs({
        args: ctx.args,
        allowPositionals: true,
        options: {
          wait: { type: 'boolean' }, json: { type: 'boolean' }, width: { type: 'string' }, height: { type: 'string' }, samples: { type: 'string' },
          seed: { type: 'string' }, negative: { type: 'string' }, guidance: { type: 'string' }, lora: { type: 'string' }, 'poll-ms': { type: 'string' }
        }
      })
      if (positionals.length !== 1 || positionals[0]!.trim() === '') throw new UsageError('give one prompt (quote it)')
      const body: Record<string, unknown> = { prompt: positionals[0] }
      const put = (key: string, v: unknown): void => { if (v !== undefined) body[key] = v }
      put('negativePrompt', values.negative)
      put('width', numberOption('width', values.width))
      put('height', numberOption('height', values.height))
      put('samples', numberOption('samples', values.samples))
      put('seed', numberOption('seed', values.seed))
      put('guidanceScale', numberOption('guidance', values.guidance))
      put('loraScale', numberOption('lora', values.lora))
      const created = await callApi(ctx, { method: 'POST', path: `${API}/images`, body })
      const jobId = String(created.json.jobId)
      if (values.wait !== true) {
        if (values.json === true) writeJson(ctx, created.json)
        else ctx.stdout.write(`job ${jobId}${created.json.queued === true ? ' (queued until the service is reachable)' : ''}\n`)
        return EXIT.OK
      }
      if (created.json.queued === true) {
        // nothing to follow until the service is back; the daemon sends it then and downloads the result
        if (values.json === true) writeJson(ctx, created.json)
        else ctx.stdout.write(`job ${jobId} queued: the image service is not reachable. The daemon sends the request when it is and downloads the files; \`hearth images\` shows them.\n`)
        return EXIT.OK
      }
      ctx.stderr.write(`job ${jobId}\n`)
      const pollMs = numberOption('poll-ms', values['poll-ms']) ?? 1000
      let shown = ''
      for (;;) {
        const view = await callDaemon(ctx, { path: `/v1/images/${enc(jobId)}` })
        const now = `${String(view.state)} ${String(view.status ?? '')}`.trim()
        if (now !== shown) { ctx.stderr.write(`  ${now}\n`); shown = now }
        if (TERMINAL.has(view.state)) {
          if (values.json === true) writeJson(ctx, view)
          else for (const f of view.files as Array<{ path: string }>) ctx.stdout.write(`${f.path}\n`)
          if (view.state === 'done') return EXIT.OK
          throw new HearthError('UPSTREAM_BAD_RESPONSE', `image job ${jobId} ${String(view.state)}: ${String(view.error ?? '')}`)
        }
        await sleep(pollMs)
      }
    })
  }
}

const IMAGES_USAGE = 'usage: hearth images [--json]\n  lists image jobs and the local copies of their files'

export const imagesCommand: Command = {
  name: 'images',
  usage: IMAGES_USAGE,
  async run (ctx) {
    return await guarded(ctx, IMAGES_USAGE, async () => {
      const { values } = parseArgs({ args: ctx.args, options: { json: { type: 'boolean' } } })
      const list = await callDaemon(ctx, { path: '/v1/images' })
      if (values.json === true) { writeJson(ctx, list); return EXIT.OK }
      for (const img of list.images as Array<{ jobId: string | null, localJobId: string | null, state: string, prompt: string | null, files: Array<{ path: string }> }>) {
        ctx.stdout.write(`${img.jobId ?? img.localJobId ?? '?'}  ${img.state.padEnd(9)}  ${JSON.stringify(img.prompt ?? '')}\n`)
        for (const f of img.files) ctx.stdout.write(`  ${f.path}\n`)
      }
      return EXIT.OK
    })
  }
}
