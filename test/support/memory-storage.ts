// A storage backend that keeps ciphertexts in a Map, with the real CIDs (cidOfBytes), for unit
// tests of the layers above storage. `down` makes every call fail as an unreachable node would.
import { HearthError } from '../../src/errors.js'
import { cidOfBytes } from '../../src/storage/cid.js'
import type { StorageBackend } from '../../src/storage/types.js'

export interface MemoryStorage extends StorageBackend {
  readonly blobs: Map<string, Uint8Array>
  down: boolean
}

export function memoryStorage (): MemoryStorage {
  const blobs = new Map<string, Uint8Array>()
  const storage: MemoryStorage = {
    kind: 'embedded',
    blobs,
    down: false,
    async add (bytes) {
      if (storage.down) throw new HearthError('STORAGE_UNAVAILABLE', 'memory storage is down')
      const cid = await cidOfBytes(bytes)
      blobs.set(cid, Uint8Array.from(bytes))
      return cid
    },
    async pin (cid) {
      if (!blobs.has(cid)) throw new HearthError('STORAGE_NOT_FOUND', `no block ${cid}`)
    },
    async get (cid) {
      if (storage.down) throw new HearthError('STORAGE_UNAVAILABLE', 'memory storage is down')
      const b = blobs.get(cid)
      if (b === undefined) throw new HearthError('STORAGE_NOT_FOUND', `no block ${cid}`)
      return b
    },
    async has (cid) { return blobs.has(cid) },
    async unpin (cid) { blobs.delete(cid) },
    async health () { return storage.down ? { ok: false, detail: 'down' } : { ok: true } },
    async stop () {}
  }
  return storage
}
