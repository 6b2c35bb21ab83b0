// A file received from a peer or restored from the chain (docs/protocol.md §4): decrypted with its
// scope's key, checked against its schema, and written under its collectedAt name with the peer's
// CID and origin. It is never on disk without its index record: the start-up scan would take such
// a file for a local one and register it again (see publishJournaled and writeReceived for the
// crash windows).
import { lstat } from 'node:fs/promises'
import { mtimeMsOf } from '../storage/file-times.js'
import { HearthError } from '../errors.js'
import type { FileRecord } from '../db/types.js'
import type { Replaced } from '../db/file-index.js'
import { parseEnvelopeBytes, collectedAtToFileName } from '../protocol/envelope.js'
import { absoluteDataPath } from './layout.js'
import { readDataFileOrNull, sha256Hex } from './data-file.js'
import { decryptReceived, type Decrypt, type DecryptedFile } from './decryptor.js'
import type { PathLocks } from './path-locks.js'
import type { IngestJournal, JournalEntry, PendingEntry, ReceivedRecord } from './journal.js'
import { writeOwnDataFile } from './own-writes.js'
import { inThreadStager, type FileStager } from './atomic-write.js'
import type { DurableWrite } from '../storage/durable-file.js'
import type { StagedFile } from '../storage/file-writer.js'
import { FINAL_STATES, JOURNAL_MAX_BYTES, type IngestDeps, type ReceivedFile } from './pipeline-contract.js'

export interface ReceiverDeps extends Pick<IngestDeps, 'index' | 'schemas' | 'validate' | 'dataDir' | 'ownWrites' | 'maxJsonValues' | 'onIndexed' | 'logger' | 'journal' | 'fileWriter'> {
  /** The pipeline's per-path locks: a receive and a local write of one name never interleave. */
  locks: PathLocks
  /** Indexes a record, with a journal entry in the same synced batch when given. */
  record: (base: Omit<FileRecord, 'updatedAt'>, journaled?: JournalEntry) => Promise<FileRecord>
  scopeKey: (scope: string) => string
}

export function createReceiver (deps: ReceiverDeps): (ciphertext: Uint8Array, meta: ReceivedFile) => Promise<'written' | 'exists'> {
  const { journal, locks, record, scopeKey } = deps
  const log = deps.logger
  const stager: FileStager = deps.fileWriter ?? inThreadStager

  /**
   * A received file's name already holds the same bytes (the same envelope): indexed as received
   * unless it is stored here under its own ciphertext (kept, so two devices never trade CIDs).
   */
  async function indexPresent (received: ReceivedRecord & { cid: string }, abs: string, unstored: Unstored | undefined): Promise<FileRecord | 'taken' | 'exists'> {
    const current = await readDataFileOrNull(deps.dataDir, received.path, received.size)
    if (current === null || sha256Hex(current) !== received.sha256) return 'taken'
    const indexed = await deps.index.get(received.path)
    if (indexed != null && FINAL_STATES.has(indexed.state)) return 'exists'
    // a ciphertext not yet durable is journaled with the record (the receive hook makes it durable otherwise)
    const block = unstored === undefined ? undefined : { path: received.path, ciphertext: unstored.ciphertext, cid: received.cid, files: unstored.files }
    return await record({ ...received, mtimeMs: mtimeMsOf(await lstat(abs, { bigint: true })) }, block)
  }

  /**
   * A small received file (journaled) whose bytes are staged in a temp (its name was free then),
   * never on disk without its record (the start-up scan would take it for a local file and
   * register it again): the record and its journal entry (the data file, and the ciphertext when
   * storage has not made it durable) are committed, then the temp is linked to the name, unsynced; a crash
   * before or while it is written is repaired by the replay (journal.ts), with the peer's origin
   * and CID.
   */
  async function publishJournaled (journal: IngestJournal, received: ReceivedRecord & { cid: string }, abs: string, staged: StagedFile, plaintext: Uint8Array, unstored: Unstored | undefined): Promise<FileRecord | 'taken'> {
    const { path: rel, cid } = received
    const block = unstored !== undefined ? { ciphertext: unstored.ciphertext, cid } : {}
    const r: FileRecord = { ...received, mtimeMs: staged.mtimeMs, updatedAt: Date.now() }
    let entry: PendingEntry
    // what the name had before (its record, or its deletion's tombstone) is kept, in case the name
    // is taken after all: here for the revert below, and in the entry for a replay after a crash
    // before that revert
    let earlier: Replaced = { record: null, tombstone: null }
    try {
      earlier = await deps.index.prior(rel)
      const had = earlier.record !== null || earlier.tombstone !== null
      entry = journal.entry({ path: rel, data: plaintext, ...block, files: [abs, ...(unstored?.files ?? [])], link: { ino: staged.ino, ...(had ? { earlier } : {}) } })
      await deps.index.put(r, { also: entry.ops })
    } catch (err) {
      await stager.publish(staged, null).catch(() => {})
      throw err
    }
    deps.ownWrites?.expect(rel)
    const { written } = await stager.publish(staged, abs).catch(async (err: unknown) => {
      deps.ownWrites?.cancel(rel)
      // not linked (a full disk, a folder gone): the name keeps what it had, as when it is taken
      // below, rather than a record with no file until a replay writes it
      await deps.index.revert(rel, earlier, { also: entry.dropOps })
        .catch((revertErr: unknown) => { log.warn({ err: revertErr, path: rel }, 'taking back the record of a received file not written failed; the next start writes it') })
      throw err
    })
    if (written) {
      // the entry waits for the checkpoint only once its file exists
      entry.committed()
      return r
    }
    deps.ownWrites?.cancel(rel)
    // Another writer made the name between the stage and the link: the name and its next
    // version are that writer's. In one batch: the journal entry goes (its replay would put the
    // peer's bytes over that file) and the name's earlier record or tombstone comes back, or
    // neither (a tombstone of the peer's CID would delete it on the device that sent it).
    // The watcher then indexes the other file as the name's own, and the peer's file is
    // written under its fallback name.
    await deps.index.revert(rel, earlier, { also: entry.dropOps })
    log.warn({ path: rel, cid }, 'the name of a received file was taken while it was written')
    return 'taken'
  }

  /**
   * Writes a received file that is not journaled (no journal, or over JOURNAL_MAX_BYTES) whose
   * name is free: without a journal, synced and then indexed; otherwise an intent holding the
   * record is committed first, the file written synced, and the record's batch drops the intent
   * (and journals the ciphertext when storage has not made it durable: a compressed message's
   * plaintext can be over the bound); replay indexes a file the intent names as received.
   */
  async function writeReceived (received: ReceivedRecord & { cid: string }, abs: string, plaintext: Uint8Array, unstored: Unstored | undefined): Promise<FileRecord | 'taken'> {
    const rel = received.path
    if (journal === undefined) {
      const write = await writeOwnDataFile(deps.ownWrites, rel, abs, plaintext)
      return write.written ? await record({ ...received, mtimeMs: write.mtimeMs }) : 'taken'
    }
    const intent = await journal.intend(received)
    let write: DurableWrite
    try {
      write = await writeOwnDataFile(deps.ownWrites, rel, abs, plaintext)
    } catch (err) {
      await intent.drop().catch(() => {})
      throw err
    }
    if (!write.written) { await intent.drop(); return 'taken' }
    const r: FileRecord = { ...received, mtimeMs: write.mtimeMs, updatedAt: Date.now() }
    const block = unstored === undefined ? undefined : journal.entry({ path: rel, ciphertext: unstored.ciphertext, cid: received.cid, files: unstored.files })
    await deps.index.put(r, { also: block === undefined ? intent.done : [...intent.done, ...block.ops] })
    block?.committed()
    return r
  }

  /** Writes or indexes a received file under `rel` (its lock held); 'taken' when the name holds another file. */
  async function place (received: ReceivedRecord & { cid: string }, plaintext: Uint8Array, unstored: Unstored | undefined): Promise<FileRecord | 'taken' | 'exists'> {
    const abs = absoluteDataPath(deps.dataDir, received.path)
    if (journal !== undefined && plaintext.byteLength <= JOURNAL_MAX_BYTES) {
      // one request to the file writer's thread: whether the name exists, else the bytes in a temp
      const staged = await stager.stageNew(abs, plaintext)
      if (staged === null) return await indexPresent(received, abs, unstored)
      return await publishJournaled(journal, received, abs, staged, plaintext, unstored)
    }
    if (await lstat(abs).then(() => true, () => false)) return await indexPresent(received, abs, unstored)
    return await writeReceived(received, abs, plaintext, unstored)
  }

  return async function receive (ciphertext: Uint8Array, meta: ReceivedFile): Promise<'written' | 'exists'> {
    // Whether the CID is here already is asked once, under the name's lock below: a sync pull has
    // just asked (it fetches only what is missing), and an index iterator per file is among a
    // received file's larger costs; the decryption it could spare costs less.
    const schema = await deps.schemas.byId(meta.schemaId)
    if (schema === null) {
      if ((await deps.index.byCid(meta.cid)).length > 0) return 'exists'
      throw new HearthError('SCHEMA_NOT_FOUND', `schema ${meta.schemaId} of ${meta.cid} is not known yet`, { schemaId: meta.schemaId })
    }
    const { plaintext, sha256, envelope } = await (meta.decrypted ?? decryptReceived(ciphertext, scopeKey(schema.scope)))
    const env = envelope ?? parseEnvelopeBytes(plaintext, { maxValues: deps.maxJsonValues })
    if (env.scope !== schema.scope) {
      throw new HearthError('SCOPE_MISMATCH', `file ${meta.cid} says scope ${env.scope} but schema ${schema.id} is for ${schema.scope}`)
    }
    const verdict = deps.validate(schema, env.data)
    if (!verdict.ok) throw new HearthError('SCHEMA_VALIDATION_FAILED', `received file ${meta.cid} does not match its schema`, { reasons: verdict.reasons })
    const unstored = unstoredCiphertext(ciphertext, meta)
    const name = collectedAtToFileName(env.collectedAt)
    const names = [name, name.replace(/\.json$/, `.${meta.cid.slice(-12)}.json`)]
    for (const candidate of names) {
      const rel = `${env.scope}/${candidate}`
      const done = await locks.run(rel, async () => {
        if ((await deps.index.byCid(meta.cid)).length > 0) return 'exists' as const
        const received: ReceivedRecord & { cid: string } = {
          path: rel,
          scope: env.scope,
          collectedAt: env.collectedAt,
          schemaId: schema.id,
          cid: meta.cid,
          size: plaintext.byteLength,
          encryptedSize: ciphertext.byteLength,
          sha256,
          state: meta.fileId != null ? 'registered' : 'stored',
          fileId: meta.fileId ?? null,
          origin: meta.origin
        }
        const r = await place(received, plaintext, unstored)
        if (r === 'taken' || r === 'exists') return r
        deps.onIndexed?.(r, env.data)
        return 'written' as const
      })
      if (done !== 'taken') return done
    }
    throw new HearthError('CONFLICT', `no free file name for received file ${meta.cid}`)
  }
}

/** A received ciphertext storage has not made durable: the journal entry of its file holds it. */
interface Unstored { ciphertext: Uint8Array; files: string[] }

/**
 * The ciphertext when the journal must hold it: kept in storage's memory (`deferred`), or with
 * files left unsynced; a small block `addUnsynced` put into LevelDB (storage/small-blocks.ts) is
 * durable already, with no file.
 */
function unstoredCiphertext (ciphertext: Uint8Array, meta: ReceivedFile): Unstored | undefined {
  const files = meta.unsyncedFiles ?? []
  return meta.deferred === true || files.length > 0 ? { ciphertext, files } : undefined
}

/** Starts a received file's decryption ahead of its receive (hand the result to it as `meta.decrypted`). */
export type ReceivePreparer = (ciphertext: Uint8Array, schemaId: string, decrypt: Decrypt) => Promise<DecryptedFile>

export function createReceivePreparer (deps: Pick<ReceiverDeps, 'schemas' | 'scopeKey' | 'maxJsonValues'>): ReceivePreparer {
  return (ciphertext, schemaId, decrypt) => {
    const decrypted = (async () => {
      const schema = await deps.schemas.byId(schemaId)
      // the receive reports the unknown schema itself (it parks the file)
      if (schema === null) throw new HearthError('SCHEMA_NOT_FOUND', `schema ${schemaId} is not known yet`, { schemaId })
      return await decrypt(ciphertext, deps.scopeKey(schema.scope), deps.maxJsonValues !== undefined ? { maxJsonValues: deps.maxJsonValues } : {})
    })()
    // awaited by the receive, or never (the file failed its CID check first): no unhandled rejection
    decrypted.catch(() => {})
    return decrypted
  }
}
