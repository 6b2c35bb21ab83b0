// The sync engine (docs/protocol.md §3.4): keeps this device's file set converging with every connected
// device of the same owner. Each device pulls; nobody pushes. A pull lists the peer's change log
// since a persisted per-peer cursor, fetches the ciphertext it lacks, verifies the CID and hands
// it to the daemon's receive hook, which decrypts, validates, writes and indexes it.
//
// Why this terminates (no loops, A-B-C converges): a device creates a change in its own log only
// when (a) its receive hook writes a CID it did not hold, (b) a tombstone deletes a CID it held
// live, or (c) it learns a fileId for a CID that had none. Each of these moves one CID one step
// along a one-way path (absent → held → deleted; fileId unknown → known), and an entry for a CID
// already held, settled or parked is handled without any write. With finitely many CIDs there are
// finitely many changes, every change is listed to each peer once (cursors only move forward), so
// the exchange stops. Relaying is what makes A-B-C converge: a file B receives from A gets a new
// seq in B's log, and C pulls it from B; when A later lists B's entry for that file, A already
// holds the CID and does nothing.
//
// Triggers: a peer connects; a local change (`notifyLocalChange`, debounced, pokes every connected
// peer, which pulls at once); a periodic round; `syncNow`. A device that wrote or deleted anything
// while pulling pokes its own peers, so a file crosses a chain of devices without waiting.
import { peerIdFromString } from '@libp2p/peer-id'
import type { Connection, PeerId, Stream } from '@libp2p/interface'
import type { Kv } from '../db/database.js'
import type { FileIndex } from '../db/file-index.js'
import { HearthError } from '../errors.js'
import type { Logger } from '../log.js'
import type { StorageBackend } from '../storage/types.js'
import { addressPeerId, type SyncNode } from './node.js'
import { SYNC_PROTOCOL_ID, type HelloMessage } from './protocol.js'
import { retryParked, scanLocalDeletions, type RetryResult } from './local.js'
import {
  pokeSession, pullSession, zeroTotals,
  type FileIdHook, type PullContext, type PullTotals, type ReceiveHook, type TombstoneHook
} from './pull.js'
import { serveSession, type ServeContext, type ServeStats } from './serve.js'
import { syncState, type SyncState } from './state.js'
import { newLivePeer, peerStatus, type LivePeer, type PeerStatus } from './status.js'
import { newCounters, type WireCounters } from './wire.js'

export type { ReceiveOutcome, ReceiveHook, TombstoneHook, FileIdHook, PullTotals, PeerContext } from './pull.js'
export type { LiveEntry, TombstoneEntry, WireEntry } from './protocol.js'
export type { PeerStatus } from './status.js'
export type { RetryResult } from './local.js'

export interface SyncEngineOptions {
  node: SyncNode
  /** The owner address of this identity; peers greeting with another one are refused. */
  ownerAddress: string
  index: FileIndex
  storage: StorageBackend
  /** The engine's own key-value namespace (e.g. `openKv(db, 'sync')`). */
  state: Kv<unknown>
  receive: ReceiveHook
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
  /** Fetched files handed to receive at once per pull. Default 4. */
  concurrency?: number
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

export interface WaitingSummary {
  count: number
  bytes: number
  bySchema: Array<{ schemaId: string; count: number }>
  byPeer: Record<string, number>
  /** The oldest few, for `hearth status`. */
  files: Array<{ cid: string; schemaId: string; collectedAt: string; size: number; peerId: string; since: string }>
}

const WAITING_FILES_SHOWN = 20

export function createSyncEngine (opts: SyncEngineOptions): SyncEngine {
  const { node, index, storage, logger } = opts
  const libp2p = node.libp2p
  const state: SyncState = syncState(opts.state)
  const counters = newCounters()
  const serveStats: ServeStats = { fetchesServed: 0, blobBytesServed: 0 }
  const totals = zeroTotals()
  const extra = { pulls: 0, pokesSent: 0, pokesReceived: 0 }
  const readTimeoutMs = opts.readTimeoutMs ?? 60_000
  const live = new Map<string, LivePeer>()
  const pulls = new Map<string, { again: boolean; done: Promise<SyncRoundResult> }>()
  let running = false
  let stopping = new AbortController()
  let intervalTimer: NodeJS.Timeout | null = null
  let pokeTimer: NodeJS.Timeout | null = null
  let localScan: Promise<void> = Promise.resolve()
  let retrying: Promise<RetryResult> | null = null
  const serving = new Set<Promise<void>>()
  const lastProgressAt = new Map<string, number>()
  const retryTimers = new Map<string, { timer: NodeJS.Timeout; failures: number }>()

  function peer (peerId: string): LivePeer {
    let p = live.get(peerId)
    if (p === undefined) {
      p = newLivePeer()
      live.set(peerId, p)
    }
    return p
  }

  function onHello (peerId: string, hello: HelloMessage): void {
    const p = peer(peerId)
    p.remoteHead = hello.head
    p.theirCursor = hello.cursor
  }

  const serveContext: ServeContext = {
    ownerAddress: opts.ownerAddress,
    index,
    storage,
    logger,
    counters,
    stats: serveStats,
    readTimeoutMs,
    idleTimeoutMs: opts.idleTimeoutMs ?? 300_000,
    cursorFor: async (peerId) => await state.cursor(peerId),
    onHello,
    onPeerCursor (peerId, cursor) {
      peer(peerId).theirCursor = cursor
    },
    onPoke (peerId, head) {
      extra.pokesReceived++
      peer(peerId).remoteHead = head
      void requestPull(peerId)
    }
  }

  function emitProgress (peerId: string, round: PullTotals, cursor: number, done: boolean): void {
    if (opts.onProgress === undefined) return
    const now = Date.now()
    if (!done && now - (lastProgressAt.get(peerId) ?? 0) < 200) return
    lastProgressAt.set(peerId, now)
    try {
      opts.onProgress({ ...round, peerId, cursor, pendingIn: peer(peerId).pendingIn ?? 0, done })
    } catch (err) {
      logger.warn({ err: (err as Error).message }, 'sync progress listener threw')
    }
  }

  const pullContext: PullContext = {
    ownerAddress: opts.ownerAddress,
    index,
    storage,
    state,
    logger,
    counters,
    readTimeoutMs,
    pageSize: opts.pageSize ?? 500,
    window: { requests: opts.window?.requests ?? 64, bytes: opts.window?.bytes ?? 32 * 1024 * 1024 },
    concurrency: Math.max(1, opts.concurrency ?? 4),
    receive: opts.receive,
    applyTombstone: opts.applyTombstone,
    ...(opts.learnFileId !== undefined ? { learnFileId: opts.learnFileId } : {}),
    onHello,
    onPending (peerId, pendingIn) { peer(peerId).pendingIn = pendingIn },
    onProgress (peerId, round, cursor) { emitProgress(peerId, round, cursor, false) }
  }

  /** Local deletions are scanned one run at a time, before every pull and poke. */
  function rememberLocalDeletions (): Promise<void> {
    localScan = localScan
      .then(async () => { await scanLocalDeletions(index, state) })
      .catch((err: Error) => { logger.warn({ err: err.message }, 'scanning local deletions failed') })
    return localScan
  }

  async function openStream (peerId: string): Promise<Stream> {
    return await libp2p.dialProtocol(peerIdFromString(peerId), SYNC_PROTOCOL_ID, { signal: AbortSignal.any([stopping.signal, AbortSignal.timeout(15_000)]) })
  }

  async function pullOnce (peerId: string): Promise<SyncRoundResult> {
    const p = peer(peerId)
    const round = zeroTotals()
    extra.pulls++
    try {
      await rememberLocalDeletions()
      const stream = await openStream(peerId)
      const result = await pullSession(stream, peerId, pullContext, stopping.signal)
      Object.assign(round, result)
      p.lastSyncAt = Date.now()
      p.lastError = null
      p.pendingIn = Math.max(0, (p.remoteHead ?? 0) - await state.cursor(peerId))
      await state.setPeerInfo(peerId, { lastSyncAt: p.lastSyncAt })
      for (const k of Object.keys(totals) as Array<keyof PullTotals>) totals[k] += round[k]
      emitProgress(peerId, round, await state.cursor(peerId), true)
      if (round.written > 0 || round.tombstones > 0) notifyLocalChange()
      if (round.fetched > 0) logger.info({ peer: peerId, ...round }, 'sync pull finished')
      return { peerId, ok: true, totals: round }
    } catch (err) {
      const message = (err as Error)?.message ?? String(err)
      p.lastError = message
      if (!stopping.signal.aborted) logger.warn({ peer: peerId, err: message }, 'sync pull failed')
      return { peerId, ok: false, error: message, totals: round }
    }
  }

  /** One pull per peer at a time; a request during a pull makes exactly one more round after it. */
  function requestPull (peerId: string): Promise<SyncRoundResult> {
    const current = pulls.get(peerId)
    if (current !== undefined) {
      current.again = true
      return current.done
    }
    const entry = { again: false, done: Promise.resolve(null as unknown as SyncRoundResult) }
    entry.done = (async () => {
      let result: SyncRoundResult
      do {
        entry.again = false
        result = await pullOnce(peerId)
      } while (entry.again && running)
      pulls.delete(peerId)
      retryAfterFailure(peerId, result.ok)
      return result
    })()
    pulls.set(peerId, entry)
    return entry.done
  }

  /** A failed pull from a still-connected peer is retried with backoff (1 s doubling to 60 s). */
  function retryAfterFailure (peerId: string, ok: boolean): void {
    const pending = retryTimers.get(peerId)
    if (pending !== undefined) clearTimeout(pending.timer)
    if (ok || !running) { retryTimers.delete(peerId); return }
    const failures = (pending?.failures ?? 0) + 1
    const timer = setTimeout(() => {
      if (running && node.connectedPeers().includes(peerId)) void requestPull(peerId)
    }, Math.min(1000 * 2 ** (failures - 1), 60_000))
    timer.unref()
    retryTimers.set(peerId, { timer, failures })
  }

  async function pokeAll (): Promise<void> {
    await rememberLocalDeletions()
    await Promise.all(node.connectedPeers().map(async (peerId) => {
      try {
        await pokeSession(await openStream(peerId), peerId, pullContext)
        extra.pokesSent++
      } catch (err) {
        if (!stopping.signal.aborted) logger.debug({ peer: peerId, err: (err as Error).message }, 'sync poke failed')
      }
    }))
  }

  function notifyLocalChange (): void {
    if (!running || pokeTimer !== null) return
    pokeTimer = setTimeout(() => { pokeTimer = null; void pokeAll() }, opts.pokeDebounceMs ?? 100)
  }

  async function retryWaiting (): Promise<RetryResult> {
    if (retrying !== null) return await retrying
    retrying = retryParked({ index, state, storage, receive: opts.receive, logger, stopped: () => !running })
      .then((out) => { if (out.written > 0) notifyLocalChange(); return out })
      .finally(() => { retrying = null })
    return await retrying
  }

  async function syncNow (o: { peerId?: string } = {}): Promise<SyncRoundResult[]> {
    if (!running) throw new HearthError('INVALID_ARGUMENT', 'the sync engine is not running')
    const targets = o.peerId !== undefined ? [o.peerId] : node.connectedPeers()
    return await Promise.all(targets.map(requestPull))
  }

  const onConnect = (evt: CustomEvent<PeerId>): void => {
    if (running) void requestPull(evt.detail.toString())
  }

  function addressesOf (peerId: string, conns: Connection[]): string[] {
    const kept = node.keptAddresses().filter((a) => a.endsWith(`/p2p/${peerId}`))
    const open = conns.filter((c) => c.remotePeer.toString() === peerId && c.status === 'open').map((c) => c.remoteAddr.toString())
    return [...new Set([...kept, ...open])]
  }

  return {
    async start () {
      if (running) return
      running = true
      stopping = new AbortController()
      await libp2p.handle(SYNC_PROTOCOL_ID, async (stream, connection) => {
        if (!running) { stream.abort(new HearthError('SYNC_PROTOCOL_ERROR', 'sync is stopping')); return }
        const session = serveSession(stream, connection.remotePeer.toString(), serveContext)
        const onStop = (): void => stream.abort(new HearthError('SYNC_PROTOCOL_ERROR', 'sync is stopping'))
        stopping.signal.addEventListener('abort', onStop, { once: true })
        serving.add(session)
        try {
          await session
        } finally {
          serving.delete(session)
          stopping.signal.removeEventListener('abort', onStop)
        }
      }, { maxInboundStreams: 16, maxOutboundStreams: 16 })
      libp2p.addEventListener('peer:connect', onConnect)
      for (const address of await state.addresses()) {
        try { node.keepConnected(address) } catch (err) { logger.warn({ address, err: (err as Error).message }, 'ignoring a stored peer address') }
      }
      const intervalMs = opts.intervalMs ?? 60_000
      if (intervalMs > 0) {
        intervalTimer = setInterval(() => {
          for (const peerId of node.connectedPeers()) void requestPull(peerId)
          retryWaiting().catch((err: Error) => { logger.warn({ err: err.message }, 'retrying parked files failed') })
        }, intervalMs)
        intervalTimer.unref()
      }
      for (const peerId of node.connectedPeers()) void requestPull(peerId)
    },
    async stop () {
      if (!running) return
      running = false
      stopping.abort()
      if (intervalTimer !== null) clearInterval(intervalTimer)
      if (pokeTimer !== null) clearTimeout(pokeTimer)
      intervalTimer = null
      pokeTimer = null
      for (const r of retryTimers.values()) clearTimeout(r.timer)
      retryTimers.clear()
      libp2p.removeEventListener('peer:connect', onConnect)
      await Promise.allSettled([...pulls.values()].map(async (p) => await p.done))
      await Promise.allSettled([localScan, retrying, ...serving])
      await libp2p.unhandle(SYNC_PROTOCOL_ID)
    },
    notifyLocalChange,
    syncNow,
    retryWaiting,
    async addPeer (address) {
      if (addressPeerId(address) === null) {
        throw new HearthError('INVALID_ARGUMENT', `the address must end in /p2p/<peerId> (the other device's peer id, printed by its \`hearth peers\`): ${address}`)
      }
      if (addressPeerId(address) === node.peerId) {
        throw new HearthError('CONFLICT', `${address} names this device's own peer id: if it is another device, both use one identity/peer-key (copied?); on that device remove identity/peer-key and restart it, then add the address it prints`)
      }
      node.keepConnected(address) // validates the multiaddr before anything is stored
      await state.addAddress(address)
    },
    async removePeer (target) {
      const byAddress = target.startsWith('/')
      const peerId = byAddress ? addressPeerId(target) : target
      const stored = await state.addresses()
      const addresses = byAddress
        ? stored.filter((a) => a === target)
        : stored.filter((a) => addressPeerId(a) === peerId)
      const known = peerId !== null && ((await state.knownPeers()).includes(peerId) || live.has(peerId) || node.connectedPeers().includes(peerId))
      if (addresses.length === 0 && !known) throw new HearthError('NOT_FOUND', `no known device ${target} (\`hearth peers\` lists them)`)
      node.forget(addresses)
      for (const a of addresses) await state.removeAddress(a)
      if (peerId !== null) {
        node.forget(node.keptAddresses().filter((a) => addressPeerId(a) === peerId))
        await state.forgetPeer(peerId)
        live.delete(peerId)
        await node.hangUp(peerId).catch((err: Error) => { logger.debug({ peer: peerId, err: err.message }, 'hang-up failed') })
      }
      return { peerId, addresses }
    },
    async waiting () {
      const summary: WaitingSummary = { count: 0, bytes: 0, bySchema: [], byPeer: {}, files: [] }
      const bySchema = new Map<string, number>()
      for await (const p of state.allParked()) {
        summary.count++
        summary.bytes += p.entry.size
        bySchema.set(p.entry.schemaId, (bySchema.get(p.entry.schemaId) ?? 0) + 1)
        summary.byPeer[p.peerId] = (summary.byPeer[p.peerId] ?? 0) + 1
        if (summary.files.length < WAITING_FILES_SHOWN) {
          summary.files.push({ cid: p.entry.cid, schemaId: p.entry.schemaId, collectedAt: p.entry.collectedAt, size: p.entry.size, peerId: p.peerId, since: new Date(p.at).toISOString() })
        }
      }
      summary.bySchema = [...bySchema].map(([schemaId, count]) => ({ schemaId, count })).sort((a, b) => b.count - a.count)
      return summary
    },
    async peers () {
      const conns = libp2p.getConnections()
      const connected = new Set(node.connectedPeers())
      const keptIds = node.keptAddresses().map((a) => /\/p2p\/([^/]+)$/.exec(a)?.[1]).filter((x): x is string => x !== undefined)
      const ids = [...new Set([...await state.knownPeers(), ...connected, ...live.keys(), ...keptIds])].sort()
      const ourHead = await index.currentSeq()
      const waitingByPeer: Record<string, number> = {}
      for await (const p of state.allParked()) waitingByPeer[p.peerId] = (waitingByPeer[p.peerId] ?? 0) + 1
      return await Promise.all(ids.map(async (peerId): Promise<PeerStatus> => peerStatus(peerId, live.get(peerId), {
        waitingForSchema: waitingByPeer[peerId] ?? 0,
        addrs: addressesOf(peerId, conns),
        connected: connected.has(peerId),
        syncing: pulls.has(peerId),
        cursor: await state.cursor(peerId),
        storedLastSyncAt: (await state.peerInfo(peerId))?.lastSyncAt ?? null,
        ourHead
      })))
    },
    stats () {
      return { ...counters, ...serveStats, ...totals, ...extra }
    }
  }
}
