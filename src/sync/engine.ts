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
// while pulling pokes its own peers, so a file crosses a chain of devices without waiting; the
// peer it pulls from is poked once that pull ends.
import { peerIdFromString } from '@libp2p/peer-id'
import type { PeerId, Stream } from '@libp2p/interface'
import { HearthError } from '../errors.js'
import type { SyncEngine, SyncEngineOptions, SyncRoundResult } from './engine-contract.js'
import { SYNC_PROTOCOL_ID, type HelloMessage } from './protocol.js'
import { retryParked, scanLocalDeletions, type RetryResult } from './local.js'
import { createPeerBook } from './peer-book.js'
import { createPullScheduler } from './pull-scheduler.js'
import { pokeSession, pullSession, zeroTotals, type PullContext, type PullTotals } from './pull.js'
import { serveSession, type ServeContext, type ServeStats } from './serve.js'
import { syncState, type SyncState } from './state.js'
import { learnTheirCursor } from './status.js'
import { waitingSummary } from './waiting.js'
import { newCounters } from './wire.js'

export type { SyncEngine, SyncEngineOptions, SyncProgress, SyncRoundResult, SyncStats } from './engine-contract.js'
export type { ReceiveOutcome, ReceiveHook, TombstoneHook, FileIdHook, PullTotals, PeerContext } from './pull.js'
export type { LiveEntry, TombstoneEntry, WireEntry } from './protocol.js'
export type { PeerStatus } from './status.js'
export type { RetryResult } from './local.js'
export type { WaitingSummary } from './waiting.js'

export function createSyncEngine (opts: SyncEngineOptions): SyncEngine {
  const { node, index, storage, logger } = opts
  const libp2p = node.libp2p
  const state: SyncState = syncState(opts.state)
  const counters = newCounters()
  const serveStats: ServeStats = { fetchesServed: 0, blobBytesServed: 0 }
  const totals = zeroTotals()
  const extra = { pulls: 0, pokesSent: 0, pokesReceived: 0 }
  const readTimeoutMs = opts.readTimeoutMs ?? 60_000
  let running = false
  let stopping = new AbortController()
  let intervalTimer: NodeJS.Timeout | null = null
  let pokeTimer: NodeJS.Timeout | null = null
  /** Peers a poke passed over while this device pulled from them: poked once that pull ends. */
  const pokeAfterPull = new Set<string>()
  let localScan: Promise<void> = Promise.resolve()
  let retrying: Promise<RetryResult> | null = null
  const serving = new Set<Promise<void>>()
  const lastProgressAt = new Map<string, number>()
  const scheduler = createPullScheduler({
    pull: pullOnce,
    running: () => running,
    connected: (peerId) => node.connectedPeers().includes(peerId)
  })
  const book = createPeerBook({ node, state, index, logger, syncing: scheduler.syncing })
  const peer = book.live
  const requestPull = scheduler.request

  function onHello (peerId: string, hello: HelloMessage): void {
    const p = peer(peerId)
    p.remoteHead = hello.head
    learnTheirCursor(p, hello.cursor, 'greeting')
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
      learnTheirCursor(peer(peerId), cursor, 'pull')
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
    storeUnsynced: opts.storeUnsynced ?? false,
    batch: { files: Math.max(1, opts.batch?.files ?? 64), bytes: Math.max(1, opts.batch?.bytes ?? 24 * 1024 * 1024) },
    receive: opts.receive,
    ...(opts.prepare !== undefined ? { prepare: opts.prepare } : {}),
    ...(opts.expectLarge !== undefined ? { expectLarge: opts.expectLarge } : {}),
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
      // the totals first: whoever sees this pull's lastSyncAt also sees what it counted
      for (const k of Object.keys(totals) as Array<keyof PullTotals>) totals[k] += round[k]
      p.lastSyncAt = Date.now()
      p.lastError = null
      p.pendingIn = Math.max(0, (p.remoteHead ?? 0) - await state.cursor(peerId))
      await state.setPeerInfo(peerId, { lastSyncAt: p.lastSyncAt })
      emitProgress(peerId, round, await state.cursor(peerId), true)
      if (round.written > 0 || round.tombstones > 0 || pokeAfterPull.delete(peerId)) notifyLocalChange()
      if (round.fetched > 0) logger.info({ peer: peerId, ...round }, 'sync pull finished')
      return { peerId, ok: true, totals: round }
    } catch (err) {
      if (pokeAfterPull.delete(peerId)) notifyLocalChange()
      const message = (err as Error)?.message ?? String(err)
      p.lastError = message
      if (!stopping.signal.aborted) logger.warn({ peer: peerId, err: message }, 'sync pull failed')
      return { peerId, ok: false, error: message, totals: round }
    }
  }

  async function pokeAll (): Promise<void> {
    await rememberLocalDeletions()
    await Promise.all(node.connectedPeers().map(async (peerId) => {
      // A peer this device is pulling from is busy serving it, and most changes now are the files
      // it sends: it hears of them once that pull ends, in one poke instead of a reverse pull of
      // its own per debounce window (each a session, a change page and index reads on both sides).
      if (scheduler.syncing(peerId)) { pokeAfterPull.add(peerId); return }
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
      libp2p.removeEventListener('peer:connect', onConnect)
      await scheduler.stop()
      await Promise.allSettled([localScan, retrying, ...serving])
      await libp2p.unhandle(SYNC_PROTOCOL_ID)
    },
    notifyLocalChange,
    syncNow,
    retryWaiting,
    addPeer: book.addPeer,
    removePeer: book.removePeer,
    waiting: async () => await waitingSummary(state),
    peers: book.peers,
    stats () {
      return { ...counters, ...serveStats, ...totals, ...extra }
    }
  }
}
