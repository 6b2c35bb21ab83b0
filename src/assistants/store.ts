// Connections and their requests, in the one database. Ids sort by creation time (newest first is
// a reverse range read). A connection is found by its client (`by-key`: `stdio:` + its name, or
// `http:` + its OAuth client id), so a client approved once is remembered; a revoked or denied
// connection is never reused: the client's next start asks again. The pending requests are
// indexed by connection (`requests-pending`), so counting and finding them never reads the
// decided ones.
import { randomBytes } from 'node:crypto'
import type { HearthDatabase, Sublevel } from '../db/database.js'
import type { BatchOp } from '../db/database.js'
import { joinKey, lastPart, rangeOf } from '../db/keys.js'
import { Mutex } from '../db/mutex.js'
import { HearthError } from '../errors.js'
import { checkPatterns, patternWithin } from '../protocol/scope-pattern.js'
import type { AssistantConnection, AssistantRequest, ConnectionKind } from './types.js'

/** Pending requests kept at once (every client together): more are refused, so a flood of new names stays bounded. */
export const MAX_PENDING_REQUESTS = 100

export function assistantId (prefix: 'asst' | 'areq', now = Date.now()): string {
  return `${prefix}_${now.toString(36).padStart(9, '0')}${randomBytes(5).toString('hex')}`
}

export interface ConnectionStore {
  get (id: string): Promise<AssistantConnection | null>
  list (opts?: { limit?: number }): Promise<AssistantConnection[]>
  /** The live (pending or active) connection of a client, or a new pending one with its `connect` request. */
  connect (kind: ConnectionKind, key: string, init: { name: string; clientId: string | null; scopes: string[] }): Promise<{ connection: AssistantConnection; request: AssistantRequest | null }>
  /** The pending request of a connection (its `connect` one first), or null. */
  pendingRequestOf (connectionId: string): Promise<AssistantRequest | null>
  getRequest (id: string): Promise<AssistantRequest | null>
  listRequests (opts?: { status?: AssistantRequest['status']; limit?: number }): Promise<AssistantRequest[]>
  askMore (connectionId: string, scopes: string[], purpose: string | null): Promise<AssistantRequest>
  /** Approve (grant `scopes`, default what was asked) or deny; CONFLICT when decided already. */
  decide (requestId: string, decision: 'approved' | 'denied', scopes?: unknown): Promise<{ request: AssistantRequest; connection: AssistantConnection }>
  /** Keeps only scopes covered by the current grant (INVALID_ARGUMENT otherwise). */
  narrow (id: string, scopes: unknown): Promise<AssistantConnection>
  revoke (id: string): Promise<AssistantConnection>
  touch (id: string): Promise<void>
}

const LIVE = new Set(['pending', 'active'])
const TOUCH_EVERY_MS = 60_000

export function openConnectionStore (db: HearthDatabase): ConnectionStore {
  const connections: Sublevel<AssistantConnection> = db.sublevel(['assistants', 'connections'])
  const requests: Sublevel<AssistantRequest> = db.sublevel(['assistants', 'requests'])
  const byKey: Sublevel<string> = db.sublevel(['assistants', 'by-key'], { valueEncoding: 'utf8' })
  const pendingIndex: Sublevel<string> = db.sublevel(['assistants', 'requests-pending'], { valueEncoding: 'utf8' })
  const mutex = new Mutex()
  const touched = new Map<string, number>()

  async function mustGet (id: string): Promise<AssistantConnection> {
    const c = await connections.get(id)
    if (c === undefined) throw new HearthError('NOT_FOUND', `no assistant connection ${id}`)
    return c
  }

  /** A new pending request and the writes that store it (for the caller's batch). */
  async function newRequest (connectionId: string, kind: AssistantRequest['kind'], scopes: string[], purpose: string | null): Promise<{ request: AssistantRequest; ops: BatchOp[] }> {
    const open = await pendingIndex.keys({ limit: MAX_PENDING_REQUESTS }).all()
    if (open.length >= MAX_PENDING_REQUESTS) {
      throw new HearthError('ACCESS_REQUEST_LIMIT', `${MAX_PENDING_REQUESTS} assistant requests are waiting already; the owner must answer them first`, { limit: MAX_PENDING_REQUESTS })
    }
    const request: AssistantRequest = { id: assistantId('areq'), connectionId, kind, scopes, purpose, status: 'pending', createdAt: new Date().toISOString(), decidedAt: null }
    return {
      request,
      ops: [
        { type: 'put', sublevel: requests, key: request.id, value: request },
        { type: 'put', sublevel: pendingIndex, key: joinKey(connectionId, request.id), value: '' }
      ]
    }
  }

  async function pendingOf (connectionId: string): Promise<AssistantRequest[]> {
    const keys = await pendingIndex.keys(rangeOf(connectionId)).all()
    return (await requests.getMany(keys.map(lastPart))).filter((r): r is AssistantRequest => r?.status === 'pending')
  }

  /** The `connect` request first, else the newest. */
  async function pendingRequestOf (connectionId: string): Promise<AssistantRequest | null> {
    const open = await pendingOf(connectionId)
    return open.find((r) => r.kind === 'connect') ?? open.at(-1) ?? null
  }

  return {
    async get (id) { return (await connections.get(id)) ?? null },
    async list (opts = {}) { return await connections.values({ reverse: true, limit: opts.limit ?? 200 }).all() },
    async connect (kind, key, init) {
      return await mutex.run(async () => {
        const indexKey = `${kind}:${key}`
        const knownId = await byKey.get(indexKey)
        const known = knownId === undefined ? undefined : await connections.get(knownId)
        if (known !== undefined && LIVE.has(known.status)) {
          return { connection: known, request: known.status === 'pending' ? await pendingRequestOf(known.id) : null }
        }
        const connection: AssistantConnection = {
          id: assistantId('asst'), kind, name: init.name, clientId: init.clientId, scopes: [], status: 'pending',
          createdAt: new Date().toISOString(), approvedAt: null, revokedAt: null, lastUsedAt: null
        }
        const { request, ops } = await newRequest(connection.id, 'connect', init.scopes, null)
        await db.batch([
          ...ops,
          { type: 'put', sublevel: connections, key: connection.id, value: connection },
          { type: 'put', sublevel: byKey, key: indexKey, value: connection.id }
        ])
        return { connection, request }
      })
    },
    pendingRequestOf,
    async getRequest (id) { return (await requests.get(id)) ?? null },
    async listRequests (opts = {}) {
      if (opts.status === 'pending') {
        // at most MAX_PENDING_REQUESTS, through the index: newest first
        const keys = await pendingIndex.keys({ limit: MAX_PENDING_REQUESTS }).all()
        const open = (await requests.getMany(keys.map(lastPart))).filter((r): r is AssistantRequest => r?.status === 'pending')
        return open.sort((a, b) => (a.id < b.id ? 1 : -1)).slice(0, opts.limit ?? 100)
      }
      const out: AssistantRequest[] = []
      for await (const r of requests.values({ reverse: true })) {
        if (opts.status === undefined || r.status === opts.status) out.push(r)
        if (out.length >= (opts.limit ?? 100)) break
      }
      return out
    },
    async askMore (connectionId, scopes, purpose) {
      return await mutex.run(async () => {
        const c = await mustGet(connectionId)
        if (c.status !== 'active') throw new HearthError('FORBIDDEN', `connection ${connectionId} is ${c.status}`)
        const wanted = checkPatterns(scopes, 'scopes').filter((p) => !patternWithin(p, c.scopes))
        if (wanted.length === 0) throw new HearthError('CONFLICT', 'every scope asked for is granted already')
        const { request, ops } = await newRequest(connectionId, 'more-scopes', wanted, purpose)
        await db.batch(ops)
        return request
      })
    },
    async decide (requestId, decision, scopes) {
      return await mutex.run(async () => {
        const r = await requests.get(requestId)
        if (r === undefined) throw new HearthError('NOT_FOUND', `no assistant request ${requestId}`)
        if (r.status !== 'pending') throw new HearthError('CONFLICT', `assistant request ${requestId} was ${r.status} already`, { status: r.status })
        const c = await mustGet(r.connectionId)
        if (!LIVE.has(c.status)) throw new HearthError('CONFLICT', `connection ${c.id} is ${c.status}`, { status: c.status })
        const now = new Date().toISOString()
        let next: AssistantConnection
        // a request records what the owner granted by it (the asked scopes, or the owner's choice)
        let decided: AssistantRequest = { ...r, status: decision, decidedAt: now }
        if (decision === 'denied') {
          next = r.kind === 'connect' ? { ...c, status: 'denied', revokedAt: now } : c
        } else {
          const given = scopes === undefined || scopes === null ? r.scopes : checkPatterns(scopes, 'scopes')
          if (given.length === 0) throw new HearthError('INVALID_ARGUMENT', 'this request names no scopes: say which to grant (--scope PATTERN, or scopes in the body)')
          const granted = r.kind === 'connect' ? given : [...c.scopes, ...given.filter((p) => !c.scopes.includes(p))]
          next = { ...c, scopes: granted, status: 'active', approvedAt: c.approvedAt ?? now }
          decided = { ...decided, scopes: given }
        }
        await db.batch([
          { type: 'put', sublevel: requests, key: r.id, value: decided },
          { type: 'del', sublevel: pendingIndex, key: joinKey(r.connectionId, r.id) },
          { type: 'put', sublevel: connections, key: c.id, value: next }
        ])
        return { request: decided, connection: next }
      })
    },
    async narrow (id, scopes) {
      return await mutex.run(async () => {
        const c = await mustGet(id)
        if (c.status !== 'active') throw new HearthError('CONFLICT', `connection ${id} is ${c.status}`, { status: c.status })
        const next = checkPatterns(scopes, 'scopes')
        const wider = next.filter((p) => !patternWithin(p, c.scopes))
        if (wider.length > 0) throw new HearthError('INVALID_ARGUMENT', `narrowing cannot add ${wider.join(', ')}: the connection's grant is ${c.scopes.join(', ')}`)
        const narrowed = { ...c, scopes: next }
        await connections.put(id, narrowed)
        return narrowed
      })
    },
    async revoke (id) {
      return await mutex.run(async () => {
        const c = await mustGet(id)
        if (c.status === 'revoked' || c.status === 'denied') return c
        const revoked: AssistantConnection = { ...c, status: 'revoked', revokedAt: new Date().toISOString() }
        const ops: BatchOp[] = [{ type: 'put', sublevel: connections, key: id, value: revoked }]
        for (const r of await pendingOf(id)) {
          ops.push({ type: 'put', sublevel: requests, key: r.id, value: { ...r, status: 'denied', decidedAt: revoked.revokedAt } })
          ops.push({ type: 'del', sublevel: pendingIndex, key: joinKey(id, r.id) })
        }
        await db.batch(ops)
        return revoked
      })
    },
    async touch (id) {
      // the time of the last use, written at most once a minute per connection
      const now = Date.now()
      if (now - (touched.get(id) ?? 0) < TOUCH_EVERY_MS) return
      touched.set(id, now)
      await mutex.run(async () => {
        const c = await connections.get(id)
        if (c !== undefined) await connections.put(id, { ...c, lastUsedAt: new Date(now).toISOString() })
      })
    }
  }
}
