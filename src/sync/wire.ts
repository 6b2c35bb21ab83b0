// Length-prefixed framing of sync messages over one libp2p stream (the I/O half of protocol.ts).
// Every read has a deadline and every frame a size cap, so a silent or hostile peer costs at most
// one stream, never the daemon. A read that fails throws; the caller decides how the stream ends
// (the answering side first tells the peer why).
import * as lp from 'it-length-prefixed'
import type { Stream } from '@libp2p/interface'
import { HearthError, isHearthError } from '../errors.js'
import {
  BLOB_CHUNK_BYTES, MAX_FRAME_BYTES, decodeMessage, encodeMessage, type BlobMessage, type SyncMessage
} from './protocol.js'

/** Traffic counters, shared by every channel of one engine (bench and tests read them). */
export interface WireCounters {
  messagesSent: number
  messagesReceived: number
  bytesSent: number
  bytesReceived: number
}

export function newCounters (): WireCounters {
  return { messagesSent: 0, messagesReceived: 0, bytesSent: 0, bytesReceived: 0 }
}

export interface Channel {
  send (message: SyncMessage): Promise<void>
  /** Send several messages in one write (one muxer frame instead of one per message). */
  sendAll (messages: SyncMessage[]): Promise<void>
  /**
   * Send ciphertext as the raw frames that follow a `blob` header; with `header`, the header
   * goes in the same write as the first frame (a small file is one write).
   */
  sendBlob (bytes: Uint8Array, header?: BlobMessage): Promise<void>
  /** The next control message, or null when the remote closed its side cleanly. */
  read (timeoutMs?: number): Promise<SyncMessage | null>
  /** Read exactly `size` bytes of raw frames (after a `blob` header). */
  readBlob (size: number): Promise<Uint8Array>
  /** Finish writing (flushes); the stream ends once the remote closes its side too. */
  close (): Promise<void>
  abort (err: Error): void
}

/** The next message, which must be one of `types`; an `error` answer is thrown as what it says. */
export async function expectMessage<T extends SyncMessage['type']> (ch: Pick<Channel, 'read'>, types: T[]): Promise<Extract<SyncMessage, { type: T }>> {
  const message = await ch.read()
  if (message === null) throw new HearthError('SYNC_PROTOCOL_ERROR', `peer closed the stream while ${types.join('/')} was expected`)
  if (message.type === 'error') {
    throw new HearthError(message.code === 'PEER_REJECTED' ? 'PEER_REJECTED' : 'SYNC_PROTOCOL_ERROR', `peer answered: ${message.message}`, { peerCode: message.code })
  }
  if (!(types as string[]).includes(message.type)) throw new HearthError('SYNC_PROTOCOL_ERROR', `expected ${types.join('/')}, got ${message.type}`)
  return message as Extract<SyncMessage, { type: T }>
}

export interface ChannelOptions {
  /** Longest wait for one frame (and for the peer to take what we send) before giving up. */
  readTimeoutMs: number
  counters: WireCounters
}

/** A frame as it-length-prefixed hands it over: the pieces of the socket reads it spans. */
interface FramePieces extends Iterable<Uint8Array> { byteLength: number; subarray (): Uint8Array }

export function openChannel (stream: Stream, opts: ChannelOptions): Channel {
  const frames = lp.decode(stream, { maxDataLength: MAX_FRAME_BYTES })
  const { counters } = opts

  /** The next frame as it arrived (the pieces of one or more socket reads), or null at the end. */
  async function nextPieces (timeoutMs = opts.readTimeoutMs): Promise<FramePieces | null> {
    let timer: NodeJS.Timeout | undefined
    const deadline = new Promise<never>((_resolve, reject) => {
      timer = setTimeout(() => reject(new HearthError('TIMEOUT', `no sync frame from the peer within ${timeoutMs} ms`)), timeoutMs)
    })
    try {
      const next = await Promise.race([frames.next(), deadline])
      if (next.done === true) return null
      counters.bytesReceived += next.value.byteLength
      return next.value
    } catch (err) {
      if (isHearthError(err)) throw err
      // it-length-prefixed rejects oversized or malformed length prefixes
      const name = (err as Error)?.name ?? ''
      if (/InvalidDataLength|InvalidMessageLength|InvalidLengthLength|UnexpectedEOF/i.test(name)) {
        throw new HearthError('SYNC_PROTOCOL_ERROR', `malformed sync frame: ${(err as Error).message}`)
      }
      throw err
    } finally {
      clearTimeout(timer)
    }
  }

  async function nextFrame (timeoutMs?: number): Promise<Uint8Array | null> {
    return (await nextPieces(timeoutMs))?.subarray() ?? null
  }

  /** Writes length-prefixed frames in one send. */
  async function write (...frames: Uint8Array[]): Promise<void> {
    const framed = lp.encode.single(frames[0]!)
    for (const f of frames.slice(1)) framed.append(lp.encode.single(f))
    for (const f of frames) counters.bytesSent += f.byteLength
    // a peer that stops reading must not hold this side (and the blob it is sending) forever
    if (!stream.send(framed)) await stream.onDrain({ signal: AbortSignal.timeout(opts.readTimeoutMs) })
  }

  return {
    async send (message) {
      await write(encodeMessage(message))
      counters.messagesSent++
    },
    async sendAll (messages) {
      if (messages.length === 0) return
      await write(...messages.map(encodeMessage))
      counters.messagesSent += messages.length
    },
    async sendBlob (bytes, header) {
      const chunks: Uint8Array[] = []
      for (let off = 0; off < bytes.byteLength; off += BLOB_CHUNK_BYTES) chunks.push(bytes.subarray(off, Math.min(off + BLOB_CHUNK_BYTES, bytes.byteLength)))
      if (header !== undefined) {
        await write(encodeMessage(header), ...chunks.slice(0, 1))
        counters.messagesSent++
      } else if (chunks.length > 0) await write(chunks[0]!)
      for (const chunk of chunks.slice(1)) await write(chunk)
    },
    async read (timeoutMs) {
      const frame = await nextFrame(timeoutMs)
      if (frame === null) return null
      const message = decodeMessage(frame)
      counters.messagesReceived++
      return message
    },
    async readBlob (size) {
      // A blob over one frame (a large file) is decrypted on a worker thread while this thread
      // stores it: in shared memory the worker reads the same bytes, with no copy handed over.
      const out = size > BLOB_CHUNK_BYTES ? new Uint8Array(new SharedArrayBuffer(size)) : new Uint8Array(size)
      let filled = 0
      while (filled < size) {
        const frame = await nextPieces()
        if (frame === null || frame.byteLength === 0 || frame.byteLength > size - filled) {
          throw new HearthError('SYNC_PROTOCOL_ERROR', 'blob frames do not add up to the announced size')
        }
        // piece by piece into place: a frame spanning several socket reads is not joined first
        for (const piece of frame) {
          out.set(piece, filled)
          filled += piece.byteLength
        }
      }
      return out
    },
    async close () {
      await stream.close()
    },
    abort (err) {
      stream.abort(err)
    }
  }
}
