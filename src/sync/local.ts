// Work the engine does on this device's own state, outside any session: remembering local
// deletions, and retrying files parked while their schema was unknown.
import type { FileIndex } from '../db/file-index.js'
import type { Logger } from '../log.js'
import type { StorageBackend } from '../storage/types.js'
import { settleOutcome, type ReceiveHook } from './pull.js'
import type { SyncState } from './state.js'

const SCAN_PAGE = 1000

/**
 * Record every CID deleted on this device since the last scan as settled 'deleted'. Without this,
 * a peer that has not seen the deletion yet could list the file again and this device would fetch
 * it back: its index no longer knows the CID once the record is gone. Incremental (own cursor).
 */
export async function scanLocalDeletions (index: FileIndex, state: SyncState): Promise<void> {
  let since = await state.localScan()
  for (;;) {
    const changes = await index.changesSince(since, SCAN_PAGE)
    for (const c of changes) {
      const cid = c.deleted ? c.cid : (c.record.state === 'deleted' ? c.record.cid : null)
      if (cid !== null && await state.settled(cid) === null) await state.settle(cid, 'deleted')
    }
    if (changes.length === 0) return
    since = changes[changes.length - 1]!.seq
    await state.setLocalScan(since)
    if (changes.length < SCAN_PAGE) return
  }
}

export interface RetryResult { retried: number; written: number; stillWaiting: number; failed: number }

/**
 * Hand every parked entry to receive again, with the ciphertext from local storage (never
 * refetched). A receive that throws leaves its entry parked for the next retry.
 */
export async function retryParked (deps: {
  index: FileIndex
  state: SyncState
  storage: StorageBackend
  receive: ReceiveHook
  logger: Logger
  stopped: () => boolean
}): Promise<RetryResult> {
  const { index, state, storage, logger } = deps
  const out: RetryResult = { retried: 0, written: 0, stillWaiting: 0, failed: 0 }
  for await (const parked of state.allParked()) {
    if (deps.stopped()) break
    const { entry, peerId } = parked
    try {
      if ((await index.byCid(entry.cid)).length > 0) { await state.unpark(entry.cid); continue }
      let bytes: Uint8Array
      try {
        bytes = await storage.get(entry.cid)
      } catch (err) {
        logger.warn({ cid: entry.cid, err: (err as Error).message }, 'parked ciphertext is gone from storage; dropping it')
        await state.unpark(entry.cid)
        continue
      }
      out.retried++
      const outcome = await deps.receive(entry, bytes, { peerId })
      await settleOutcome(entry, outcome, { peerId }, { index, state, storage })
      if (outcome === 'written') out.written++
      if (outcome === 'waiting-schema') out.stillWaiting++
    } catch (err) {
      out.failed++
      logger.warn({ cid: entry.cid, err: (err as Error).message }, 'retrying a parked file failed; it stays parked')
    }
  }
  return out
}
