// A stored multi-block file read straight from its block files into one buffer, each block checked
// against the hash in its CID as it is read: a verified read (verified-reads.ts) without the
// UnixFS exporter's stream reads and joins or a second pass over the bytes to recompute the CID.
// Proving every block of the DAG from the root down proves the content is the CID's, whatever
// chunking made it.
//
// Only the layout Hearth adds with (cid.ts) is read here: dag-pb `file` nodes without data of
// their own, each of at most MAX_CHILDREN_PER_NODE links, no node linked twice, and raw leaves of
// at most CHUNK_SIZE bytes, all hashed with sha2-256, each in its block file, adding up to at most
// MAX_BLOB_BYTES (the largest ciphertext Hearth accepts from a device or gateway). Anything else,
// or a block without a file (missing, or kept elsewhere by the blockstore), answers null and is
// read and verified the general way, which also tells a missing block (STORAGE_NOT_FOUND) and
// holds only the bytes it actually reads.
// The buffer for the file is sized from the sizes the nodes state, before any leaf is read (a
// leaf's true size is known only then). The bounds per node alone would not bound it: each
// distinct node may state 174 leaves of 256 KiB (45 MB), so ~24 small hostile nodes would ask for
// a gigabyte and more nodes for more. So the total is checked as each leaf is added: whatever a
// DAG states, this never sizes a buffer over MAX_BLOB_BYTES (1 GiB).
//
// Why: a peer's fetch of a 10 MB file read it through the exporter (blockstore-fs hands each
// 256 KiB block over in 64 KiB stream reads, joined once per read), joined the 40 blocks, then
// chunked and hashed the whole file again through the importer to compare CIDs: about a third of
// the sending device's CPU besides the transport, most of it copies and the garbage they leave.
import { open, readFile as readWhole } from 'node:fs/promises'
import { createHash } from 'node:crypto'
import type { CID } from 'multiformats/cid'
import { code as RAW_CODEC } from 'multiformats/codecs/raw'
import { sha256 } from 'multiformats/hashes/sha2'
import { code as DAG_PB_CODEC, decode as decodeDagPb } from '@ipld/dag-pb'
import { UnixFS } from 'ipfs-unixfs'
import { HearthError } from '../errors.js'
import { CHUNK_SIZE, canonicalCid, MAX_BLOB_BYTES, MAX_CHILDREN_PER_NODE } from './cid.js'
import { blockFilePath } from './raw-blocks.js'

/** Block files read at once (the threadpool's four threads are shared with everything else). */
const READ_CONCURRENCY = 4
/** A DAG deeper than this is not one Hearth made (174 links per node: 5 levels are ~10^11 leaves). */
const MAX_DEPTH = 8

interface Leaf { cid: CID; at: number; size: number }

/** A block with no file of its own: the general read finds it elsewhere or reports it missing. */
class NoBlockFile extends Error {}

function damaged (root: CID, what: string): HearthError {
  return new HearthError('STORAGE_VERIFY_FAILED', `the stored content of ${canonicalCid(root)} does not match its CID (${what}); \`hearth doctor\` re-stores it from the data folder when it can`,
    { cid: canonicalCid(root) })
}

const verifiable = (cid: CID): boolean => cid.multihash.code === sha256.code && (cid.code === RAW_CODEC || cid.code === DAG_PB_CODEC)

function matches (cid: CID, bytes: Uint8Array): boolean {
  return createHash('sha256').update(bytes).digest().equals(cid.multihash.digest)
}

/** A block file being opened or read; a missing one is thrown as NoBlockFile. */
async function ofBlockFile<T> (opening: Promise<T>): Promise<T> {
  try {
    return await opening
  } catch (err) {
    if ((err as NodeJS.ErrnoException).code === 'ENOENT') throw new NoBlockFile()
    throw err
  }
}

/** The bytes of `cid`'s block file at `into` (which has exactly its size), or false when the file is shorter. */
async function readBlockInto (blocksDir: string, cid: CID, into: Uint8Array): Promise<boolean> {
  const fh = await ofBlockFile(open(blockFilePath(blocksDir, cid), 'r'))
  try {
    let filled = 0
    while (filled < into.byteLength) {
      const { bytesRead } = await fh.read(into, filled, into.byteLength - filled, filled)
      if (bytesRead === 0) return false
      filled += bytesRead
    }
    return true
  } finally {
    await fh.close()
  }
}

/**
 * The whole content of the multi-block file `root`, every block verified; null when `root` is not
 * a dag-pb file node of Hearth's layout or a block has no file (read it the general way);
 * STORAGE_VERIFY_FAILED for a block whose bytes do not match its CID or a DAG that does not add up.
 */
export async function readVerifiedFile (blocksDir: string, root: CID, opts: { signal?: AbortSignal } = {}): Promise<Uint8Array | null> {
  try {
    return await readBlocks(blocksDir, root, opts)
  } catch (err) {
    if (err instanceof NoBlockFile) return null
    throw err
  }
}

async function readBlocks (blocksDir: string, root: CID, opts: { signal?: AbortSignal }): Promise<Uint8Array | null> {
  if (root.code !== DAG_PB_CODEC || !verifiable(root)) return null
  const leaves: Leaf[] = []
  let total = 0
  const walked = new Set<string>()

  /** Walks a node's links in order, collecting its leaves; false when it is not Hearth's layout. */
  async function walk (cid: CID, depth: number, expected: number | null): Promise<boolean> {
    if (depth > MAX_DEPTH) return false
    // A node linked twice would count its leaves twice over without being read again. Hearth's
    // own files never link one twice: what it stores is ciphertext, under a fresh random session
    // key and prefix per message, so no two of its chunks, let alone subtrees, are alike. A DAG
    // that does (not Hearth's, or a stored plaintext with repeated chunks) is read the general way.
    const key = cid.toString()
    if (walked.has(key)) return false
    walked.add(key)
    opts.signal?.throwIfAborted()
    const bytes = await ofBlockFile(readWhole(blockFilePath(blocksDir, cid)))
    if (!matches(cid, bytes)) throw damaged(root, `block ${canonicalCid(cid)}`)
    let links: ReturnType<typeof decodeDagPb>['Links']
    let file: UnixFS
    try {
      const node = decodeDagPb(bytes)
      if (node.Data === undefined) return false
      file = UnixFS.unmarshal(node.Data)
      links = node.Links
    } catch {
      return false // proven bytes, but not a UnixFS node: not a file Hearth stored
    }
    if (file.type !== 'file' || (file.data !== undefined && file.data.byteLength > 0)) return false
    if (links.length !== file.blockSizes.length || links.length === 0 || links.length > MAX_CHILDREN_PER_NODE) return false
    const size = Number(file.fileSize())
    if (expected !== null && size !== expected) throw damaged(root, `node ${canonicalCid(cid)} holds ${size} bytes, its parent says ${expected}`)
    for (let i = 0; i < links.length; i++) {
      const child = links[i]!.Hash
      const childSize = Number(file.blockSizes[i]!)
      if (!verifiable(child)) return false
      if (child.code === RAW_CODEC) {
        // more than Hearth ever accepts for one file: read the general way, by the bytes there are
        if (!(childSize <= CHUNK_SIZE) || total + childSize > MAX_BLOB_BYTES) return false
        leaves.push({ cid: child, at: total, size: childSize })
        total += childSize
      } else if (!await walk(child, depth + 1, childSize)) return false
    }
    return true
  }

  if (!await walk(root, 0, null)) return null
  const out = new Uint8Array(total)
  let next = 0
  await Promise.all(Array.from({ length: Math.min(READ_CONCURRENCY, leaves.length) }, async () => {
    while (next < leaves.length) {
      opts.signal?.throwIfAborted()
      const leaf = leaves[next++]!
      const into = out.subarray(leaf.at, leaf.at + leaf.size)
      if (!await readBlockInto(blocksDir, leaf.cid, into) || !matches(leaf.cid, into)) throw damaged(root, `block ${canonicalCid(leaf.cid)}`)
    }
  }))
  return out
}
