// The ingest journal: how a stored file is acknowledged after ONE sync instead of one per file
// written. The data file (when the pipeline wrote it) and the ciphertext block are written at
// once without fsyncs of their own (readable immediately); their bytes go into a journal entry
// in the same LevelDB batch as the index record, and that batch is synced and group-committed
// with every concurrent request's. So when the answer is given, a power cut can lose the files'
// pages but never the entry that restores them.
//
// A background checkpoint then makes the files durable in big groups (createFileSyncer: one
// syncfs per filesystem on Linux) and drops their entries with an unsynced batch (a lost drop is
// replayed again, harmlessly). At start, before anything reads the data folder, `replay` writes
// every entry still there again: the data file when it is missing or torn, and the block
// (content-addressed, a rename over whatever is left) while a record names it; then syncs and
// drops them. Replay is idempotent, a power cut during it included: a file it writes is synced
// (with the mtime the entry's link names) before its name points at it, so the name then holds
// either the file replay found (restored again by the next replay) or the whole file.
//
// A file received from a peer too large for an entry is announced by an intent (`intend`: its
// index record but the mtime, synced) before its data file is written; the record's batch drops
// it. Replay indexes a whole file an intent names as received (origin and CID of the peer's),
// so the start-up scan never takes it for a local file; a file never written leaves nothing, and
// the peer's file is fetched again.
import { randomBytes } from 'node:crypto'
import { lstat } from 'node:fs/promises'
import type { BigIntStats } from 'node:fs'
import type { BatchOp, HearthDatabase, Sublevel } from '../db/database.js'
import type { FileRecord } from '../db/types.js'
import type { FileIndex, Replaced } from '../db/file-index.js'
import type { Logger } from '../log.js'
import type { StorageBackend } from '../storage/types.js'
import type { SyncFiles } from '../storage/deferred-sync.js'
import { writeFileDurably } from '../storage/durable-file.js'
import { mtimeMsOf, reportedMtimeMs } from '../storage/file-times.js'
import { absoluteDataPath } from './layout.js'
import { readDataFileOrNull, sha256Hex } from './data-file.js'
import { decodeJournalEntry, encodeJournalEntry, type StoredEntry } from './journal-entry.js'

/** What a journal entry restores after a power cut. */
export interface JournalEntry {
  /** The data file, relative to the data folder. */
  path: string
  /** The data file's bytes, when the pipeline wrote the file itself (a POST). */
  data?: Uint8Array
  /** The ciphertext `storage.addUnsynced` wrote, and its CID. */
  ciphertext?: Uint8Array
  cid?: string
  /** Absolute paths written without a sync, synced by the checkpoint. */
  files: string[]
  /**
   * A file linked to its name once this entry is committed, or while it is (a received file:
   * receive.ts; a POST's: publish-beside.ts): the inode the name then has (a received file's,
   * staged first) or the mtime it is given (a POST's, whose temp the writer's thread picks; with
   * random microseconds: file-times.ts), and what the name had before (its record, or its
   * deletion's tombstone; absent: neither). A power cut tears a file's pages, not its inode's
   * number or times, and a file replay writes again keeps the mtime (it is synced before its name
   * points at it, so no name ever holds a torn inode of replay's). So a replay that finds another
   * inode or mtime there with other bytes knows the link found the name taken (a crash came
   * before the revert): it leaves that file alone and, while the name's record is still this
   * entry's, puts `earlier` back instead (and unpins the entry's ciphertext).
   */
  link?: { ino?: number; mtimeMs?: number; earlier?: FileRecord | Replaced }
}

async function lstatOrNull (abs: string): Promise<BigIntStats | null> {
  return await lstat(abs, { bigint: true }).catch((err: NodeJS.ErrnoException) => { if (err.code === 'ENOENT') return null; throw err })
}

/**
 * Whether the file at a name (`st`) is the one an entry's link put there: its inode, and its mtime
 * in whole microseconds from the exact nanoseconds (file-times.ts), which a time set here has on
 * every Node version; or its mtime as plain stat reports it, which an entry of an earlier version
 * of Hearth may hold.
 */
function linkedThere (link: NonNullable<JournalEntry['link']>, st: BigIntStats): boolean {
  return (link.ino === undefined || Number(st.ino) === link.ino) &&
    (link.mtimeMs === undefined || mtimeMsOf(st) === link.mtimeMs || reportedMtimeMs(st) === link.mtimeMs)
}

/** A stored ciphertext; `unsynced` when storage wrote it without a sync (the journal covers it). */
export interface StoredCiphertext {
  cid: string
  encryptedSize: number
  unsynced?: { ciphertext: Uint8Array; files: string[] }
  /** The plaintext's SHA-256 (hex) when the encryption worker hashed it on the way (encrypt-store.ts). */
  plaintextSha256?: string
}

/** The journal entry of a stored file, when anything of it was written without a sync. */
export function journalEntryOf (rel: string, stored: StoredCiphertext, data: { bytes: Uint8Array; abs: string } | null, alsoSync: string[] = []): JournalEntry | undefined {
  if (stored.unsynced === undefined && data === null) return undefined
  return {
    path: rel,
    ...(data !== null ? { data: data.bytes } : {}),
    ...(stored.unsynced !== undefined ? { ciphertext: stored.unsynced.ciphertext, cid: stored.cid } : {}),
    files: [...(data !== null ? [data.abs] : []), ...(stored.unsynced?.files ?? []), ...alsoSync]
  }
}

/**
 * The one way an index write commits a journal entry: `write` gets the entry's ops to put in its
 * batch (none without a journal or an entry), and the entry waits for the checkpoint once that
 * batch is written, or failed: a failed derive leaves its record out of the batch but not the
 * entry, and the entry's files exist either way.
 */
export async function commitWithEntry<T> (journal: IngestJournal | undefined, entry: JournalEntry | undefined, write: (also: BatchOp[] | undefined) => Promise<T>): Promise<T> {
  const pending = entry === undefined || journal === undefined ? null : journal.entry(entry)
  try {
    return await write(pending?.ops)
  } finally {
    pending?.committed()
  }
}

/** A received file's index record before its data file exists (its mtime comes from the file). */
export type ReceivedRecord = Omit<FileRecord, 'updatedAt' | 'mtimeMs'>

/** A committed intent: `done` goes into the file's index batch; `drop` when no file was written. */
export interface ReceiveIntent { done: BatchOp[]; drop: () => Promise<void> }

/** An entry ready to be committed: its ops go into the index batch, then `committed()`. */
export interface PendingEntry {
  ops: BatchOp[]
  /**
   * Hands the entry to the checkpoint once its files exist (it syncs them and drops the entry): also
   * right for an entry whose batch may have failed, whose drop is then a delete of nothing.
   */
  committed: () => void
  /** The writes that remove a committed entry whose files were not written after all. */
  dropOps: BatchOp[]
  /** Commits `dropOps` alone (synced: a replay would write the file the entry holds). */
  drop: () => Promise<void>
}

export interface IngestJournal {
  /** The writes that journal `entry`; commit them in the index record's batch, then call `committed`. */
  entry (entry: JournalEntry): PendingEntry
  /** Commits (synced) the intent to write the data file of `record`, received from a peer. */
  intend (record: ReceivedRecord): Promise<ReceiveIntent>
  /** Restores every entry left by a crash or power cut, syncs, and drops them. Returns how many. */
  replay (): Promise<number>
  /** Makes every committed entry's files durable now and drops the entries. */
  checkpoint (): Promise<void>
  /** A last checkpoint; later entries are refused. */
  close (): Promise<void>
  /** Committed entries waiting for the background checkpoint. */
  readonly pending: number
}

export interface IngestJournalDeps {
  db: HearthDatabase
  dataDir: string
  storage: Pick<StorageBackend, 'add' | 'addUnsynced' | 'writeDeferred' | 'unpin'>
  index: Pick<FileIndex, 'get' | 'put' | 'revert' | 'byCid'>
  syncFiles: SyncFiles
  logger: Logger
  /** A checkpoint starts this long after the first entry waiting for one (default 200 ms)... */
  delayMs?: number
  /** ...or at once when this many wait (default 2,048)... */
  maxPending?: number
  /** ...or when their journaled bytes reach this (default 16 MiB): deferred blocks wait in memory. */
  maxPendingBytes?: number
}

const REPLAY_PAGE = 256

export function createIngestJournal (deps: IngestJournalDeps): IngestJournal {
  const entries: Sublevel<Uint8Array> = deps.db.sublevel<Uint8Array>('ingest-journal', { valueEncoding: 'view' })
  const delayMs = deps.delayMs ?? 200
  const maxPending = deps.maxPending ?? 2048
  const maxPendingBytes = deps.maxPendingBytes ?? 16 * 1024 * 1024
  // keys sort by creation; the random part keeps two processes' (or restarts') keys apart
  const prefix = `${Date.now().toString(36).padStart(9, '0')}-${randomBytes(3).toString('hex')}-`
  let counter = 0
  let waiting: Array<{ key: string; files: string[]; bytes: number }> = []
  let waitingBytes = 0
  let timer: NodeJS.Timeout | null = null
  let running: Promise<boolean> | null = null
  let closed = false

  function schedule (afterFailure = false): void {
    if (running !== null || waiting.length === 0 || closed) return
    if ((waiting.length >= maxPending || waitingBytes >= maxPendingBytes) && !afterFailure) { void runCheckpoint(); return }
    timer ??= setTimeout(() => { timer = null; void runCheckpoint() }, delayMs)
    timer.unref()
  }

  /** One checkpoint of everything waiting; false when it failed (its entries wait again). */
  async function runCheckpoint (): Promise<boolean> {
    if (timer !== null) { clearTimeout(timer); timer = null }
    if (running !== null) return await running
    const group = waiting
    waiting = []
    waitingBytes = 0
    if (group.length === 0) return true
    const run = (async () => {
      try {
        // blocks kept in memory (storage.addDeferred) are written first, all at once
        await deps.storage.writeDeferred?.()
        await deps.syncFiles(group.flatMap((g) => g.files))
        // not synced: a drop lost to a power cut only replays entries whose files are durable
        await deps.db.batch(group.map((g) => ({ type: 'del' as const, sublevel: entries, key: g.key })))
        return true
      } catch (err) {
        // the entries stay in the journal (and are replayed at the next start): try again later
        deps.logger.warn({ err, entries: group.length }, 'ingest journal checkpoint failed; retrying')
        waiting = group.concat(waiting)
        waitingBytes = waiting.reduce((sum, g) => sum + g.bytes, 0)
        return false
      }
    })()
    running = run
    const ok = await run
    running = null
    schedule(!ok)
    return ok
  }

  async function checkpoint (): Promise<void> {
    if (running !== null) await running
    while (waiting.length > 0) {
      if (!(await runCheckpoint())) throw new Error('the ingest journal checkpoint failed (its entries are replayed at the next start)')
    }
  }

  /** Indexes the received file an intent names when it was written whole but not indexed. */
  async function restoreReceived (received: ReceivedRecord): Promise<void> {
    const indexed = await deps.index.get(received.path)
    if (indexed !== null && indexed.sha256 === received.sha256) return
    const current = await readDataFileOrNull(deps.dataDir, received.path, received.size)
    // never written (or the name is another file's): the peer's file is fetched again
    if (current === null || sha256Hex(current) !== received.sha256) return
    const st = await lstat(absoluteDataPath(deps.dataDir, received.path), { bigint: true })
    await deps.index.put({ ...received, mtimeMs: mtimeMsOf(st), updatedAt: Date.now() })
    deps.logger.info({ path: received.path, cid: received.cid }, 'received file indexed from its intent')
  }

  /**
   * Writes the entry's data file again when it is missing or torn; true while the name's record is
   * the entry's (false: another version's, or none: the name was found taken and its record taken
   * back here).
   */
  async function restoreData (stored: StoredEntry, bytes: Uint8Array, files: string[]): Promise<boolean> {
    const data = Buffer.from(bytes.buffer, bytes.byteOffset, bytes.byteLength)
    const abs = absoluteDataPath(deps.dataDir, stored.path)
    const [st, record] = await Promise.all([lstatOrNull(abs), deps.index.get(stored.path)])
    const ours = record?.sha256 === sha256Hex(data)
    const link = stored.link
    if (st !== null) {
      const current = await readDataFileOrNull(deps.dataDir, stored.path, data.byteLength)
      if (current !== null && Buffer.from(current).equals(data)) return ours
      // torn by a power cut, or another file: the link tells which (without one, the record: the
      // index has moved on to another version of this path, or not)
      const linked = link === undefined ? ours : linkedThere(link, st)
      if (!linked) {
        if (ours && link !== undefined) {
          // never linked: another writer had the name (receive.ts and publish-beside.ts revert this record then)
          await deps.index.revert(stored.path, link.earlier ?? null)
          deps.logger.warn({ path: stored.path, cid: record!.cid }, 'the name of a file written here was taken before a crash; its record taken back')
        }
        return false
      }
      // A file ours by its mtime but not by the record: a POST to a name that had a record, cut
      // off between its entry's batch and its record's (publish-beside.ts). Restored all the same
      // (never acknowledged, it is kept like any write committed before a crash: the scan indexes
      // it as the name's next version). An inode alone does not tell an edit in place: the record does.
      if (!ours && link?.mtimeMs === undefined) return false
    }
    // synced (with the link's mtime) before the name points at it: a power cut meanwhile leaves
    // the name as this replay found it, or the whole file
    const opts = { syncDir: null, syncFile: true, ...(link?.mtimeMs !== undefined ? { mtimeMs: link.mtimeMs } : {}) }
    if ((await writeFileDurably(abs, data, { ...opts, existing: st === null ? 'keep' : 'replace' })).written) files.push(abs)
    return ours
  }

  /** Writes the entry's files again where they are missing or torn; returns the files to sync. */
  async function restore (stored: StoredEntry): Promise<string[]> {
    const files: string[] = []
    if (stored.received !== undefined) await restoreReceived(stored.received)
    // the data file first: a ciphertext no record names (its record taken back) is not pinned again
    const ours = stored.data === undefined || await restoreData(stored, stored.data, files)
    if (stored.ciphertext === undefined) return files
    if (!ours && stored.cid !== undefined && (await deps.index.byCid(stored.cid)).length === 0) {
      // a POST's CID is its own (a received file's comes again with its file): nothing else needs the block
      await deps.storage.unpin(stored.cid).catch((err: unknown) => { deps.logger.warn({ err, cid: stored.cid }, 'unpinning a journaled block no record names failed') })
      return files
    }
    const unsynced = await deps.storage.addUnsynced?.(stored.ciphertext) ?? null
    if (unsynced === null) await deps.storage.add(stored.ciphertext)
    else files.push(...unsynced.files)
    return files
  }

  /** A new entry's key: keys sort by creation. */
  const nextKey = (): string => prefix + (counter++).toString(36).padStart(8, '0')

  return {
    entry (entry) {
      if (closed) throw new Error('the ingest journal is closed')
      const key = nextKey()
      const bytes = (entry.data?.byteLength ?? 0) + (entry.ciphertext?.byteLength ?? 0)
      const value = encodeJournalEntry(entry)
      const dropOps: BatchOp[] = [{ type: 'del', sublevel: entries, key }]
      return {
        ops: [{ type: 'put', sublevel: entries, key, value }],
        committed: () => { waiting.push({ key, files: entry.files, bytes }); waitingBytes += bytes; schedule() },
        dropOps,
        drop: async () => { await deps.db.batch(dropOps, { sync: true }) }
      }
    },

    async intend (record) {
      if (closed) throw new Error('the ingest journal is closed')
      const key = nextKey()
      await deps.db.batch([{ type: 'put', sublevel: entries, key, value: encodeJournalEntry({ path: record.path, received: record }) }], { sync: true })
      const done: BatchOp[] = [{ type: 'del', sublevel: entries, key }]
      return { done, drop: async () => { await deps.db.batch(done) } }
    },

    async replay () {
      let replayed = 0
      let after: string | undefined
      for (;;) {
        const page = await entries.iterator({ limit: REPLAY_PAGE, ...(after !== undefined ? { gt: after } : {}) }).all()
        if (page.length === 0) break
        after = page[page.length - 1]![0]
        const files: string[] = []
        const done: string[] = []
        for (const [key, value] of page) {
          let stored: StoredEntry | null = null
          try {
            stored = decodeJournalEntry(value)
            files.push(...await restore(stored))
            done.push(key)
          } catch (err) {
            // kept for the next start: one unreadable entry or failing write never blocks a start
            deps.logger.error({ err, path: stored?.path, key }, 'ingest journal entry could not be replayed; kept for the next start')
          }
        }
        await deps.syncFiles(files)
        await deps.db.batch(done.map((key) => ({ type: 'del' as const, sublevel: entries, key })), { sync: true })
        replayed += done.length
      }
      if (replayed > 0) deps.logger.info({ entries: replayed }, 'ingest journal replayed')
      return replayed
    },

    checkpoint,

    async close () {
      if (closed) return
      await checkpoint().catch((err: unknown) => { deps.logger.warn({ err }, 'last ingest journal checkpoint failed') })
      closed = true
      if (timer !== null) { clearTimeout(timer); timer = null }
    },

    get pending () { return waiting.length }
  }
}
