// Files received from peers that wait here for their schema (parked), summarised for display.
import type { SyncState } from './state.js'

export interface WaitingSummary {
  count: number
  bytes: number
  bySchema: Array<{ schemaId: string; count: number }>
  byPeer: Record<string, number>
  /** The oldest few, for `hearth status`. */
  files: Array<{ cid: string; schemaId: string; collectedAt: string; size: number; peerId: string; since: string }>
}

const WAITING_FILES_SHOWN = 20

export async function waitingSummary (state: Pick<SyncState, 'allParked'>): Promise<WaitingSummary> {
  const summary: WaitingSummary = { count: 0, bytes: 0, bySchema: [], byPeer: {}, files: [] }
  const bySchema = new Map<string, number>()
  for await (const p of state.allParked()) {
    summary.count++
    summary.bytes += p.entry.size
    bySchema.set(p.entry.schemaId, (bySchema.get(p.entry.schemaId) ?? 0) + 1)
    summary.byPeer[p.peerId] = (summary.byPeer[p.peerId] ?? 0) + 1
    if (summary.files.length < WAITING_FILES_SHOWN) {
      summary.files.push({ cid: p.entry.cid, schemaId: p.entry.schemaId, collectedAt: p.entry.collectedAt, size: p.entry.size, peerId: p.peerId, since: new Date(p.at).toISOString() })
    }
  }
  summary.bySchema = [...bySchema].map(([schemaId, count]) => ({ schemaId, count })).sort((a, b) => b.count - a.count)
  return summary
}

/** Parked files per peer, for `hearth peers`. */
export async function waitingByPeer (state: Pick<SyncState, 'allParked'>): Promise<Record<string, number>> {
  const out: Record<string, number> = {}
  for await (const p of state.allParked()) out[p.peerId] = (out[p.peerId] ?? 0) + 1
  return out
}
