// An early encryption's ciphertext (early-encryption.ts) stored as it comes off the worker, while
// the body is still arriving and being parsed and validated, instead of after the validation:
// storage stages its blocks outside the store (storage/staged-import.ts) and the request commits
// them (moved in, synced, pinned) once its body is valid, or discards them.
//
// What is kept of a body that does not make it, and why nothing is lost: see staged-import.ts.
// In short: until the commit nothing is in the store, pinned or counted; a discard (an invalid or
// non-canonical body, a client gone, a worker given back, a taken name before the commit) removes
// this body's staged files only, so a block another file holds is never touched; a crash leaves
// staged files that the next start removes. Hearth's ciphertext is not deterministic anyway (a
// random session key and S2K salt per message, protocol/openpgp-writer.ts), so two files never
// share a leaf block in practice; the staging does not rely on that.
import type { StorageBackend } from '../storage/types.js'
import { ciphertextParts, type StoredCiphertext } from './encrypt-store.js'
import type { EncryptionPart } from './encryption-job.js'

export interface EarlyStore {
  /** The staged ciphertext made content of the store (synced and pinned), with the job's digest. Once. */
  commit (): Promise<StoredCiphertext>
  /** The staged blocks removed. The job whose parts are staged must be ended (aborted) first. */
  discard (): Promise<void>
}

/** Starts staging `source` (one encryption job's parts); null when storage cannot stage. */
export function stageEarly (storage: Pick<StorageBackend, 'stageStream'>, source: AsyncIterable<Uint8Array | EncryptionPart>): EarlyStore | null {
  const parts = ciphertextParts(source)
  const staged = storage.stageStream?.(parts.pieces) ?? null
  if (staged === null) return null
  return {
    async commit () {
      let cid: string
      try {
        cid = await staged.commit()
      } catch (err) {
        await parts.end() // the job's parts still coming are dropped and its worker freed
        throw err
      }
      return await parts.stored(cid)
    },
    discard: async () => { await staged.discard() }
  }
}
