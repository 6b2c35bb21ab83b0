// Encrypt a file and store its ciphertext in one pass. A file larger than one storage chunk is
// encrypted as a stream (on the encryption workers when the daemon runs them) and its pieces go
// straight into the storage backend's importer: chunking, hashing (the CID) and durable block
// writes of the first pieces run while the rest is still being encrypted, and the whole
// ciphertext is never held in one buffer. A smaller file is encrypted whole and added as one block.
// Pieces from the workers come hashed (each piece's SHA-256, the plaintext's with the last one),
// so the main thread hashes neither the ciphertext nor the plaintext of a large file.
import { CHUNK_SIZE } from '../storage/cid.js'
import { joinPieces, pieceBytes } from '../storage/stream-pieces.js'
import type { StorageBackend } from '../storage/types.js'
import type { EncryptedPiece } from './encryption-job.js'
import type { Encryptor } from './encryptor.js'

export interface StoredCiphertext {
  cid: string
  encryptedSize: number
  /** The plaintext's SHA-256 (hex) when the encryption worker computed it on the way. */
  plaintextSha256?: string
}

/** `early`: the pieces of an encryption of `plaintext` already running (early-encryption.ts). */
export async function encryptAndStore (deps: { storage: StorageBackend; encryptor: Encryptor }, plaintext: Uint8Array, passwordHex: string, early?: AsyncIterable<Uint8Array | EncryptedPiece>): Promise<StoredCiphertext> {
  if (early !== undefined && deps.storage.addStream === undefined) {
    const joined = await joinPieces(early)
    return { cid: await deps.storage.add(joined), encryptedSize: joined.byteLength }
  }
  if ((early !== undefined || plaintext.byteLength > CHUNK_SIZE) && deps.storage.addStream !== undefined) {
    let encryptedSize = 0
    let plaintextSha256: string | undefined
    const pieces = early ?? deps.encryptor.encryptChunks(plaintext, passwordHex)
    const counted = (async function * () {
      for await (const piece of pieces) {
        encryptedSize += pieceBytes(piece).byteLength
        if (!(piece instanceof Uint8Array)) plaintextSha256 = piece.plaintextSha256 ?? plaintextSha256
        yield piece
      }
    })()
    const cid = await deps.storage.addStream(counted)
    return { cid, encryptedSize, ...(plaintextSha256 !== undefined ? { plaintextSha256 } : {}) }
  }
  const ciphertext = await deps.encryptor.encrypt(plaintext, passwordHex)
  return { cid: await deps.storage.add(ciphertext), encryptedSize: ciphertext.byteLength }
}
