// Which failures of receiving a peer's file are final. A file that can never be used here (it
// does not decrypt, its envelope or data are invalid, its scope does not match) is rejected and
// never fetched again; an unknown schema parks it until the schema is known; anything else
// (disk, database) is transient and retried from the same cursor next round.
import { isHearthError } from '../errors.js'
import type { Logger } from '../log.js'
import type { ReceivedFile } from '../ingest/pipeline.js'
import type { SyncFiles } from '../storage/deferred-sync.js'
import type { LiveEntry } from './protocol.js'
import type { ReceiveHook, ReceiveOutcome } from './pull.js'

export const PEER_FILE_REJECTED_CODES: ReadonlySet<string> = new Set([
  'DECRYPTION_FAILED', 'SCOPE_MISMATCH', 'SCHEMA_VALIDATION_FAILED', 'INVALID_ENVELOPE', 'INVALID_JSON', 'JSON_TOO_DEEP',
  'NUMBER_NOT_REPRESENTABLE', 'JSON_TOO_MANY_VALUES', 'SCHEMA_SCOPE_MISMATCH', 'INVALID_SCOPE'
])

/** The outcome a receive failure stands for, or null when it must be thrown (transient). */
export function outcomeOfFailure (err: unknown): Extract<ReceiveOutcome, 'rejected' | 'waiting-schema'> | null {
  if (isHearthError(err, 'SCHEMA_NOT_FOUND')) return 'waiting-schema'
  if (isHearthError(err) && PEER_FILE_REJECTED_CODES.has(err.code)) return 'rejected'
  return null
}

/**
 * The sync engine's receive hook over the pipeline's receive: files keep origin 'peer' (never
 * re-registered here), and each handled file is reported to `onReceived`.
 *
 * A ciphertext the engine stored without a sync (or kept unwritten, `stored.deferred`) is made
 * durable here: a journaling pipeline that writes the file commits it in the index record's batch
 * (one group-committed sync for the whole batch of received files; the journal's checkpoint
 * writes a deferred block later); when the file is not written (already present, parked for its
 * schema, a transient failure) it is written and synced before the answer. A rejected file's
 * ciphertext is dropped, so it needs neither.
 */
export function peerReceiveHook (deps: {
  receive (ciphertext: Uint8Array, meta: ReceivedFile): Promise<'written' | 'exists'>
  /** Whether `receive` journals an unsynced ciphertext when it writes its file (`IngestPipeline.journaled`). */
  journaled?: boolean
  /** Makes files written without a sync durable (storage/deferred-sync.ts). */
  syncFiles: SyncFiles
  /** Writes the blocks storage keeps in memory (`storage.writeDeferred`), for `stored.deferred`. */
  writeDeferred?: () => Promise<void>
  logger: Logger
  onReceived?: (file: { cid: string; peerId: string; outcome: ReceiveOutcome }) => void
}): ReceiveHook {
  async function makeDurable (files: string[], deferred: boolean): Promise<void> {
    if (deferred) {
      if (deps.writeDeferred === undefined) throw new Error('a deferred ciphertext needs writeDeferred')
      await deps.writeDeferred()
    }
    await deps.syncFiles(files)
  }
  return async (entry: LiveEntry, ciphertext, from, stored) => {
    const unsynced = stored?.unsyncedFiles
    const deferred = unsynced !== undefined && stored?.deferred === true
    const journaling = unsynced !== undefined && deps.journaled === true
    if (unsynced !== undefined && !journaling) await makeDurable(unsynced, deferred)
    let outcome: ReceiveOutcome
    try {
      outcome = await deps.receive(ciphertext, {
        cid: entry.cid,
        schemaId: entry.schemaId,
        fileId: entry.fileId,
        origin: 'peer',
        ...(journaling ? { unsyncedFiles: unsynced, ...(deferred ? { deferred } : {}) } : {}),
        ...(stored?.prepared !== undefined ? { decrypted: stored.prepared } : {})
      })
    } catch (err) {
      const final = outcomeOfFailure(err)
      if (final === null) {
        if (journaling) await makeDurable(unsynced, deferred).catch(() => {})
        throw err
      }
      if (final === 'rejected') deps.logger.warn({ cid: entry.cid, errorCode: (err as { code?: string }).code, err: (err as Error).message }, 'file from a peer rejected')
      outcome = final
    }
    if (journaling && outcome !== 'written' && outcome !== 'rejected') await makeDurable(unsynced, deferred)
    deps.onReceived?.({ cid: entry.cid, peerId: from.peerId, outcome })
    return outcome
  }
}
