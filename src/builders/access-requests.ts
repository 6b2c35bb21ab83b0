// Pending, approved and denied access requests (docs/protocol.md §3.8). Ids sort by creation
// time, so listing newest first is a reverse range read; a second namespace holds the pending
// ones per builder, which bounds how many a builder can have open.
import type { Address } from 'viem'
import type { HearthDatabase, Sublevel } from '../db/database.js'
import { joinKey, rangeOf } from '../db/keys.js'
import { Mutex } from '../db/mutex.js'
import { HearthError } from '../errors.js'
import { timeOrderedId } from './ids.js'
import type { AccessRequest, AccessRequestStatus } from './types.js'

export interface NewAccessRequest {
  builder: Address
  scopes: string[]
  expiresAt: number
  appUrl: string | null
  purpose: string | null
}

export interface AccessRequestStore {
  create (input: NewAccessRequest, opts: { maxPendingPerBuilder: number }): Promise<AccessRequest>
  get (id: string): Promise<AccessRequest | null>
  /** Newest first; `before` is the id the previous page ended with. */
  list (opts?: { status?: AccessRequestStatus; limit?: number; before?: string }): Promise<AccessRequest[]>
  /** Approve or deny a pending request; CONFLICT when it was decided already. */
  decide (id: string, status: 'approved' | 'denied', grantId: string | null): Promise<AccessRequest>
  /** Checks a decision is possible without making it (CONFLICT / NOT_FOUND). */
  pending (id: string): Promise<AccessRequest>
}

export function openAccessRequests (db: HearthDatabase): AccessRequestStore {
  const byId: Sublevel<AccessRequest> = db.sublevel(['builders', 'requests'])
  const pendingByBuilder: Sublevel<string> = db.sublevel(['builders', 'requests-pending'], { valueEncoding: 'utf8' })
  const mutex = new Mutex()

  async function pending (id: string): Promise<AccessRequest> {
    const r = await byId.get(id)
    if (r === undefined) throw new HearthError('NOT_FOUND', `no access request ${id}`)
    if (r.status !== 'pending') throw new HearthError('CONFLICT', `access request ${id} was ${r.status} already`, { status: r.status })
    return r
  }

  return {
    async create (input, opts) {
      return await mutex.run(async () => {
        const open = await pendingByBuilder.keys({ ...rangeOf(input.builder.toLowerCase()), limit: opts.maxPendingPerBuilder }).all()
        if (open.length >= opts.maxPendingPerBuilder) {
          throw new HearthError('ACCESS_REQUEST_LIMIT', `this builder already has ${open.length} pending access requests; wait for the owner to answer them`, { limit: opts.maxPendingPerBuilder })
        }
        const request: AccessRequest = { id: timeOrderedId('req'), ...input, createdAt: new Date().toISOString(), status: 'pending', decidedAt: null, grantId: null }
        await db.batch([
          { type: 'put', sublevel: byId, key: request.id, value: request },
          { type: 'put', sublevel: pendingByBuilder, key: joinKey(input.builder.toLowerCase(), request.id), value: '' }
        ])
        return request
      })
    },
    async get (id) { return (await byId.get(id)) ?? null },
    async list (opts = {}) {
      const limit = opts.limit ?? 100
      const out: AccessRequest[] = []
      for await (const r of byId.values({ reverse: true, ...(opts.before !== undefined ? { lt: opts.before } : {}) })) {
        if (opts.status === undefined || r.status === opts.status) out.push(r)
        if (out.length >= limit) break
      }
      return out
    },
    pending,
    async decide (id, status, grantId) {
      return await mutex.run(async () => {
        const r = await pending(id)
        const decided: AccessRequest = { ...r, status, grantId, decidedAt: new Date().toISOString() }
        await db.batch([
          { type: 'put', sublevel: byId, key: id, value: decided },
          { type: 'del', sublevel: pendingByBuilder, key: joinKey(r.builder.toLowerCase(), id) }
        ])
        return decided
      })
    }
  }
}
