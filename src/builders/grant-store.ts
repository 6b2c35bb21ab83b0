// Grants the owner approved (docs/protocol.md §3.8), with two lookups a signed read needs — by
// on-chain permission id, and a builder's grants — and a read counter per grant. The counter is
// kept in memory once loaded and written in the same batch as the access-log entry of the read
// (`readOp`), so a count never drifts from the log.
import type { HearthDatabase, BatchOp, Sublevel } from '../db/database.js'
import { joinKey, lastPart, rangeOf } from '../db/keys.js'
import type { GrantRecord } from './types.js'

export interface GrantStore {
  get (grantId: string): Promise<GrantRecord | null>
  byPermissionId (permissionId: string): Promise<GrantRecord | null>
  byBuilder (builder: string): Promise<GrantRecord[]>
  /** Newest first; `before` is the id the previous page ended with. */
  list (opts?: { limit?: number; before?: string }): Promise<GrantRecord[]>
  put (record: GrantRecord): Promise<void>
  /** Applies `change` to the stored record atomically with respect to other updates; null when gone. */
  update (grantId: string, change: (r: GrantRecord) => GrantRecord): Promise<GrantRecord | null>
  reads (grantId: string): Promise<number>
  /**
   * The write that counts one more read of the grant, for the caller's batch. Calls count in the
   * order they are made (each write holds the count so far): commit their batches in that order.
   */
  readOp (grantId: string): Promise<BatchOp>
}

export function openGrantStore (db: HearthDatabase): GrantStore {
  const byId: Sublevel<GrantRecord> = db.sublevel(['builders', 'grants'])
  const byPermission: Sublevel<string> = db.sublevel(['builders', 'grants-by-permission'], { valueEncoding: 'utf8' })
  const byBuilderIdx: Sublevel<string> = db.sublevel(['builders', 'grants-by-builder'], { valueEncoding: 'utf8' })
  const readCounts: Sublevel<number> = db.sublevel(['builders', 'grant-reads'])
  const counts = new Map<string, number>()
  let updating: Promise<unknown> = Promise.resolve()
  let counting: Promise<unknown> = Promise.resolve()

  async function put (record: GrantRecord): Promise<void> {
    const ops: BatchOp[] = [
      { type: 'put', sublevel: byId, key: record.grantId, value: record },
      { type: 'put', sublevel: byBuilderIdx, key: joinKey(record.builder.toLowerCase(), record.grantId), value: '' }
    ]
    if (record.permissionId !== null) ops.push({ type: 'put', sublevel: byPermission, key: record.permissionId, value: record.grantId })
    await db.batch(ops)
  }

  async function count (grantId: string): Promise<number> {
    let n = counts.get(grantId)
    if (n === undefined) {
      n = (await readCounts.get(grantId)) ?? 0
      // a concurrent loader may have counted meanwhile: keep the larger
      n = Math.max(n, counts.get(grantId) ?? 0)
      counts.set(grantId, n)
    }
    return n
  }

  return {
    async get (grantId) { return (await byId.get(grantId)) ?? null },
    async byPermissionId (permissionId) {
      const grantId = await byPermission.get(permissionId)
      return grantId === undefined ? null : (await byId.get(grantId)) ?? null
    },
    async byBuilder (builder) {
      const keys = await byBuilderIdx.keys(rangeOf(builder.toLowerCase())).all()
      const found = await byId.getMany(keys.map(lastPart))
      return found.filter((r): r is GrantRecord => r !== undefined)
    },
    async list (opts = {}) {
      return await byId.values({ reverse: true, limit: opts.limit ?? 100, ...(opts.before !== undefined ? { lt: opts.before } : {}) }).all()
    },
    put,
    async update (grantId, change) {
      const run = updating.then(async () => {
        const r = await byId.get(grantId)
        if (r === undefined) return null
        const next = change(r)
        await put(next)
        return next
      })
      updating = run.catch(() => undefined)
      return await run
    },
    async reads (grantId) { return await count(grantId) },
    async readOp (grantId) {
      // one at a time: concurrent first reads of a grant each load its count from LevelDB, and
      // its thread pool may answer them in any order; counted in that order, the batch committed
      // last could hold a lower count than one before it, and a restart would lose reads
      const run = counting.then(async () => {
        const n = await count(grantId) + 1
        counts.set(grantId, n)
        return { type: 'put' as const, sublevel: readCounts, key: grantId, value: n }
      })
      counting = run.catch(() => undefined)
      return await run
    }
  }
}
