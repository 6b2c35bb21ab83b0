// One encryption worker job (run by encryption-worker.ts in a worker thread): a file's plaintext
// in, its OpenPGP message out, whole or in storage-sized pieces, each piece's buffer moved (not
// copied) back to the main thread. Kept apart from encryptor.ts so a worker loads only OpenPGP.
import type { JobPart } from '../lifecycle/worker-job.js'
import { encryptEnvelopeBytes, encryptEnvelopeChunks, type EncryptOptions } from '../protocol/encryption.js'

export interface EncryptionJob {
  op: 'whole' | 'chunks'
  plaintext: Uint8Array
  passwordHex: string
  /** Size of the pieces of an `op: 'chunks'` job. */
  pieceBytes: number
  s2k?: EncryptOptions['s2k']
}

export async function * runEncryptionJob (input: unknown): AsyncGenerator<JobPart> {
  const job = input as EncryptionJob
  const opts = job.s2k !== undefined ? { s2k: job.s2k } : {}
  if (job.op === 'whole') {
    const message = await encryptEnvelopeBytes(job.plaintext, job.passwordHex, opts)
    yield { value: message, transfer: ownBuffer(message) }
    return
  }
  for await (const piece of encryptEnvelopeChunks(job.plaintext, job.passwordHex, { ...opts, pieceBytes: job.pieceBytes })) {
    yield { value: piece, transfer: ownBuffer(piece) }
  }
}

/** The bytes' own buffer (moved); a view into a larger one (never made here) would be copied instead. */
function ownBuffer (bytes: Uint8Array): ArrayBuffer[] {
  return bytes.buffer instanceof ArrayBuffer && bytes.byteOffset === 0 && bytes.byteLength === bytes.buffer.byteLength ? [bytes.buffer] : []
}
