// The state of every CID at one pinning service, kept in the index database (a Kv namespace per
// service, keyed by CID) so a restart resumes where it was, and counted by state in memory for
// `hearth status` (counted once at start, then kept up to date by every change made here).
import type { Kv } from '../db/database.js'

/** queued: not yet accepted by the service; pinning: accepted, not there yet; pinned: the service
 *  holds it; failed: the service could not (or said pinned but did not serve the bytes); removing:
 *  its scope was deleted and the service is being told to drop it. */
export type PinState = 'queued' | 'pinning' | 'pinned' | 'failed' | 'removing'
export const PIN_STATES: readonly PinState[] = ['queued', 'pinning', 'pinned', 'failed', 'removing']

export interface PinRecord {
  cid: string
  scope: string
  state: PinState
  /** The service's id of our pin request, once it accepted one. */
  requestId: string | null
  /** Why it is failed (or what last went wrong), with the error code first. */
  error: string | null
  /** A sample read through the service's gateway returned the verified bytes. */
  verified: boolean
  updatedAt: number
}

export interface PinRecords {
  get (cid: string): Promise<PinRecord | null>
  put (record: PinRecord): Promise<void>
  del (cid: string): Promise<void>
  counts (): Record<PinState, number>
  /** Records in CID order, optionally only one state, after `after` (paging). */
  list (opts: { state?: PinState; after?: string; limit: number }): Promise<PinRecord[]>
  /** Counts every record once (at start). */
  load (): Promise<void>
}

export function createPinRecords (kv: Kv<PinRecord>): PinRecords {
  const counts = Object.fromEntries(PIN_STATES.map((s) => [s, 0])) as Record<PinState, number>
  const bump = (state: PinState | undefined, by: number): void => { if (state !== undefined) counts[state] = Math.max(0, counts[state] + by) }
  return {
    async get (cid) { return (await kv.get(cid)) ?? null },
    async put (record) {
      const before = await kv.get(record.cid)
      await kv.put(record.cid, { ...record, updatedAt: Date.now() })
      bump(before?.state, -1)
      bump(record.state, +1)
    },
    async del (cid) {
      const before = await kv.get(cid)
      if (before === undefined) return
      await kv.del(cid)
      bump(before.state, -1)
    },
    counts () { return { ...counts } },
    async list ({ state, after, limit }) {
      const out: PinRecord[] = []
      for await (const [key, record] of kv.entries()) {
        if (after !== undefined && key <= after) continue
        if (state !== undefined && record.state !== state) continue
        out.push(record)
        if (out.length >= limit) break
      }
      return out
    },
    async load () {
      for (const s of PIN_STATES) counts[s] = 0
      for await (const [, record] of kv.entries()) bump(record.state, +1)
    }
  }
}
