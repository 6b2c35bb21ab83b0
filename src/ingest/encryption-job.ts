// One encryption worker job (run by encryption-worker.ts in a worker thread): a file's plaintext
// in, its OpenPGP message out, whole or in storage-sized pieces, each piece's buffer moved (not
// copied) back to the main thread. Kept apart from encryptor.ts so a worker loads only OpenPGP.
//
// A piece is also hashed here, while it is still in this core's cache, when the main thread is
// behind (pieces it has not taken yet: it is still reading, parsing or validating the body): a
// storage-sized piece is a leaf block of the file's DAG, so its SHA-256 is its CID and the main
// thread (which stores it) need not hash it. When the main thread keeps up, it is waiting for this
// worker, whose AES-CFB + SHA-1 is then the longer path: the piece goes unhashed and the main thread
// hashes it (a quarter of a millisecond) while this worker gets on with the encryption.
// The plaintext is hashed here too, for the file's index record, but after the last piece is out
// (marked `last`): the main thread writes the last blocks and syncs them meanwhile, and needs the
// digest only for the index record after that.
import { createHash } from 'node:crypto'
import type { JobContext, JobPart } from '../lifecycle/worker-job.js'
import { encryptEnvelopeBytes, encryptEnvelopeChunks, type EncryptOptions } from '../protocol/encryption.js'
import type { HashedPiece } from '../storage/stream-pieces.js'
import { arrivedSegments } from './body-arrival.js'

export interface EncryptionJob {
  op: 'whole' | 'chunks'
  plaintext: Uint8Array
  passwordHex: string
  /** Size of the pieces of an `op: 'chunks'` job. */
  pieceBytes: number
  s2k?: EncryptOptions['s2k']
  /** A `chunks` job's plaintext still arriving: its control words (body-arrival.ts). */
  arrival?: Int32Array
}

/** A piece of ciphertext from the workers, with its SHA-256 when the worker hashed it; the last one says so. */
export interface EncryptedPiece { bytes: Uint8Array; sha256?: HashedPiece['sha256']; last?: true }

/** Pieces sent and not yet taken from which the consumer counts as behind (and the worker hashes). */
const CONSUMER_BEHIND = 2

/** The part after the last piece: the plaintext's SHA-256 (hex). */
export interface PlaintextDigest { plaintextSha256: string }

/** What a `chunks` job yields: its pieces in order, then the plaintext's digest. */
export type EncryptionPart = EncryptedPiece | PlaintextDigest

export const isPlaintextDigest = (part: Uint8Array | EncryptionPart): part is PlaintextDigest => 'plaintextSha256' in part

/** `ctx`: how far the consumer is (without one, every piece is hashed). */
export async function * runEncryptionJob (input: unknown, ctx?: JobContext): AsyncGenerator<JobPart> {
  const job = input as EncryptionJob
  const opts = job.s2k !== undefined ? { s2k: job.s2k } : {}
  if (job.op === 'whole') {
    const message = await encryptEnvelopeBytes(job.plaintext, job.passwordHex, opts)
    yield { value: message, transfer: ownBuffer(message) }
    return
  }
  // one piece is held back, so the last one can say it is
  let held: Uint8Array | null = null
  let sent = 0
  const out = (bytes: Uint8Array, last: boolean): JobPart => {
    const behind = ctx === undefined || sent - ctx.taken() >= CONSUMER_BEHIND
    sent++
    const value: EncryptedPiece = { bytes, ...(behind ? { sha256: createHash('sha256').update(bytes).digest() } : {}), ...(last ? { last } : {}) }
    return { value, transfer: ownBuffer(bytes) }
  }
  const plaintext = job.arrival === undefined ? job.plaintext : arrivedSegments(job.plaintext, job.arrival, job.pieceBytes)
  for await (const piece of encryptEnvelopeChunks(plaintext, job.passwordHex, { ...opts, pieceBytes: job.pieceBytes })) {
    if (held !== null) yield out(held, false)
    held = piece
  }
  if (held !== null) yield out(held, true)
  const digest: PlaintextDigest = { plaintextSha256: createHash('sha256').update(job.plaintext).digest('hex') }
  yield { value: digest }
}

/** The bytes' own buffer (moved); a view into a larger one (never made here) would be copied instead. */
function ownBuffer (bytes: Uint8Array): ArrayBuffer[] {
  return bytes.buffer instanceof ArrayBuffer && bytes.byteOffset === 0 && bytes.byteLength === bytes.buffer.byteLength ? [bytes.buffer] : []
}
