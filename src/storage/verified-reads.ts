// Every read from a storage backend is checked against the CID it was asked for, so a deleted or
// garbled block is noticed (STORAGE_VERIFY_FAILED) instead of answered as data. A raw-codec CID
// is the hash of its bytes; a CIDv1 DAG is recomputed with the layout Hearth adds with
// (cid.ts). A CIDv0 made elsewhere (another chunker) cannot be recomputed and is passed through.
import { sha256 } from 'multiformats/hashes/sha2'
import { HearthError } from '../errors.js'
import { canonicalCid, cidOfBytes, parseCid } from './cid.js'
import type { StorageBackend } from './types.js'

const RAW_CODEC = 0x55

/** Throws STORAGE_VERIFY_FAILED when `bytes` are not the content of `cid`. */
export async function verifyContent (cid: string, bytes: Uint8Array): Promise<void> {
  const parsed = parseCid(cid)
  let matches: boolean
  if (parsed.code === RAW_CODEC && parsed.multihash.code === sha256.code) {
    const digest = (await sha256.digest(bytes)).digest
    matches = Buffer.from(digest).equals(Buffer.from(parsed.multihash.digest))
  } else if (parsed.version === 1) {
    matches = await cidOfBytes(bytes) === canonicalCid(parsed)
  } else {
    return
  }
  if (!matches) {
    throw new HearthError('STORAGE_VERIFY_FAILED', `the stored content of ${canonicalCid(parsed)} does not match its CID (a damaged or replaced block); \`hearth doctor\` re-stores it from the data folder when it can`,
      { cid: canonicalCid(parsed) })
  }
}

/**
 * The backend with `get` verified (block by block where the backend can, `readVerified`, else the
 * whole content against its CID); everything else passes through unchanged.
 */
export function withVerifiedReads<T extends StorageBackend> (backend: T): T {
  const get = async (cid: string, opts?: { signal?: AbortSignal }): Promise<Uint8Array> => {
    const verified = await backend.readVerified?.(cid, opts) ?? null
    if (verified !== null) return verified
    const bytes = await backend.get(cid, opts)
    await verifyContent(cid, bytes)
    return bytes
  }
  // methods bound once, not at every call (a POST reaches storage through here several times)
  const bound = new Map<PropertyKey, unknown>()
  return new Proxy(backend, {
    get (target, prop) {
      if (prop === 'get') return get
      const value = Reflect.get(target, prop, target) as unknown
      if (typeof value !== 'function') return value
      let fn = bound.get(prop)
      if (fn === undefined) { fn = (value as (...a: unknown[]) => unknown).bind(target); bound.set(prop, fn) }
      return fn
    }
  })
}
