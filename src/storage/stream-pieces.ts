// The pieces a streamed add takes (StorageBackend.addStream): a large file's ciphertext, handed
// over piece by piece while the rest is still being encrypted.
import type { AddOptions } from '@helia/unixfs'
import { rawBlockCid, rawBlockCidOfDigest } from './raw-blocks.js'

/**
 * A piece whose SHA-256 its producer computed already (the encryption worker hashes each piece
 * while it is in its cache): a piece of exactly one chunk is a leaf block, so its CID costs the
 * storing thread no pass over the bytes.
 */
export interface HashedPiece { bytes: Uint8Array; sha256: Uint8Array }

/** Bytes, or bytes with their SHA-256. */
export type StreamPiece = Uint8Array | HashedPiece

/** The bytes of a piece either way. */
export function pieceBytes (piece: StreamPiece): Uint8Array {
  return piece instanceof Uint8Array ? piece : piece.bytes
}

/** The pieces joined, for a backend or caller that adds whole byte arrays only. */
export async function joinPieces (pieces: AsyncIterable<StreamPiece>): Promise<Uint8Array> {
  const parts: Uint8Array[] = []
  for await (const p of pieces) parts.push(pieceBytes(p))
  return Buffer.concat(parts)
}

type BufferImporter = NonNullable<AddOptions['bufferImporter']>

/**
 * The importer's leaf step for raw leaves (what its default does with `rawLeaves`: a raw block,
 * CIDv1 of its SHA-256, stored), taking the digest a chunk came with instead of hashing it again.
 * A chunk is looked up by its buffer: the chunker hands a piece of exactly one chunk over as a
 * view of the piece's whole buffer; anything else (a short last piece the chunker copied) is hashed.
 * Its size is read before the put, which may move its buffer to the file writer (block-sink.ts).
 */
export function knownDigestLeaves (digests: WeakMap<ArrayBufferLike, Uint8Array>): BufferImporter {
  return async function * (file, blockstore) {
    for await (const block of file.content) {
      yield async () => {
        const known = isWholeBuffer(block) ? digests.get(block.buffer) : undefined
        const cid = known !== undefined ? rawBlockCidOfDigest(known) : rawBlockCid(block)
        const size = BigInt(block.byteLength)
        await blockstore.put(cid, block)
        return { cid, size, block }
      }
    }
  }
}

/** Whether the view is its whole buffer (how a piece moved from a worker arrives). */
export const isWholeBuffer = (bytes: Uint8Array): boolean => bytes.byteOffset === 0 && bytes.byteLength === bytes.buffer.byteLength

/** A file of one piece (or none): its bytes, for the single-block add. */
export interface OnePiece { single: Uint8Array }
/** A file of several pieces: their bytes in order, and the digests whole pieces came with (knownDigestLeaves). */
export interface ManyPieces { source: AsyncIterable<Uint8Array>; digests: WeakMap<ArrayBufferLike, Uint8Array> }

/** Reads up to two pieces to tell a one-piece file (a single block) from a file for the importer. */
export async function splitPieces (pieces: AsyncIterable<StreamPiece>): Promise<OnePiece | ManyPieces> {
  const it = pieces[Symbol.asyncIterator]()
  const first = await it.next()
  if (first.done === true) return { single: new Uint8Array(0) }
  const second = await it.next()
  if (second.done === true) return { single: pieceBytes(first.value) }
  const digests = new WeakMap<ArrayBufferLike, Uint8Array>()
  const bytesOf = (piece: StreamPiece): Uint8Array => {
    const bytes = pieceBytes(piece)
    if (!(piece instanceof Uint8Array) && isWholeBuffer(bytes)) digests.set(bytes.buffer, piece.sha256)
    return bytes
  }
  const source = (async function * () {
    yield bytesOf(first.value)
    yield bytesOf(second.value)
    for (let n = await it.next(); n.done !== true; n = await it.next()) yield bytesOf(n.value)
  })()
  return { source, digests }
}
