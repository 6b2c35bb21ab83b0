// Follows the index's change log for one pinning service, from a cursor kept in the database:
// every stored ciphertext becomes a pin to ask for, every ciphertext no record names any more (its
// scope or file deleted) a pin to remove. The cursor moves only after the work is queued, and
// queueing is idempotent, so a crash between the two only queues the same work again; a service
// added to the configuration later starts at seq 0 and so catches up with everything stored.
import type { Kv } from '../db/database.js'
import type { FileIndex } from '../db/file-index.js'
import type { DurableQueue } from '../db/types.js'
import type { PinRecords } from './records.js'

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
  for (const change of changes) {
    if (!change.deleted) {
      const r = change.record
      if (r.cid === null || (r.state !== 'stored' && r.state !== 'registered')) continue
      // a CID already known is the worker's to move on (a registration changes the record again)
      const known = await deps.records.get(r.cid)
      if (known !== null && known.state !== 'removing') continue
      await deps.records.put({ cid: r.cid, scope: r.scope, state: 'queued', requestId: known?.requestId ?? null, error: null, verified: false, updatedAt: 0 })
      await deps.queue.enqueue(r.cid, { cid: r.cid })
    } else if (change.cid !== null) {
      const known = await deps.records.get(change.cid)
      if (known === null || (await deps.index.byCid(change.cid)).length > 0) continue
      await deps.records.put({ ...known, state: 'removing', error: null })
      await deps.queue.enqueue(change.cid, { cid: change.cid })
    }
  }
  await deps.cursor.put('seq', changes[changes.length - 1].seq)
  return changes.length === PAGE
}
