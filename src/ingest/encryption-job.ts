// One encryption worker job (run by encryption-worker.ts in a worker thread): a file's plaintext
// in, its OpenPGP message out, whole or in storage-sized pieces, each piece's buffer moved (not
// copied) back to the main thread. Kept apart from encryptor.ts so a worker loads only OpenPGP.
//
// A piece is also hashed here, while it is still in this core's cache: a storage-sized piece is a
// leaf block of the file's DAG, so its SHA-256 is its CID and the main thread (which stores it)
// hashes nothing. The plaintext is hashed as it is encrypted, for the file's index record; its
// digest comes with the last piece.
import { createHash } from 'node:crypto'
import type { JobPart } from '../lifecycle/worker-job.js'
import { encryptEnvelopeBytes, encryptEnvelopeChunks, type EncryptOptions } from '../protocol/encryption.js'
import type { HashedPiece } from '../storage/stream-pieces.js'

export interface EncryptionJob {
  op: 'whole' | 'chunks'
  plaintext: Uint8Array
  passwordHex: string
  /** Size of the pieces of an `op: 'chunks'` job. */
  pieceBytes: number
  s2k?: EncryptOptions['s2k']
}

/** A piece of ciphertext from the workers; the last one also carries the plaintext's SHA-256 (hex). */
export interface EncryptedPiece extends HashedPiece { plaintextSha256?: string }

export async function * runEncryptionJob (input: unknown): AsyncGenerator<JobPart> {
  const job = input as EncryptionJob
  const opts = job.s2k !== undefined ? { s2k: job.s2k } : {}
  if (job.op === 'whole') {
    const message = await encryptEnvelopeBytes(job.plaintext, job.passwordHex, opts)
    yield { value: message, transfer: ownBuffer(message) }
    return
  }
  const plain = createHash('sha256')
  let hashedTo = 0
  // one piece is held back, so the last one can carry the plaintext's digest
  let held: Uint8Array | null = null
  for await (const piece of encryptEnvelopeChunks(job.plaintext, job.passwordHex, { ...opts, pieceBytes: job.pieceBytes })) {
    if (held !== null) yield hashed(held)
    held = piece
    // the plaintext the writer has just read, about one piece of it
    const to = Math.min(job.plaintext.byteLength, hashedTo + job.pieceBytes)
    plain.update(job.plaintext.subarray(hashedTo, to))
    hashedTo = to
  }
  plain.update(job.plaintext.subarray(hashedTo))
  if (held !== null) yield hashed(held, plain.digest('hex'))
}

function hashed (bytes: Uint8Array, plaintextSha256?: string): JobPart {
  const value: EncryptedPiece = { bytes, sha256: createHash('sha256').update(bytes).digest(), ...(plaintextSha256 !== undefined ? { plaintextSha256 } : {}) }
  return { value, transfer: ownBuffer(bytes) }
}

/** The bytes' own buffer (moved); a view into a larger one (never made here) would be copied instead. */
function ownBuffer (bytes: Uint8Array): ArrayBuffer[] {
  return bytes.buffer instanceof ArrayBuffer && bytes.byteOffset === 0 && bytes.byteLength === bytes.buffer.byteLength ? [bytes.buffer] : []
}
