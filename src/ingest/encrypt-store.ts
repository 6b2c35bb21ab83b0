// Encrypt a file and store its ciphertext in one pass. A file larger than one storage chunk is
// encrypted as a stream (on the encryption workers when the daemon runs them) and its pieces go
// straight into the storage backend's importer: chunking, hashing (the CID) and durable block
// writes of the first pieces run while the rest is still being encrypted, and the whole
// ciphertext is never held in one buffer. A smaller file is encrypted whole and added as one block.
// Pieces from the workers come hashed while this thread is behind them (each piece's SHA-256; the
// plaintext's follows the last piece, read once the blocks are stored); while this thread waits
// for the worker, the worker leaves that to it (encryption-job.ts) and the importer hashes them.
import { CHUNK_SIZE } from '../storage/cid.js'
import type { StreamPiece } from '../storage/stream-pieces.js'
import type { StorageBackend } from '../storage/types.js'
import { isPlaintextDigest, type EncryptionPart } from './encryption-job.js'
import type { Encryptor } from './encryptor.js'

export interface StoredCiphertext {
  cid: string
  encryptedSize: number
  /** The plaintext's SHA-256 (hex) when the encryption worker computed it on the way. */
  plaintextSha256?: string
}

/** A job's parts as a streamed add takes them (`pieces`), and what the job said besides. */
export interface CiphertextParts {
  /** The ciphertext's pieces (hashed when the worker hashed them); ends with the last piece. */
  pieces: AsyncIterable<StreamPiece>
  /** The job's remaining parts read (the plaintext's digest), once `cid` holds the pieces. */
  stored (cid: string): Promise<StoredCiphertext>
  /** Drops the job's parts still to come (a failed store), freeing its worker. */
  end (): Promise<void>
}

export function ciphertextParts (source: AsyncIterable<Uint8Array | EncryptionPart>): CiphertextParts {
  let encryptedSize = 0
  let plaintextSha256: string | undefined
  // made on the first read: a source read once (an early encryption's pieces) is not taken before
  let iterator: AsyncIterator<Uint8Array | EncryptionPart> | null = null
  const parts = (): AsyncIterator<Uint8Array | EncryptionPart> => (iterator ??= source[Symbol.asyncIterator]())
  const pieces = (async function * (): AsyncGenerator<StreamPiece> {
    for (let r = await parts().next(); r.done !== true; r = await parts().next()) {
      const part = r.value
      if (isPlaintextDigest(part)) { plaintextSha256 = part.plaintextSha256; continue }
      if (part instanceof Uint8Array) { encryptedSize += part.byteLength; yield part; continue }
      encryptedSize += part.bytes.byteLength
      // a piece the worker left unhashed (this thread kept up with it) is hashed by the importer
      yield part.sha256 !== undefined ? { bytes: part.bytes, sha256: part.sha256 } : part.bytes
      // the importer's input ends here, not when the plaintext's digest has come too
      if (part.last === true) return
    }
  })()
  return {
    pieces,
    async stored (cid) {
      // the ciphertext is stored whole already: a worker lost now only costs the main thread the
      // plaintext's digest (the index record is hashed there when none came)
      try {
        for (let r = await parts().next(); r.done !== true; r = await parts().next()) {
          if (isPlaintextDigest(r.value)) plaintextSha256 = r.value.plaintextSha256
        }
      } catch {}
      return { cid, encryptedSize, ...(plaintextSha256 !== undefined ? { plaintextSha256 } : {}) }
    },
    async end () { await iterator?.return?.() }
  }
}

/** `early`: the pieces of an encryption of `plaintext` already running (early-encryption.ts). */
export async function encryptAndStore (deps: { storage: StorageBackend; encryptor: Encryptor }, plaintext: Uint8Array, passwordHex: string, early?: AsyncIterable<Uint8Array | EncryptionPart>): Promise<StoredCiphertext> {
  if ((early !== undefined || plaintext.byteLength > CHUNK_SIZE) && deps.storage.addStream !== undefined) {
    const parts = ciphertextParts(early ?? deps.encryptor.encryptChunks(plaintext, passwordHex))
    let cid: string
    try {
      cid = await deps.storage.addStream(parts.pieces)
    } catch (err) {
      // the job's pieces still waiting or coming are dropped now and its worker freed, not kept
      // until the whole file is encrypted
      await parts.end()
      throw err
    }
    return await parts.stored(cid)
  }
  // a small file; or a backend without streamed adds, which only a bare backend lacks (the
  // daemon's storage always streams, joining pieces itself for Kubo): the whole message, and an
  // early encryption's pieces are left to its caller to drop
  const ciphertext = await deps.encryptor.encrypt(plaintext, passwordHex)
  return { cid: await deps.storage.add(ciphertext), encryptedSize: ciphertext.byteLength }
}
