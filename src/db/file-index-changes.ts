// The file index's change log read back (FileIndex.changesSince): the log names each changed path
// (or a deletion's tombstone); the live paths' records are read in the same snapshot, so a page
// never pairs a log entry with a record written after it.
import { padNumber } from './keys.js'
import type { FileIndexStore, StoredRecord } from './file-index-store.js'
import type { FileRecord } from './types.js'

/** One entry of the change log: the current record of a path, or the tombstone of a deleted one. */
export type ChangeEntry =
  | { seq: number; path: string; deleted: false; record: FileRecord }
  | { seq: number; path: string; deleted: true; record: null; cid: string | null; scope: string }

/** Up to `limit` changes with seq > `since`, oldest first (see FileIndex.changesSince). */
export async function readChanges (store: FileIndexStore, since: number, limit: number): Promise<ChangeEntry[]> {
  const snapshot = store.db.level.snapshot()
  try {
    const log = await store.log.iterator({ gt: padNumber(since), limit, snapshot }).all()
    const live = log.filter(([, v]) => v.deleted !== true).map(([, v]) => v.path)
    const records = live.length === 0 ? [] : await store.records.getMany(live, { snapshot })
    const byPath = new Map<string, StoredRecord>()
    for (const r of records) if (r !== undefined) byPath.set(r.path, r)
    const out: ChangeEntry[] = []
    for (const [key, v] of log) {
      const seq = Number(key)
      if (v.deleted === true) {
        out.push({ seq, path: v.path, deleted: true, record: null, cid: v.cid, scope: v.scope })
      } else {
        const record = byPath.get(v.path)
        if (record !== undefined) out.push({ seq, path: v.path, deleted: false, record })
      }
    }
    return out
  } finally {
    await snapshot.close()
  }
}
