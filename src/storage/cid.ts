// The one place that says how bytes become a CID in Hearth. Both backends add with exactly these
// parameters, which are the ones `ipfs add --cid-version 1` uses (Kubo and js-ipfs alike):
// UnixFS files, raw leaves, fixed 256 KiB chunks, a balanced DAG of at most 174 links per node,
// sha2-256, CIDv1 printed in base32. Any IPFS node or gateway that re-adds the ciphertext gets the
// CID Hearth recorded, so a file pinned through one backend resolves through the other.
//
// The chunker and layout are written out here instead of imported from ipfs-unixfs-importer
// (which @helia/unixfs uses with 1 MiB / 1024-link defaults): the parameters then live in our code,
// and the tests can check them against the importer's own implementation independently.
import { CID } from 'multiformats/cid'
import type { AddOptions, UnixFSComponents } from '@helia/unixfs'
import { HearthError } from '../errors.js'

export const CHUNK_SIZE = 262_144
export const MAX_CHILDREN_PER_NODE = 174
/** Largest ciphertext Hearth accepts from another device or a gateway (sync's blobs, verified reads). */
export const MAX_BLOB_BYTES = 1024 * 1024 * 1024
export const CID_VERSION = 1
export const RAW_LEAVES = true

type Chunker = NonNullable<AddOptions['chunker']>
type FileLayout = NonNullable<AddOptions['layout']>
type LayoutSource = Parameters<FileLayout>[0]
type Reducer = Parameters<FileLayout>[1]
type Node = Awaited<ReturnType<FileLayout>>

/** Kubo RPC `add` arguments that give the same CIDs (kubo-rpc-client option names). */
export const KUBO_ADD_OPTIONS = {
  cidVersion: CID_VERSION,
  rawLeaves: RAW_LEAVES,
  chunker: `size-${CHUNK_SIZE}`,
  hashAlg: 'sha2-256',
  trickle: false,
  wrapWithDirectory: false
} as const

/** Fixed-size chunks; an empty input still yields one empty chunk (an empty file is one raw leaf). */
export function fixedSizeChunker (chunkSize: number = CHUNK_SIZE): Chunker {
  return async function * chunk (source: AsyncIterable<Uint8Array>) {
    let pending = new Uint8Array(0)
    let emitted = false
    for await (const buf of source) {
      let data = buf
      if (pending.length > 0) {
        const joined = new Uint8Array(pending.length + buf.length)
        joined.set(pending, 0)
        joined.set(buf, pending.length)
        data = joined
      }
      // the length read before the yields: a chunk that is a whole piece may be moved away
      // (detached) by the time the loop goes on (storage/block-sink.ts), and then nothing is left
      const length = data.length
      let offset = 0
      while (length - offset >= chunkSize) {
        yield data.subarray(offset, offset + chunkSize)
        offset += chunkSize
        emitted = true
      }
      pending = offset >= length ? new Uint8Array(0) : data.slice(offset)
    }
    if (!emitted || pending.length > 0) yield pending
  }
}

/** Balanced layout: groups of `maxChildren` leaves become parents, level by level, up to one root. */
export function balancedLayout (maxChildren: number = MAX_CHILDREN_PER_NODE): FileLayout {
  return async function layout (source: LayoutSource, reduce: Reducer): Promise<Node> {
    let level: Node[] = []
    let group: Node[] = []
    for await (const node of source) {
      group.push(node)
      if (group.length === maxChildren) { level.push(await reduce(group)); group = [] }
    }
    if (group.length > 0 || level.length === 0) level.push(await reduce(group))
    while (level.length > 1) {
      const next: Node[] = []
      for (let i = 0; i < level.length; i += maxChildren) next.push(await reduce(level.slice(i, i + maxChildren)))
      level = next
    }
    return level[0]
  }
}

/** Options for @helia/unixfs `addBytes` that reproduce `ipfs add --cid-version 1`. */
export function unixfsAddOptions (): AddOptions {
  return {
    cidVersion: CID_VERSION,
    rawLeaves: RAW_LEAVES,
    reduceSingleLeafToSelf: true,
    chunker: fixedSizeChunker(CHUNK_SIZE),
    layout: balancedLayout(MAX_CHILDREN_PER_NODE)
  }
}

/** Parses a CID string (v0 or v1, any multibase prefix multiformats knows); bad input → INVALID_ARGUMENT. */
export function parseCid (cid: string): CID {
  if (typeof cid !== 'string' || cid.length === 0 || cid.length > 512) {
    throw new HearthError('INVALID_ARGUMENT', 'not a CID', { cid: typeof cid === 'string' ? cid.slice(0, 100) : typeof cid })
  }
  try {
    return CID.parse(cid.startsWith('ipfs://') ? cid.slice('ipfs://'.length) : cid)
  } catch {
    throw new HearthError('INVALID_ARGUMENT', 'not a CID', { cid: cid.slice(0, 100) })
  }
}

/** The canonical string form Hearth stores and compares: CIDv1, base32. */
export function canonicalCid (cid: CID | string): string {
  const parsed = typeof cid === 'string' ? parseCid(cid) : cid
  return parsed.toV1().toString()
}

/**
 * The CID `add` gives these bytes, computed without storing anything (blocks are hashed and
 * dropped). Used to check that bytes read back from a backend really are the content of a CID.
 */
export async function cidOfBytes (bytes: Uint8Array): Promise<string> {
  const discard = {
    put: async (cid: CID) => cid,
    has: async () => false,
    get: async function * (): AsyncGenerator<Uint8Array> { throw new Error('nothing is stored') }
  } as unknown as UnixFSComponents['blockstore']
  // loaded on first use: a daemon that only ever verifies raw blocks never loads the importer
  const { unixfs } = await import('@helia/unixfs')
  return canonicalCid(await unixfs({ blockstore: discard }).addBytes(bytes, unixfsAddOptions()))
}
