// The data of the upstream simulator (docs/protocol.md §4): accounts, login codes, tokens, conversations,
// characters with image models, and image jobs whose status follows the clock. No I/O here;
// upstream-sim.ts serves it over HTTP.
import { crc32, deflateSync } from 'node:zlib'
import { createHash, createHmac, randomInt, randomUUID } from 'node:crypto'

export interface SimOptions {
  /** `flat` answers GET /conversations/:id as the protocol's table (docs/protocol.md §4); `wrapped` as {success, conversation} in camelCase. */
  conversationShape: 'flat' | 'wrapped'
  /** Which field carries a chat reply. */
  replyField: 'data' | 'message'
  /** Audio replies as base64 in the reply field, or as a URL to an mp3 served by the simulator. */
  audioAs: 'base64' | 'url'
  /** `sse` (data: frames), `sse-done` (plus data: [DONE]) or `bare` (blank-line separated JSON). */
  streamFraming: 'sse' | 'sse-done' | 'bare'
  /** Pause between two stream frames. */
  chunkDelayMs: number
  /** Write each stream frame in two pieces (tests that frames split across packets are rejoined). */
  splitFrames: boolean
  /** After the first stream frame, wait for `releaseStreams()` before sending the rest. */
  holdStreams: boolean
  /** A job is CREATED until this many ms after creation, then IN_PROGRESS. */
  jobInProgressAfterMs: number
  /** ...and SUCCESS (or FAILED when its prompt contains "[fail]") this many ms after creation. */
  jobDoneAfterMs: number
  /** Output file URLs stop working this many ms after the job finished. */
  fileTtlMs: number
  /** Announce output sizes off by this many bytes (to prove the proxy checks them). */
  misreportFileSize: number
  /** Lifetime of tokens from /auth/login. */
  tokenTtlSec: number
}

export const DEFAULT_SIM_OPTIONS: SimOptions = {
  conversationShape: 'flat',
  replyField: 'data',
  audioAs: 'base64',
  streamFraming: 'sse',
  chunkDelayMs: 0,
  splitFrames: false,
  holdStreams: false,
  jobInProgressAfterMs: 20,
  jobDoneAfterMs: 60,
  fileTtlMs: 60_000,
  misreportFileSize: 0,
  tokenTtlSec: 3600
}

export interface SimMessage { id: string, content: string, mimetype: string, participant_id: string, participant_type: 'account' | 'character', created: string }
export interface SimConversation { id: string, accountId: string, characterId: string, created: string, updated: string, messages: SimMessage[] }
export interface SimModel { id: string, characterId: string, status: 'IN_PROGRESS' | 'SUCCESS', created: string, updated: string }
export interface SimCharacter { id: string, name: string, avatarUrl: string, models: SimModel[] }
export interface SimJob { id: string, accountId: string, created: number, payload: Record<string, unknown>, transactionId: string, synchronous: boolean }
export interface SimAccount { id: string, email: string }

export class ApiError extends Error {
  constructor (readonly statusCode: number, readonly errorName: string, message: string) { super(message) }
  body (): unknown { return { statusCode: this.statusCode, name: this.errorName, message: this.message } }
}

const b64url = (v: unknown): string => Buffer.from(JSON.stringify(v)).toString('base64url')

export class SimState {
  readonly secret = randomUUID()
  readonly accounts = new Map<string, SimAccount>()
  /** email → the last 6-digit code "mailed" by /auth/create-login. */
  readonly loginCodes = new Map<string, string>()
  readonly conversations = new Map<string, SimConversation>()
  readonly characters = new Map<string, SimCharacter>()
  readonly jobs = new Map<string, SimJob>()
  /** When set, every signed file URL answers 403 "URL expired" (as they all do, eventually). */
  filesExpired = false

  constructor (readonly options: SimOptions) {}

  accountFor (email: string): SimAccount {
    for (const a of this.accounts.values()) if (a.email === email) return a
    const a = { id: randomUUID(), email }
    this.accounts.set(a.id, a)
    return a
  }

  createLoginCode (email: string): string {
    const code = String(randomInt(0, 1_000_000)).padStart(6, '0')
    this.loginCodes.set(email, code)
    return code
  }

  /** A JWT signed with the simulator's secret (HS256), `exp` in seconds. */
  issueToken (opts: { email?: string, expiresInSec?: number } = {}): string {
    const account = this.accountFor(opts.email ?? 'owner@example.org')
    const now = Math.floor(Date.now() / 1000)
    const head = `${b64url({ alg: 'HS256', typ: 'JWT' })}.${b64url({ sub: account.id, email: account.email, iat: now, exp: now + (opts.expiresInSec ?? this.options.tokenTtlSec) })}`
    return `${head}.${createHmac('sha256', this.secret).update(head).digest('base64url')}`
  }

  /** The account of a bearer token, or a 401. */
  authenticate (authorization: string | undefined): SimAccount {
    const m = /^Bearer (\S+)$/.exec(authorization ?? '')
    if (m === null) throw new ApiError(401, 'UnauthorizedException', 'Missing bearer token')
    const [head, payload, sig] = m[1]!.split('.')
    if (head === undefined || payload === undefined || sig === undefined ||
      createHmac('sha256', this.secret).update(`${head}.${payload}`).digest('base64url') !== sig) {
      throw new ApiError(401, 'UnauthorizedException', 'Invalid token')
    }
    const claims = JSON.parse(Buffer.from(payload, 'base64url').toString()) as { sub: string, exp: number }
    if (claims.exp * 1000 <= Date.now()) throw new ApiError(401, 'UnauthorizedException', 'Token expired')
    const account = this.accounts.get(claims.sub)
    if (account === undefined) throw new ApiError(401, 'UnauthorizedException', 'Unknown account')
    return account
  }

  addCharacter (name: string, opts: { modelStatus?: 'IN_PROGRESS' | 'SUCCESS' | null } = {}): SimCharacter {
    const id = randomUUID()
    const now = new Date().toISOString()
    const models: SimModel[] = opts.modelStatus === null ? [] : [{ id: randomUUID(), characterId: id, status: opts.modelStatus ?? 'IN_PROGRESS', created: now, updated: now }]
    const c = { id, name, avatarUrl: `https://cdn.example.org/avatars/${id}.png`, models }
    this.characters.set(id, c)
    return c
  }

  setModelStatus (characterId: string, status: 'IN_PROGRESS' | 'SUCCESS'): void {
    const c = this.characters.get(characterId)
    if (c === undefined) throw new Error('no such character')
    for (const m of c.models) { m.status = status; m.updated = new Date().toISOString() }
  }

  character (id: string): SimCharacter {
    const c = this.characters.get(id)
    if (c === undefined) throw new ApiError(404, 'CharacterNotFoundException', `Character ${id} not found`)
    return c
  }

  conversation (account: SimAccount, id: string): SimConversation {
    const c = this.conversations.get(id)
    if (c === undefined || c.accountId !== account.id) throw new ApiError(404, 'ConversationNotFoundException', `Conversation ${id} not found`)
    return c
  }

  speakers (c: SimConversation): unknown[] {
    const ch = this.character(c.characterId)
    const account = this.accounts.get(c.accountId)!
    return [
      { id: account.id, name: account.email, type: 'account', avatarUrl: null },
      { id: ch.id, name: ch.name, type: 'character', avatarUrl: ch.avatarUrl }
    ]
  }

  /** The deterministic reply of a character to a text. */
  replyText (c: SimConversation, text: string): string {
    return `${this.character(c.characterId).name} heard you say: ${text}`
  }

  addExchange (c: SimConversation, request: { data: string, mimeType: string }, reply: { data: string, mimeType: string }): void {
    const now = new Date().toISOString()
    c.messages.push({ id: randomUUID(), content: request.data, mimetype: request.mimeType, participant_id: c.accountId, participant_type: 'account', created: now })
    c.messages.push({ id: randomUUID(), content: reply.data, mimetype: reply.mimeType, participant_id: c.characterId, participant_type: 'character', created: now })
    c.updated = now
  }

  jobStatus (job: SimJob, now = Date.now()): 'CREATED' | 'IN_PROGRESS' | 'SUCCESS' | 'FAILED' {
    if (job.synchronous) return 'SUCCESS'
    const age = now - job.created
    if (age < this.options.jobInProgressAfterMs) return 'CREATED'
    if (age < this.options.jobDoneAfterMs) return 'IN_PROGRESS'
    return String(job.payload.prompt).includes('[fail]') ? 'FAILED' : 'SUCCESS'
  }

  jobDoneAt (job: SimJob): number {
    return job.synchronous ? job.created : job.created + this.options.jobDoneAfterMs
  }

  /**
   * Bytes of output `index` of a job (deterministic, so tests can compare): a real 64×64 PNG, a
   * gradient in colours taken from the job id, so a browser can show it.
   */
  static imageBytes (jobId: string, index: number): Buffer {
    const seed = createHash('sha256').update(`${jobId}/${index}`).digest()
    const size = 64
    const rows: Buffer[] = []
    for (let y = 0; y < size; y++) {
      const row = Buffer.alloc(1 + size * 3) // filter byte 0, then RGB
      for (let x = 0; x < size; x++) {
        row[1 + x * 3] = (seed[0]! + x * 3) & 0xff
        row[2 + x * 3] = (seed[1]! + y * 3) & 0xff
        row[3 + x * 3] = seed[2]!
      }
      rows.push(row)
    }
    const chunk = (type: string, data: Buffer): Buffer => {
      const body = Buffer.concat([Buffer.from(type, 'ascii'), data])
      const length = Buffer.alloc(4)
      length.writeUInt32BE(data.length)
      const crc = Buffer.alloc(4)
      crc.writeUInt32BE(crc32(body))
      return Buffer.concat([length, body, crc])
    }
    const header = Buffer.alloc(13)
    header.writeUInt32BE(size, 0)
    header.writeUInt32BE(size, 4)
    header[8] = 8 // bit depth
    header[9] = 2 // truecolour
    return Buffer.concat([
      Buffer.from([0x89, 0x50, 0x4e, 0x47, 0x0d, 0x0a, 0x1a, 0x0a]),
      chunk('IHDR', header),
      chunk('IDAT', deflateSync(Buffer.concat(rows))),
      chunk('IEND', Buffer.alloc(0))
    ])
  }

  fileSignature (path: string, expires: number): string {
    return createHmac('sha256', this.secret).update(`${path}?${expires}`).digest('hex').slice(0, 32)
  }
}

/** Audio bytes the simulator "speaks" (an ID3 header and a deterministic payload). */
export function audioBytes (text: string): Buffer {
  return Buffer.concat([Buffer.from('ID3'), createHash('sha256').update(text).digest()])
}
