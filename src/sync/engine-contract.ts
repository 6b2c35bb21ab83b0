// What the sync engine needs and what it offers: its options, its interface and what it reports.
// Kept apart from engine.ts (the wiring) so callers read the contract without the mechanics.
import type { Kv } from '../db/database.js'
import type { FileIndex } from '../db/file-index.js'
import type { Logger } from '../log.js'
import type { StorageBackend } from '../storage/types.js'
import type { RetryResult } from './local.js'
import type { SyncNode } from './node.js'
import type { FileIdHook, PrepareHook, PullTotals, ReceiveHook, TombstoneHook } from './pull.js'
import type { ServeStats } from './serve.js'
import type { PeerStatus } from './status.js'
import type { WaitingSummary } from './waiting.js'
import type { WireCounters } from './wire.js'

export interface SyncEngineOptions {
  node: SyncNode
  /** The owner address of this identity; peers greeting with another one are refused. */
  ownerAddress: string
  index: FileIndex
  storage: StorageBackend
  /** The engine's own key-value namespace (e.g. `openKv(db, 'sync')`). */
  state: Kv<unknown>
  receive: ReceiveHook
  /** Starts work on a fetched file as soon as it is read, ahead of its receive (PrepareHook). */
  prepare?: PrepareHook
  /** A page lists files over one chunk to fetch: start what `prepare` needs for them now (a worker). */
  expectLarge?: () => void
  applyTombstone: TombstoneHook
  learnFileId?: FileIdHook
  logger: Logger
  onProgress?: (progress: SyncProgress) => void
  /** Periodic round (ms); 0 turns it off. Default 60 s. */
  intervalMs?: number
  /** Entries asked for per changes-request. Default 500. */
  pageSize?: number
  /** Fetches in flight per pull: count and announced bytes. Default 64 and 32 MiB. */
  window?: { requests?: number; bytes?: number }
  /**
   * Fetched files received together per pull (stored, decrypted, written and indexed side by side,
   * sharing their syncs), while the next batch is read: count and ciphertext bytes (a larger file
   * goes alone). Default 64 files, 24 MiB: two 10 MB files, whose waits for the disk then overlap.
   */
  batch?: { files?: number; bytes?: number }
  /**
   * Store fetched single-block ciphertexts without a sync of their own and hand their files to
   * `receive`, which makes them durable (peer-receive.ts: journaled with the index record, or
   * synced). Only for a hook that does; default false. 'deferred': where storage can, not even
   * written yet (`storage.addDeferred`: kept in memory until the ingest journal's checkpoint
   * writes it), handed over as `stored.deferred`; the hook journals the ciphertext itself with the
   * index record, or has storage write it (`writeDeferred`) before any other answer but 'rejected'.
   */
  storeUnsynced?: boolean | 'deferred'
  /** Longest wait for an answer or the next frame on a sync stream. Default 60 s. */
  readTimeoutMs?: number
  /** Longest wait for a peer's next request on a session it opened. Default 5 min. */
  idleTimeoutMs?: number
  /** Local changes within this window make one poke. Default 100 ms. */
  pokeDebounceMs?: number
}

export interface SyncProgress extends PullTotals {
  peerId: string
  cursor: number
  /** Changes listed or known to be ahead on the peer and not yet handled here. */
  pendingIn: number
  done: boolean
}

export interface SyncRoundResult {
  peerId: string
  ok: boolean
  error?: string
  totals: PullTotals
}

export interface SyncStats extends WireCounters, ServeStats, PullTotals {
  pulls: number
  pokesSent: number
  pokesReceived: number
}

export interface SyncEngine {
  /** Register the protocol handler and the triggers. Call before `node.start()`. */
  start (): Promise<void>
  /** Stop triggers, abort running pulls, unregister. Call before `node.stop()`. */
  stop (): Promise<void>
  /** The local file set changed (ingest, delete): poke connected peers so they pull. */
  notifyLocalChange (): void
  /** Pull from every connected peer (or one) and resolve when the round is finished. */
  syncNow (opts?: { peerId?: string }): Promise<SyncRoundResult[]>
  /** Hand parked (waiting-schema) entries to receive again, e.g. after new schemas are known. */
  retryWaiting (): Promise<RetryResult>
  /**
   * Persist a peer address and keep it connected from now on and after every restart. The
   * address must end in /p2p/<peerId>: without it a device cannot tell this owner's devices from
   * whoever answers at that address, and `peers rm` could not name it.
   */
  addPeer (multiaddr: string): Promise<void>
  /**
   * Forget a device, by peer id or by an address `peers add` stored: stop redialling it, drop its
   * stored addresses and cursor, close its connections. Returns what was removed; NOT_FOUND when
   * nothing matched.
   */
  removePeer (peerOrAddress: string): Promise<{ peerId: string | null; addresses: string[] }>
  /** Files received from peers that wait for their schema (parked), grouped for display. */
  waiting (): Promise<WaitingSummary>
  peers (): Promise<PeerStatus[]>
  stats (): SyncStats
}
