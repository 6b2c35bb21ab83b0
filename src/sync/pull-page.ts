// One page of a peer's change log, pulled: decide which entries need ciphertext, keep fetch
// requests flowing (bounded in count and announced bytes), read each answer, verify it and hand
// the fetched files to receive in batches (receive-batch.ts), and move the cursor only over the
// contiguous prefix of entries durably handled, so a session cut anywhere resumes at the first
// entry not yet handled.
import type { FileRecord } from '../db/types.js'
import { HearthError } from '../errors.js'
import { CHUNK_SIZE } from '../storage/cid.js'
import type { UnsyncedAdd } from '../storage/types.js'
import { isTombstone, type LiveEntry, type TombstoneEntry, type WireEntry } from './protocol.js'
import type { PeerContext, PullContext, PullTotals, ReceiveOutcome } from './pull.js'
import { createReceiveBatcher, type FetchedFile } from './receive-batch.js'
import { expectMessage, type Channel } from './wire.js'

/** What stays the same across the pages of one pull session. */
export interface SessionRun {
  ch: Channel
  peerId: string
  from: PeerContext
  ctx: PullContext
  totals: PullTotals
  signal: AbortSignal
}

type Disposition = 'held' | 'settled' | 'parked' | 'new'
interface PlannedEntry { entry: WireEntry; fetch: boolean; records: FileRecord[] }

/** Index and state reads of a page run this many at a time. */
const PLAN_CONCURRENCY = 16
/** Large files being stored ahead of their batch at once (earlyStores). */
const EARLY_STORES = 4

async function disposition (cid: string, ctx: PullContext): Promise<{ kind: Disposition; records: FileRecord[] }> {
  const records = await ctx.index.byCid(cid)
  if (records.length > 0) return { kind: 'held', records }
  if (await ctx.state.settled(cid) !== null) return { kind: 'settled', records }
  if (await ctx.state.parked(cid) !== null) return { kind: 'parked', records }
  return { kind: 'new', records }
}

/** Decide first which entries need ciphertext (each CID fetched once), so fetches can be pipelined. */
async function planPage (entries: WireEntry[], ctx: PullContext): Promise<PlannedEntry[]> {
  const found = new Array<{ kind: Disposition; records: FileRecord[] }>(entries.length)
  let next = 0
  await Promise.all(Array.from({ length: Math.min(PLAN_CONCURRENCY, entries.length) }, async () => {
    while (next < entries.length) {
      const i = next++
      found[i] = await disposition(entries[i]!.cid, ctx)
    }
  }))
  const fetching = new Set<string>()
  return entries.map((entry, i) => {
    const d = found[i]!
    const fetch = !isTombstone(entry) && d.kind === 'new' && !fetching.has(entry.cid)
    if (fetch) fetching.add(entry.cid)
    return { entry, fetch, records: d.records }
  })
}

/**
 * Keeps fetch requests flowing: at most `window.requests` in flight and `window.bytes` announced
 * bytes (always at least one request), in the order of `queue`; the requests a fill allows go out
 * in one write.
 */
function fetchWindow (ch: Channel, queue: LiveEntry[], window: PullContext['window']): { fill (): Promise<void>; answered (entry: LiveEntry): void } {
  let sent = 0
  let inFlight = 0
  let inFlightBytes = 0
  return {
    async fill () {
      const requests: Array<{ type: 'fetch'; cid: string }> = []
      while (sent < queue.length && (inFlight === 0 ||
        (inFlight < window.requests && inFlightBytes + queue[sent]!.size <= window.bytes))) {
        requests.push({ type: 'fetch', cid: queue[sent]!.cid })
        inFlight++
        inFlightBytes += queue[sent]!.size
        sent++
      }
      await ch.sendAll(requests)
    },
    answered (entry) {
      inFlight--
      inFlightBytes -= entry.size
    }
  }
}

/**
 * Entries finish out of order (a batch finishes together, skipped entries at once), so the cursor
 * only ever moves over the contiguous prefix of finished entries. One cursor write at a time,
 * always of the latest value: entries finishing meanwhile share the next write.
 */
function cursorCommitter (run: SessionRun, planned: PlannedEntry[], cursor: number, beyondPage: number): { finish (i: number): void; readonly committed: number; flushed (): Promise<void> } {
  const finished = new Array<boolean>(planned.length).fill(false)
  let prefix = 0
  let committed = cursor
  let written = cursor
  let writing: Promise<void> | null = null
  let writeError: { error: unknown } | null = null

  function persist (): void {
    if (writing !== null || written === committed) return
    writing = (async () => {
      while (written !== committed) {
        const value = committed
        await run.ctx.state.setCursor(run.peerId, value)
        written = value
      }
    })().catch((error: unknown) => { writeError ??= { error } }).finally(() => { writing = null })
  }

  return {
    finish (i) {
      finished[i] = true
      run.totals.handled++
      while (prefix < planned.length && finished[prefix] === true) committed = planned[prefix++]!.entry.seq
      run.ctx.onPending(run.peerId, planned.length - prefix + beyondPage)
      if (writeError === null) persist()
    },
    get committed () { return written },
    async flushed () {
      for (;;) {
        if (writing !== null) { await writing; continue }
        if (writeError !== null) throw writeError.error
        if (written === committed) return
        persist()
      }
    }
  }
}

/**
 * A file over one chunk is stored (its blocks hashed, written and synced, then pinned) from the
 * moment it is read off the stream, like its decryption starts then, instead of when its batch
 * comes: its storage's waits for the disk overlap the receive of the files before it, which a
 * batch of one large file otherwise leaves alone with its own. At most EARLY_STORES at once; the
 * rest are stored with their batch. What is stored but never received (the session failed first)
 * loses its pin again unless something here holds it (`settle`).
 */
function earlyStores (ctx: PullContext): { start (at: number, entry: LiveEntry, bytes: Uint8Array): void; take (at: number): Promise<string> | undefined; settle (): Promise<void> } {
  const started = new Map<number, Promise<string>>()
  let running = 0
  return {
    start (at, entry, bytes) {
      if (entry.size <= CHUNK_SIZE || running >= EARLY_STORES) return
      running++
      const stored = ctx.storage.add(bytes).finally(() => { running-- })
      stored.catch(() => {}) // awaited by its accept, or by settle
      started.set(at, stored)
    },
    take (at) {
      const stored = started.get(at)
      started.delete(at)
      return stored
    },
    async settle () {
      for (const [at, stored] of started) {
        started.delete(at)
        const got = await stored.catch(() => null)
        if (got === null) continue
        await unpinUnlessHeld(got, ctx).catch(() => {})
      }
    }
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
export async function handlePage (run: SessionRun, page: { entries: WireEntry[]; cursor: number; beyondPage: number }): Promise<number> {
  const { ch, ctx, totals, signal, from } = run
  const planned = await planPage(page.entries, ctx)
  if (planned.some((p) => p.fetch && (p.entry as LiveEntry).size > CHUNK_SIZE)) {
    // while the first bytes are on their way: the storage's large-file code and the decryption worker
    ctx.storage.expectLarge?.('add')
    ctx.expectLarge?.()
  }
  const window = fetchWindow(ch, planned.filter((p) => p.fetch).map((p) => p.entry as LiveEntry), ctx.window)
  const cursor = cursorCommitter(run, planned, page.cursor, page.beyondPage)
  const early = earlyStores(ctx)
  const batcher = createReceiveBatcher(ctx.batch, async (batch: FetchedFile[]) => {
    const results = await Promise.allSettled(batch.map(async (f) => { await accept(f, from, ctx, totals, early.take(f.at)) }))
    let failed: { error: unknown } | null = null
    results.forEach((r, k) => {
      if (r.status === 'fulfilled') cursor.finish(batch[k]!.at)
      else failed ??= { error: r.reason }
    })
    ctx.onProgress(run.peerId, totals, cursor.committed)
    if (failed !== null) throw (failed as { error: unknown }).error
  })

  try {
    for (let i = 0; i < planned.length && batcher.failure === null; i++) {
      signal.throwIfAborted()
      const { entry } = planned[i]!
      if (isTombstone(entry)) {
        await batcher.drain() // a deletion never overtakes a write still in progress
        await handleTombstone(entry, from, ctx)
        totals.tombstones++
        cursor.finish(i)
      } else if (planned[i]!.fetch) {
        // memory: the batch being received plus the one gathering, then the peer waits
        await batcher.room(entry.size)
        if (batcher.failure !== null) break
        await window.fill()
        const answer = await expectMessage(ch, ['blob', 'missing'])
        if (answer.cid !== entry.cid) throw new HearthError('SYNC_PROTOCOL_ERROR', 'fetch answers arrived out of order')
        window.answered(entry)
        if (answer.type === 'missing') {
          // Deleted or lost on the peer since it listed it; a tombstone, if any, comes later.
          totals.missing++
          cursor.finish(i)
          continue
        }
        // the batch's memory and the window were counted with the listed size: a peer must not
        // make this device read (and start decrypting) more than it listed
        if (answer.size !== entry.size) throw new HearthError('SYNC_PROTOCOL_ERROR', `the blob of ${entry.cid} is ${answer.size} bytes, not the ${entry.size} listed`)
        const bytes = await ch.readBlob(answer.size)
        await window.fill() // keep the peer sending while this device stores, decrypts and writes
        totals.fetched++
        totals.fetchedBytes += bytes.byteLength
        // its decryption starts now, on a worker, while the files before it are received, and a
        // large one's storage too
        const prepared = ctx.prepare?.(entry, bytes)
        early.start(i, entry, bytes)
        batcher.add({ at: i, entry, bytes, ...(prepared !== undefined ? { prepared } : {}) })
      } else {
        await skipHeld(entry, planned[i]!.records, ctx)
        totals.skipped++
        cursor.finish(i)
      }
    }
    await batcher.drain()
  } catch (err) {
    // what was read whole is still received and its cursor kept: a restart does not fetch it again
    await batcher.drain().catch(() => {})
    await early.settle()
    await cursor.flushed().catch(() => {})
    throw err
  }
  await cursor.flushed()
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

/** Unpins a ciphertext stored for a file this device did not take, unless an index record or a parked entry holds it. */
async function unpinUnlessHeld (cid: string, ctx: Pick<PullContext, 'index' | 'state' | 'storage'>): Promise<void> {
  if ((await ctx.index.byCid(cid)).length === 0 && await ctx.state.parked(cid) === null) await ctx.storage.unpin(cid)
}

/**
 * A single-block ciphertext stored as `ctx.storeUnsynced` says: kept in memory until the journal's
 * checkpoint writes it (`deferred`), or written without a sync; null when storage cannot (then `add`).
 */
async function storeUnsynced (bytes: Uint8Array, ctx: PullContext): Promise<{ unsynced: UnsyncedAdd | null; deferred: boolean }> {
  if (ctx.storeUnsynced === false) return { unsynced: null, deferred: false }
  const deferred = ctx.storeUnsynced === 'deferred' ? await ctx.storage.addDeferred?.(bytes) ?? null : null
  if (deferred !== null) return { unsynced: deferred, deferred: true }
  return { unsynced: await ctx.storage.addUnsynced?.(bytes) ?? null, deferred: false }
}

/** Store (unless that started when it was read), verify and hand over one fetched ciphertext. */
async function accept ({ entry, bytes, prepared }: FetchedFile, from: PeerContext, ctx: PullContext, totals: PullTotals, early?: Promise<string>): Promise<void> {
  const { unsynced, deferred } = early === undefined ? await storeUnsynced(bytes, ctx) : { unsynced: null, deferred: false }
  const cid = unsynced?.cid ?? await (early ?? ctx.storage.add(bytes))
  if (cid !== entry.cid) {
    // Not settled: another peer may serve the right bytes for this CID. The bytes just stored are
    // unpinned unless something here already holds them.
    await unpinUnlessHeld(cid, ctx)
    ctx.logger.warn({ peer: from.peerId, announced: entry.cid, got: cid }, 'peer sent bytes that do not match the announced CID; ignored')
    totals.rejected++
    return
  }
  const stored = { ...(unsynced !== null ? { unsyncedFiles: unsynced.files } : {}), ...(deferred ? { deferred } : {}), ...(prepared !== undefined ? { prepared } : {}) }
  const outcome = await ctx.receive(entry, bytes, from, stored)
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
