// Encrypt a file and store its ciphertext in one pass. A file larger than one storage chunk is
// encrypted as a stream (on the encryption workers when the daemon runs them) and its pieces go
// straight into the storage backend's importer: chunking, hashing (the CID) and durable block
// writes of the first pieces run while the rest is still being encrypted, and the whole
// ciphertext is never held in one buffer. A smaller file is encrypted whole and added as one block.
import { CHUNK_SIZE } from '../storage/cid.js'
import type { StorageBackend } from '../storage/types.js'
import type { Encryptor } from './encryptor.js'

export interface StoredCiphertext { cid: string; encryptedSize: number }

export async function encryptAndStore (deps: { storage: StorageBackend; encryptor: Encryptor }, plaintext: Uint8Array, passwordHex: string): Promise<StoredCiphertext> {
  if (plaintext.byteLength > CHUNK_SIZE && deps.storage.addStream !== undefined) {
    let encryptedSize = 0
    const pieces = deps.encryptor.encryptChunks(plaintext, passwordHex)
    const counted = (async function * () {
      for await (const piece of pieces) { encryptedSize += piece.byteLength; yield piece }
    })()
    const cid = await deps.storage.addStream(counted)
    return { cid, encryptedSize }
  }
  const ciphertext = await deps.encryptor.encrypt(plaintext, passwordHex)
  return { cid: await deps.storage.add(ciphertext), encryptedSize: ciphertext.byteLength }
}
