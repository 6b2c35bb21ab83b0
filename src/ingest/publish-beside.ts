// A POST's data file and its index record written side by side instead of one after the other.
// The record is handed to the index with its journal entry (the file's bytes; one synced batch,
// group-committed), and the file's create (a temp linked to the name, unsynced: file-writer.ts)
// to the writer's thread, with the mtime the record says (set on the temp before the name
// appears); the answer waits for both. A `201` still means what it meant: the entry that restores
// the file is durable (journal.ts), and the file is under its name.
// A name found taken by the time of the link (another writer's file: the path lock keeps our own
// writes apart) keeps what it had. A name with neither record nor tombstone got our record in the
// batch: it is taken back in the batch that drops the entry, before the lock is let go, like a
// received file's (receive.ts). A name with a record or a tombstone got nothing but the entry (its
// record comes in a second batch once the file is there): only the entry is dropped, so what the
// name had stays, with whatever a DELETE (which takes no path lock) did to it meanwhile. A crash
// between our record and its revert leaves the record and an entry whose bytes are not what the
// name holds: replay sees the name's mtime is not the link's, leaves that file alone and takes the
// record back (journal.ts; it was never acknowledged), and the scan indexes that file as the name's own.
import { HearthError } from '../errors.js'
import type { FileRecord } from '../db/types.js'
import type { Replaced } from '../db/file-index.js'
import type { DurableWrite } from '../storage/durable-file.js'
import type { IngestJournal, JournalEntry } from './journal.js'
import type { IngestIndex } from './pipeline-contract.js'
import { settle, type Settled } from './ingest-many.js'
import { archivedVersion } from './ingest-file.js'

export interface BesideDeps {
  index: IngestIndex
  journal: IngestJournal
}

/**
 * The record of a name written again: a deleted file's name keeps its stored version under its
 * archive path, in the same batch; `keepOrigin`: the record keeps that version's origin.
 */
export function deriveNew (base: Omit<FileRecord, 'updatedAt'>, keepOrigin: boolean) {
  return (current: FileRecord | null): { record: FileRecord; archived?: FileRecord } => {
    const archived = current === null ? undefined : archivedVersion(current)
    const record = { ...base, origin: keepOrigin ? current?.origin ?? base.origin : base.origin, updatedAt: Date.now() }
    return archived === undefined ? { record } : { record, archived }
  }
}

/** The derive's refusal of a name that has a record or a tombstone: that change is left out of the batch, the entry is not. */
class NameHasRecord extends Error {}

export interface BesidePublisher {
  /** False once a create came back with another mtime than asked (a filesystem with coarser times): callers create, then index. */
  readonly enabled: boolean
  /**
   * Indexes `base` with `entry` while `write` creates the file (with the mtime `base` says); the
   * caller holds the path lock. The record as indexed, or 'taken' when the name held another file
   * (nothing of this one kept). Throws the create's error (nothing kept) or the index's: the file
   * stays, unindexed, or indexed with the mtime asked when only the fix of its mtime failed
   * (whether a record names the ciphertext: ask the index).
   */
  record (base: Omit<FileRecord, 'updatedAt'>, entry: JournalEntry, write: () => Promise<Settled<DurableWrite>>): Promise<FileRecord | 'taken'>
}

export function createBesidePublisher (deps: BesideDeps): BesidePublisher {
  let enabled = true

  async function record (base: Omit<FileRecord, 'updatedAt'>, entry: JournalEntry, write: () => Promise<Settled<DurableWrite>>): Promise<FileRecord | 'taken'> {
    const rel = base.path
    // the mtime tells a replay whether the file at the name is this one (journal.ts)
    const pending = deps.journal.entry({ ...entry, link: { mtimeMs: base.mtimeMs } })
    let earlier: Replaced = { record: null, tombstone: null }
    // A name with a record or a tombstone is rare (a deleted file's name written again): it is
    // indexed (its old version archived, its tombstone replaced) only once the new file is there,
    // so a record committed here replaced nothing, which is what a revert, or a replay after a
    // crash before the revert, puts back.
    const indexing = settle(deps.index.putDerived(rel, (_current, replaced) => {
      earlier = replaced
      if (replaced.record !== null || replaced.tombstone !== null) throw new NameHasRecord()
      return { record: { ...base, updatedAt: Date.now() } }
    }, { also: pending.ops }))
    // asked for once the index has its work: the writer's thread creates the file while the batch
    // is read, built and synced, and its wake-up does not delay this thread's share of that work
    const [written, indexed] = await Promise.all([write(), indexing])
    // What the batch committed: the record and the entry (ok); the entry alone when the derive
    // refused (NameHasRecord) or failed any other way (the index leaves a failed derive's change
    // out of its batch, not the batch's `also`); or nothing when the batch failed. The last two
    // are not told apart, and need not be: dropping an entry, or syncing its files and dropping
    // it, is harmless when it is not there.
    const named = !indexed.ok && indexed.error instanceof NameHasRecord
    if (!written.ok || !written.value.written) {
      // nothing of this POST is kept: only our own record is taken back
      if (indexed.ok) await deps.index.revert(rel, earlier, { also: pending.dropOps })
      else await pending.drop()
      if (!written.ok) throw written.error
      if (!indexed.ok && !named) throw indexed.error
      return 'taken'
    }
    if (!indexed.ok && !named) {
      // the file stays, unindexed (the caller hands it back to the queue): the checkpoint syncs it
      pending.committed()
      throw indexed.error
    }
    const mtimeMs = written.value.mtimeMs
    if (mtimeMs === base.mtimeMs) {
      // the entry waits for the checkpoint only once its file exists
      pending.committed()
      return indexed.ok ? indexed.value : await deps.index.putDerived(rel, deriveNew(base, true))
    }
    // The filesystem kept another time than asked (coarser times): the record and the entry's
    // link say the file's (what the start-up scan and a replay compare), in one batch that puts a
    // new entry in the old one's place; later creates are indexed after their file.
    enabled = false
    const relinked = deps.journal.entry({ ...entry, link: { mtimeMs } })
    const also = [...pending.dropOps, ...relinked.ops]
    try {
      const r = indexed.ok
        ? await deps.index.putDerived(rel, (current) => {
          if (current === null) throw new HearthError('INTERNAL', `the record of ${rel} went missing while it was written`)
          return { record: { ...current, mtimeMs, updatedAt: Date.now() } }
        }, { also })
        : await deps.index.putDerived(rel, deriveNew({ ...base, mtimeMs }, true), { also })
      relinked.committed()
      return r
    } catch (err) {
      // the old entry (a failed batch) or the new one (a failed derive: `also` is committed all
      // the same), and the checkpoint drops both
      pending.committed()
      relinked.committed()
      throw err
    }
  }

  return { get enabled () { return enabled }, record }
}
