// The pulling side of a sync session: greet, page through a peer's change log from the persisted
// cursor and hand each page to pull-page.ts, which fetches only ciphertext this device does not
// hold (pipelined, bounded in count and bytes), checks each CID, hands the bytes to the daemon's
// receive hook in batches and advances the cursor, so a session cut anywhere resumes at the first
// entry not yet durably handled.
import type { Stream } from '@libp2p/interface'
import type { FileIndex } from '../db/file-index.js'
import type { FileRecord } from '../db/types.js'
import { HearthError } from '../errors.js'
import type { Logger } from '../log.js'
import type { StorageBackend } from '../storage/types.js'
import type { DecryptedFile } from '../ingest/decryptor.js'
import { MAX_CHANGES_LIMIT, checkPeerHello, type HelloMessage, type LiveEntry, type TombstoneEntry } from './protocol.js'
import { handlePage } from './pull-page.js'
import type { BatchLimits } from './receive-batch.js'
import { helloMessage } from './serve.js'
import type { SyncState } from './state.js'
import { expectMessage as expect, openChannel, type WireCounters } from './wire.js'

export { settleOutcome } from './pull-page.js'

/**
 * What the daemon's receive hook did with a fetched ciphertext:
 *  - written: decrypted, validated, written to data/{scope}/ and indexed with this very CID
 *  - exists: the same file was already there (under another CID); nothing written
 *  - rejected: permanently unusable (decryption or validation failed); never fetched again
 *  - waiting-schema: the schema is not known yet; the engine keeps the ciphertext and retries
 * A transient failure (disk full, database closed) must throw instead: the entry is then retried
 * from the same cursor on the next round.
 */
export type ReceiveOutcome = 'written' | 'exists' | 'rejected' | 'waiting-schema'

export interface PeerContext { peerId: string }

/**
 * `stored.unsyncedFiles`: the ciphertext is in storage but was written without a sync (only when
 * the engine runs with `storeUnsynced`); with `stored.deferred` not even written yet (kept in
 * storage's memory, `storage.addDeferred`). The hook makes it durable before it answers anything
 * but 'rejected' (peer-receive.ts journals it with the index record, or writes and syncs it).
 */
export type ReceiveHook = (entry: LiveEntry, ciphertext: Uint8Array, from: PeerContext, stored?: { unsyncedFiles?: string[]; deferred?: boolean; prepared?: Prepared }) => Promise<ReceiveOutcome>
/** What a PrepareHook started for a file (its decryption), handed to the receive hook with it. */
export type Prepared = Promise<DecryptedFile>
/**
 * Starts work on a fetched file as soon as it is read off the stream (decryption on a worker
 * thread), so it runs while earlier files are received; undefined: nothing to start.
 */
export type PrepareHook = (entry: LiveEntry, ciphertext: Uint8Array) => Prepared | undefined
/** Delete the local files and index records holding this CID (`records` are its live records). */
export type TombstoneHook = (entry: TombstoneEntry, records: FileRecord[], from: PeerContext) => Promise<void>
/** Record a fileId learned from a peer for a file held here without one. */
export type FileIdHook = (records: FileRecord[], fileId: string) => Promise<void>

export interface PullTotals {
  listed: number
  handled: number
  fetched: number
  fetchedBytes: number
  written: number
  exists: number
  rejected: number
  waiting: number
  tombstones: number
  missing: number
  skipped: number
}

export function zeroTotals (): PullTotals {
  return { listed: 0, handled: 0, fetched: 0, fetchedBytes: 0, written: 0, exists: 0, rejected: 0, waiting: 0, tombstones: 0, missing: 0, skipped: 0 }
}

export interface PullContext {
  ownerAddress: string
  index: FileIndex
  storage: StorageBackend
  state: SyncState
  logger: Logger
  counters: WireCounters
  readTimeoutMs: number
  pageSize: number
  /** Most fetch requests in flight, and most announced bytes in flight (at least one request). */
  window: { requests: number; bytes: number }
  /** Fetched files received together (stored, decrypted, written, indexed): count and bytes. */
  batch: BatchLimits
  /** Store single-block ciphertexts without a sync (or, 'deferred', unwritten) and let the receive hook make them durable. */
  storeUnsynced: boolean | 'deferred'
  receive: ReceiveHook
  prepare?: PrepareHook
  /** A page lists files over one chunk to fetch: start what `prepare` needs for them (a worker). */
  expectLarge?: () => void
  applyTombstone: TombstoneHook
  learnFileId?: FileIdHook
  /** Called after the greeting and as the session progresses (entries listed but not handled). */
  onHello (peerId: string, hello: HelloMessage): void
  onPending (peerId: string, pendingIn: number): void
  onProgress (peerId: string, totals: PullTotals, cursor: number): void
}

export async function pullSession (stream: Stream, peerId: string, ctx: PullContext, signal: AbortSignal): Promise<PullTotals> {
  const ch = openChannel(stream, { readTimeoutMs: ctx.readTimeoutMs, counters: ctx.counters })
  const onAbort = (): void => ch.abort(new HearthError('TIMEOUT', 'sync stopped'))
  signal.addEventListener('abort', onAbort, { once: true })
  const totals = zeroTotals()
  try {
    await ch.send(await helloMessage({ ...ctx, cursorFor: ctx.state.cursor }, peerId))
    const hello = await expect(ch, ['hello'])
    checkPeerHello(hello, ctx.ownerAddress)
    ctx.onHello(peerId, hello)
    let cursor = await ctx.state.cursor(peerId)
    if (hello.head < cursor) {
      // The peer's log is shorter than what we handled: its index was rebuilt. Re-list from the
      // start; everything already held is skipped without a fetch.
      ctx.logger.info({ peer: peerId, head: hello.head, cursor }, 'peer change log restarted; re-listing it')
      cursor = 0
      await ctx.state.setCursor(peerId, 0)
    }
    for (;;) {
      signal.throwIfAborted()
      await ch.send({ type: 'changes-request', since: cursor, limit: Math.min(ctx.pageSize, MAX_CHANGES_LIMIT) })
      const page = await expect(ch, ['changes'])
      if (!page.done && page.next <= cursor) throw new HearthError('SYNC_PROTOCOL_ERROR', 'peer change log does not advance')
      totals.listed += page.entries.length
      const entries = page.entries.filter((e) => e.seq > cursor)
      cursor = await handlePage({ ch, peerId, from: { peerId }, ctx, totals, signal }, { entries, cursor, beyondPage: Math.max(0, hello.head - page.next) })
      if (page.next > cursor) {
        cursor = page.next
        await ctx.state.setCursor(peerId, cursor)
      }
      ctx.onProgress(peerId, totals, cursor)
      if (page.done) break
    }
    ctx.onPending(peerId, 0)
    await ch.send({ type: 'ack', cursor })
    await ch.close()
    return totals
  } catch (err) {
    ch.abort(err instanceof Error ? err : new Error(String(err)))
    throw err
  } finally {
    signal.removeEventListener('abort', onAbort)
  }
}

/** Tell a peer this device has changes up to `head`, so it pulls now rather than at its next tick. */
export async function pokeSession (stream: Stream, peerId: string, ctx: Pick<PullContext, 'ownerAddress' | 'index' | 'state' | 'counters' | 'readTimeoutMs' | 'onHello'>): Promise<void> {
  const ch = openChannel(stream, { readTimeoutMs: ctx.readTimeoutMs, counters: ctx.counters })
  try {
    const mine = await helloMessage({ ...ctx, cursorFor: ctx.state.cursor }, peerId)
    await ch.send(mine)
    const hello = await expect(ch, ['hello'])
    checkPeerHello(hello, ctx.ownerAddress)
    ctx.onHello(peerId, hello)
    await ch.send({ type: 'poke', head: mine.head })
    await ch.close()
  } catch (err) {
    ch.abort(err instanceof Error ? err : new Error(String(err)))
    throw err
  }
}
