// The pulling side of a sync session: page through a peer's change log from the persisted cursor,
// fetch only ciphertext this device does not hold (pipelined, bounded in count and bytes), check
// each CID, hand the bytes to the daemon's receive hook and advance the cursor entry by entry, so
// a session cut anywhere resumes at the first entry not yet durably handled.
import type { Stream } from '@libp2p/interface'
import type { FileIndex } from '../db/file-index.js'
import type { FileRecord } from '../db/types.js'
import { HearthError } from '../errors.js'
import type { Logger } from '../log.js'
import type { StorageBackend } from '../storage/types.js'
import {
  MAX_CHANGES_LIMIT, checkPeerHello, isTombstone, type HelloMessage, type LiveEntry, type SyncMessage,
  type TombstoneEntry, type WireEntry
} from './protocol.js'
import { helloMessage } from './serve.js'
import type { SyncState } from './state.js'
import { openChannel, type Channel, type WireCounters } from './wire.js'

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

export type ReceiveHook = (entry: LiveEntry, ciphertext: Uint8Array, from: PeerContext) => Promise<ReceiveOutcome>
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
  /** Fetched entries handed to receive at the same time. */
  concurrency: number
  receive: ReceiveHook
  applyTombstone: TombstoneHook
  learnFileId?: FileIdHook
  /** Called after the greeting and as the session progresses (entries listed but not handled). */
  onHello (peerId: string, hello: HelloMessage): void
  onPending (peerId: string, pendingIn: number): void
  onProgress (peerId: string, totals: PullTotals, cursor: number): void
}

type Disposition = 'held' | 'settled' | 'parked' | 'new'

/** Most ciphertext bytes being stored and received at the same time (at least one file). */
const CONCURRENT_BYTES = 4 * 1024 * 1024

async function expect<T extends SyncMessage['type']> (ch: Channel, types: T[]): Promise<Extract<SyncMessage, { type: T }>> {
  const message = await ch.read()
  if (message === null) throw new HearthError('SYNC_PROTOCOL_ERROR', `peer closed the stream while ${types.join('/')} was expected`)
  if (message.type === 'error') {
    throw new HearthError(message.code === 'PEER_REJECTED' ? 'PEER_REJECTED' : 'SYNC_PROTOCOL_ERROR', `peer answered: ${message.message}`, { peerCode: message.code })
  }
  if (!(types as string[]).includes(message.type)) throw new HearthError('SYNC_PROTOCOL_ERROR', `expected ${types.join('/')}, got ${message.type}`)
  return message as Extract<SyncMessage, { type: T }>
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

async function disposition (cid: string, ctx: PullContext): Promise<{ kind: Disposition; records: FileRecord[] }> {
  const records = await ctx.index.byCid(cid)
  if (records.length > 0) return { kind: 'held', records }
  if (await ctx.state.settled(cid) !== null) return { kind: 'settled', records }
  if (await ctx.state.parked(cid) !== null) return { kind: 'parked', records }
  return { kind: 'new', records }
}

/** What stays the same across the pages of one pull session. */
interface SessionRun {
  ch: Channel
  peerId: string
  from: PeerContext
  ctx: PullContext
  totals: PullTotals
  signal: AbortSignal
}

interface PlannedEntry { entry: WireEntry; fetch: boolean; records: FileRecord[] }

/** Decide first which entries need ciphertext (each CID fetched once), so fetches can be pipelined. */
async function planPage (entries: WireEntry[], ctx: PullContext): Promise<PlannedEntry[]> {
  const planned: PlannedEntry[] = []
  const fetching = new Set<string>()
  for (const entry of entries) {
    const d = await disposition(entry.cid, ctx)
    const fetch = !isTombstone(entry) && d.kind === 'new' && !fetching.has(entry.cid)
    if (fetch) fetching.add(entry.cid)
    planned.push({ entry, fetch, records: d.records })
  }
  return planned
}

/**
 * Keeps fetch requests flowing: at most `window.requests` in flight and `window.bytes` announced
 * bytes (always at least one request), in the order of `queue`.
 */
function fetchWindow (ch: Channel, queue: LiveEntry[], window: PullContext['window']): { fill (): Promise<void>; answered (entry: LiveEntry): void } {
  let sent = 0
  let inFlight = 0
  let inFlightBytes = 0
  return {
    async fill () {
      while (sent < queue.length && (inFlight === 0 ||
        (inFlight < window.requests && inFlightBytes + queue[sent]!.size <= window.bytes))) {
        await ch.send({ type: 'fetch', cid: queue[sent]!.cid })
        inFlight++
        inFlightBytes += queue[sent]!.size
        sent++
      }
    },
    answered (entry) {
      inFlight--
      inFlightBytes -= entry.size
    }
  }
}

/**
 * Entries finish out of order (fetched ones are received concurrently), so the cursor only ever
 * moves over the contiguous prefix of finished entries. Cursor writes are chained, so a late
 * write never stores an older value.
 */
function cursorCommitter (run: SessionRun, planned: PlannedEntry[], cursor: number, beyondPage: number): { finish (i: number): void; readonly committed: number; flushed (): Promise<void> } {
  const finished = new Array<boolean>(planned.length).fill(false)
  let prefix = 0
  let committed = cursor
  let commits: Promise<void> = Promise.resolve()
  return {
    finish (i) {
      finished[i] = true
      run.totals.handled++
      while (prefix < planned.length && finished[prefix] === true) committed = planned[prefix++]!.entry.seq
      run.ctx.onPending(run.peerId, planned.length - prefix + beyondPage)
      commits = commits.then(async () => { await run.ctx.state.setCursor(run.peerId, committed) })
    },
    get committed () { return committed },
    async flushed () { await commits }
  }
}

/** An entry held here already (or settled): nothing to fetch; learn its file id if it has one. */
async function skipHeld (entry: LiveEntry, held: FileRecord[], ctx: PullContext): Promise<void> {
  const records = held.length > 0 ? held : await ctx.index.byCid(entry.cid)
  if (entry.fileId !== null && ctx.learnFileId !== undefined && records.length > 0 &&
    records.every((r) => r.state !== 'deleted' && (r.fileId === undefined || r.fileId === null))) {
    await ctx.learnFileId(records, entry.fileId)
  }
}

/** Handle one page of the peer's change log; resolves to the cursor durably reached. */
async function handlePage (run: SessionRun, page: { entries: WireEntry[]; cursor: number; beyondPage: number }): Promise<number> {
  const { ch, ctx, totals, signal, from } = run
  const planned = await planPage(page.entries, ctx)
  const window = fetchWindow(ch, planned.filter((p) => p.fetch).map((p) => p.entry as LiveEntry), ctx.window)
  const cursor = cursorCommitter(run, planned, page.cursor, page.beyondPage)
  const running = new Set<Promise<void>>()
  let runningBytes = 0
  let failure: { error: unknown } | null = null
  const settleRunning = async (): Promise<void> => { await Promise.all(running) }

  for (let i = 0; i < planned.length && failure === null; i++) {
    signal.throwIfAborted()
    const { entry } = planned[i]!
    if (isTombstone(entry)) {
      await settleRunning() // a deletion never overtakes a write still in progress
      if (failure !== null) break
      await handleTombstone(entry, from, ctx)
      totals.tombstones++
      cursor.finish(i)
    } else if (planned[i]!.fetch) {
      // Small files are handled several at a time (their cost is mostly waiting on disk); large
      // ones one at a time (their cost is CPU: hashing, decryption), which also bounds memory.
      while (running.size > 0 && (running.size >= ctx.concurrency || runningBytes + entry.size > CONCURRENT_BYTES)) await Promise.race(running)
      if (failure !== null) break
      await window.fill()
      const answer = await expect(ch, ['blob', 'missing'])
      if (answer.cid !== entry.cid) throw new HearthError('SYNC_PROTOCOL_ERROR', 'fetch answers arrived out of order')
      window.answered(entry)
      if (answer.type === 'missing') {
        // Deleted or lost on the peer since it listed it; a tombstone, if any, comes later.
        totals.missing++
        cursor.finish(i)
        continue
      }
      const bytes = await ch.readBlob(answer.size)
      await window.fill() // keep the peer sending while this device stores, decrypts and writes
      totals.fetched++
      totals.fetchedBytes += bytes.byteLength
      runningBytes += bytes.byteLength
      const task: Promise<void> = accept(entry, bytes, from, ctx, totals).then(
        () => { cursor.finish(i); ctx.onProgress(run.peerId, totals, cursor.committed) },
        (error: unknown) => { failure ??= { error } }
      ).finally(() => { running.delete(task); runningBytes -= bytes.byteLength })
      running.add(task)
    } else {
      await skipHeld(entry, planned[i]!.records, ctx)
      totals.skipped++
      cursor.finish(i)
    }
  }
  await settleRunning()
  await cursor.flushed()
  if (failure !== null) throw (failure as { error: unknown }).error
  return cursor.committed
}

async function handleTombstone (entry: TombstoneEntry, from: PeerContext, ctx: PullContext): Promise<void> {
  const live = (await ctx.index.byCid(entry.cid)).filter((r) => r.state !== 'deleted')
  if (live.length > 0) await ctx.applyTombstone(entry, live, from)
  // Remembered even when nothing was held, so a peer that has not seen the deletion yet cannot
  // make this device fetch the file again.
  await ctx.state.settle(entry.cid, 'deleted')
  if (await ctx.state.parked(entry.cid) !== null) {
    await ctx.state.unpark(entry.cid)
    await ctx.storage.unpin(entry.cid)
  }
}

/** Store, verify and hand over one fetched ciphertext. */
async function accept (entry: LiveEntry, bytes: Uint8Array, from: PeerContext, ctx: PullContext, totals: PullTotals): Promise<void> {
  const cid = await ctx.storage.add(bytes)
  if (cid !== entry.cid) {
    // Not settled: another peer may serve the right bytes for this CID. The bytes just stored are
    // unpinned unless something here already holds them.
    if ((await ctx.index.byCid(cid)).length === 0 && await ctx.state.parked(cid) === null) await ctx.storage.unpin(cid)
    ctx.logger.warn({ peer: from.peerId, announced: entry.cid, got: cid }, 'peer sent bytes that do not match the announced CID; ignored')
    totals.rejected++
    return
  }
  const outcome = await ctx.receive(entry, bytes, from)
  await settleOutcome(entry, outcome, from, ctx)
  totals[outcome === 'waiting-schema' ? 'waiting' : outcome]++
}

/** Persist what the receive hook decided; shared with the retry of parked entries. */
export async function settleOutcome (entry: LiveEntry, outcome: ReceiveOutcome, from: PeerContext, ctx: Pick<PullContext, 'index' | 'state' | 'storage'>): Promise<void> {
  switch (outcome) {
    case 'written':
      await ctx.state.unpark(entry.cid)
      return
    case 'waiting-schema':
      await ctx.state.park(entry, from.peerId)
      return
    case 'exists':
    case 'rejected':
      await ctx.state.settle(entry.cid, outcome)
      await ctx.state.unpark(entry.cid)
      // Nothing references this ciphertext unless the hook indexed it after all.
      if ((await ctx.index.byCid(entry.cid)).length === 0) await ctx.storage.unpin(entry.cid)
      return
    default:
      throw new HearthError('INTERNAL', `receive hook returned ${JSON.stringify(outcome)}`)
  }
}
