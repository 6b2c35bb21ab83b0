// Follows the index's change log for one pinning service, from a cursor kept in the database:
// every stored ciphertext becomes a pin to ask for, every ciphertext no record names any more (its
// scope or file deleted) a pin to remove. The cursor moves only after the work is queued, and
// queueing is idempotent, so a crash between the two only queues the same work again; a service
// added to the configuration later starts at seq 0 and so catches up with everything stored.
import type { Kv } from '../db/database.js'
import type { ChangeEntry, FileIndex } from '../db/file-index.js'
import type { DurableQueue } from '../db/types.js'
import type { PinRecord, PinRecords } from './records.js'

/** Changes read per step. */
const PAGE = 500

export interface PinFollowerDeps {
  index: Pick<FileIndex, 'changesSince' | 'byCid'>
  records: PinRecords
  /** Work items are keyed by CID; the record says what is wanted. */
  queue: DurableQueue<{ cid: string }>
  cursor: Kv<number>
}

/** Reads one page of changes; true when there may be more. */
export async function followChanges (deps: PinFollowerDeps): Promise<boolean> {
  const since = (await deps.cursor.get('seq')) ?? 0
  const changes = await deps.index.changesSince(since, PAGE)
  if (changes.length === 0) return false
  // The page's records are read together and written together: one at a time, a page took
  // seconds while POSTs kept the database busy, and pinning fell behind the burst it follows.
  const cids = [...new Set(changes.map(changedCid).filter((c): c is string => c !== null))]
  const known = new Map<string, PinRecord | null>()
  await Promise.all(cids.map(async (cid) => { known.set(cid, await deps.records.get(cid)) }))
  const changed = new Map<string, PinRecord>()
  for (const change of changes) {
    const cid = changedCid(change)
    if (cid === null) continue
    const record = changed.get(cid) ?? known.get(cid) ?? null
    if (!change.deleted) {
      // a CID already known is the worker's to move on (a registration changes the record again)
      if (record !== null && record.state !== 'removing') continue
      changed.set(cid, { cid, scope: change.record.scope, state: 'queued', requestId: record?.requestId ?? null, error: null, verified: false, updatedAt: 0 })
    } else {
      if (record === null || (await deps.index.byCid(cid)).length > 0) continue
      changed.set(cid, { ...record, state: 'removing', error: null })
    }
  }
  // queued first: a crash before the records are written replays the page and finds them unknown
  await deps.queue.enqueueMany([...changed.keys()].map((cid) => ({ key: cid, item: { cid } })))
  await Promise.all([...changed.values()].map(async (record) => { await deps.records.put(record) }))
  await deps.cursor.put('seq', changes[changes.length - 1].seq)
  return changes.length === PAGE
}

/** The CID a change asks to pin (a stored ciphertext) or maybe to remove (a deleted record); null for neither. */
function changedCid (change: ChangeEntry): string | null {
  if (change.deleted) return change.cid
  const r = change.record
  return r.cid !== null && (r.state === 'stored' || r.state === 'registered') ? r.cid : null
}
