// The answering side of a sync session: greets, lists local changes as wire entries, streams the
// ciphertext of servable files and takes pokes. Anything unexpected from the peer ends this one
// stream (with an `error` frame when the stream still allows it); the node keeps running.
import type { Stream } from '@libp2p/interface'
import type { FileIndex } from '../db/file-index.js'
import { HearthError, isHearthError } from '../errors.js'
import type { Logger } from '../log.js'
import type { StorageBackend } from '../storage/types.js'
import { CHUNK_SIZE } from '../storage/cid.js'
import { isServable, toWireEntry } from './offer.js'
import {
  SYNC_PROTOCOL_VERSION, checkPeerHello, isTombstone, type ChangesMessage, type HelloMessage, type WireEntry
} from './protocol.js'
import { openChannel, type Channel, type WireCounters } from './wire.js'

export interface ServeStats {
  /** fetch requests answered with a blob */
  fetchesServed: number
  blobBytesServed: number
}

export interface ServeContext {
  ownerAddress: string
  index: FileIndex
  storage: StorageBackend
  logger: Logger
  counters: WireCounters
  stats: ServeStats
  readTimeoutMs: number
  /**
   * Longest wait for the peer's next request. Longer than readTimeoutMs: a puller sends its next
   * changes-request only after handling a page, which can take a while for large files.
   */
  idleTimeoutMs: number
  /** How far this device has handled the peer's log (for our greeting). */
  cursorFor (peerId: string): Promise<number>
  onHello (peerId: string, hello: HelloMessage): void
  /** The peer has handled our log up to `cursor` (from its changes-request or ack). */
  onPeerCursor (peerId: string, cursor: number): void
  onPoke (peerId: string, head: number): void
}

export async function helloMessage (ctx: Pick<ServeContext, 'ownerAddress' | 'index' | 'cursorFor'>, peerId: string): Promise<HelloMessage> {
  return {
    type: 'hello',
    protocolVersion: SYNC_PROTOCOL_VERSION,
    ownerAddress: ctx.ownerAddress,
    head: await ctx.index.currentSeq(),
    cursor: await ctx.cursorFor(peerId)
  }
}

/**
 * One page of the local change log as offered to peers. The last page's `next` is the head read
 * before it: a seq that left no entry (a write taken back, FileIndex.revert) would otherwise stay
 * ahead of every peer's cursor, and the peer would look one change behind for good.
 */
export async function listChanges (index: FileIndex, since: number, limit: number): Promise<ChangesMessage> {
  // read first: every change up to it is in the page below, or has moved past it
  const head = await index.currentSeq()
  const changes = await index.changesSince(since, limit)
  const entries: WireEntry[] = []
  for (const change of changes) {
    const entry = toWireEntry(change)
    if (entry !== null) entries.push(entry)
  }
  const done = changes.length < limit
  const last = changes.length === 0 ? since : changes[changes.length - 1]!.seq
  return { type: 'changes', entries, next: done ? Math.max(last, head) : last, done }
}

async function serveFetch (ch: Channel, cid: string, ctx: ServeContext): Promise<void> {
  const records = await ctx.index.byCid(cid)
  let bytes: Uint8Array | null = null
  // Only ciphertext the index offers is served: a peer cannot read arbitrary blocks by CID.
  if (records.some(isServable)) {
    try {
      bytes = await ctx.storage.get(cid)
    } catch (err) {
      if (!isHearthError(err, 'STORAGE_NOT_FOUND')) throw err
      ctx.logger.warn({ cid }, 'indexed ciphertext is missing from storage; told the peer it is missing')
    }
  }
  if (bytes === null) {
    await ch.send({ type: 'missing', cid })
    return
  }
  await ch.sendBlob(bytes, { type: 'blob', cid, size: bytes.byteLength })
  ctx.stats.fetchesServed++
  ctx.stats.blobBytesServed += bytes.byteLength
}

export async function serveSession (stream: Stream, peerId: string, ctx: ServeContext): Promise<void> {
  const ch = openChannel(stream, { readTimeoutMs: ctx.readTimeoutMs, counters: ctx.counters })
  const log = ctx.logger.child({ peer: peerId })
  try {
    const first = await ch.read()
    if (first === null) return
    if (first.type !== 'hello') throw new HearthError('SYNC_PROTOCOL_ERROR', `a session must start with hello, got ${first.type}`)
    checkPeerHello(first, ctx.ownerAddress)
    ctx.onHello(peerId, first)
    await ch.send(await helloMessage(ctx, peerId))
    for (;;) {
      const message = await ch.read(ctx.idleTimeoutMs)
      if (message === null) break
      switch (message.type) {
        case 'changes-request': {
          ctx.onPeerCursor(peerId, message.since)
          const page = await listChanges(ctx.index, message.since, message.limit)
          // the peer may ask for a large file next: its read needs more code than a small one's
          if (page.entries.some((e) => !isTombstone(e) && e.size > CHUNK_SIZE)) ctx.storage.expectLarge?.('read')
          await ch.send(page)
          break
        }
        case 'fetch':
          await serveFetch(ch, message.cid, ctx)
          break
        case 'poke':
          ctx.onPoke(peerId, message.head)
          break
        case 'ack':
          ctx.onPeerCursor(peerId, message.cursor)
          break
        case 'error':
          log.debug({ code: message.code, reason: message.message }, 'peer ended the session with an error')
          ch.abort(new HearthError('SYNC_PROTOCOL_ERROR', 'peer ended the session'))
          return
        default:
          throw new HearthError('SYNC_PROTOCOL_ERROR', `unexpected ${message.type} from the dialing side`)
      }
    }
    await ch.close()
  } catch (err) {
    if (isStreamGone(err)) {
      // the peer went away or aborted its pull: nothing to report
      log.debug({ err: (err as Error)?.message }, 'sync session stream ended')
      ch.abort(err as Error)
      return
    }
    if (isHearthError(err)) {
      log.warn({ code: err.code, err: err.message }, 'sync session ended with an error')
      await endWithError(ch, err.code, err.message)
      return
    }
    // a failure of this device (index, storage): the peer only learns that it failed
    log.warn({ err }, 'sync session failed')
    await endWithError(ch, 'INTERNAL', 'internal error')
  }
}

/** libp2p stream and connection errors that mean "the other side is gone", not "something broke". */
function isStreamGone (err: unknown): boolean {
  const name = (err as Error)?.name ?? ''
  return !isHearthError(err) && /^(Stream|Muxer|Connection)\w*Error$|^AbortError$/.test(name)
}

/** Best effort: tell the peer why, flush briefly, then drop the stream. */
export async function endWithError (ch: Channel, code: string, message: string): Promise<void> {
  try {
    await ch.send({ type: 'error', code, message })
    await Promise.race([ch.close(), new Promise((resolve) => setTimeout(resolve, 1000).unref())])
  } catch {
    // the stream is already gone
  } finally {
    ch.abort(new HearthError('SYNC_PROTOCOL_ERROR', message))
  }
}
