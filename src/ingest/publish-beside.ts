// A POST's data file and its index record written side by side instead of one after the other.
// The record is handed to the index with its journal entry (the file's bytes; one synced batch,
// group-committed), and the file's create (a temp linked to the name, unsynced: file-writer.ts)
// to the writer's thread, with the mtime the record says (set on the temp before the name
// appears); the answer waits for both. A `201` still means what it meant: the entry that restores
// the file is durable (journal.ts), and the file is under its name.
// A name found taken by the time of the link (another writer's file: the path lock keeps our own
// writes apart) gets its earlier record back, or none and no tombstone, in the batch that drops the
// entry, before the lock is let go, like a received file's (receive.ts). A crash between the
// record and the revert leaves a record and an entry whose bytes are not what the name holds:
// replay sees the name's mtime is not the record's and leaves that file alone (journal.ts), and the
// scan then indexes it as the name's next version, keeping ours as the one before (a write that
// was committed but never acknowledged, as after any crash between the commit and the answer).
import { HearthError } from '../errors.js'
import type { FileRecord } from '../db/types.js'
import type { Replaced } from '../db/file-index.js'
import type { DurableWrite } from '../storage/durable-file.js'
import type { IngestJournal, JournalEntry } from './journal.js'
import type { IngestIndex } from './pipeline-contract.js'
import type { Settled } from './ingest-many.js'
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
   * (the index and journal then as they were). Throws the create's error (nothing kept) or the
   * index's (the file stays, unindexed).
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
    const indexing = deps.index.putDerived(rel, (_current, replaced) => {
      earlier = replaced
      if (replaced.record !== null || replaced.tombstone !== null) throw new NameHasRecord()
      return { record: { ...base, updatedAt: Date.now() } }
    }, { also: pending.ops }).then((value) => ({ ok: true as const, value }), (error: unknown) => ({ ok: false as const, error }))
    // asked for once the index has its work: the writer's thread creates the file while the batch
    // is read, built and synced, and its wake-up does not delay this thread's share of that work
    const writing = write()
    const [written, indexed] = await Promise.all([writing, indexing])
    const named = !indexed.ok && indexed.error instanceof NameHasRecord
    // what the batch committed: the record and the entry, the entry alone, or nothing (it failed)
    const committed = indexed.ok || named
    if (!written.ok || !written.value.written) {
      if (committed) await deps.index.revert(rel, earlier, { also: pending.dropOps })
      if (!written.ok) throw written.error
      if (!committed) throw indexed.error
      return 'taken'
    }
    if (!committed) throw indexed.error
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
    let r: FileRecord
    try {
      r = indexed.ok
        ? await deps.index.putDerived(rel, (current) => {
          if (current === null) throw new HearthError('INTERNAL', `the record of ${rel} went missing while it was written`)
          return { record: { ...current, mtimeMs, updatedAt: Date.now() } }
        }, { also })
        : await deps.index.putDerived(rel, deriveNew({ ...base, mtimeMs }, true), { also })
    } catch (err) {
      pending.committed()
      throw err
    }
    relinked.committed()
    return r
  }

  return { get enabled () { return enabled }, record }
}
