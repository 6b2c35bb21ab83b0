// Whether every block of a stored content is still here, by existence alone (README, "Damage"):
// a raw block is one `has`; a UnixFS file's nodes are read for their links (small), its leaves only
// looked up. Cheap enough for a pass over every stored file at start; a garbled block is found
// by the reads, which verify every block, and by `hearth doctor`.
import type { CID } from 'multiformats/cid'
import { code as RAW_CODEC } from 'multiformats/codecs/raw'
import { code as DAG_PB_CODEC, decode as decodeDagPb } from '@ipld/dag-pb'
import { MAX_CHILDREN_PER_NODE } from './cid.js'

export interface BlockLookup {
  has (cid: CID): Promise<boolean>
  get (cid: CID): AsyncIterable<Uint8Array> | Promise<Uint8Array>
}

/** Hearth's files are at most a few levels deep; anything deeper is not Hearth's and counts as missing. */
const MAX_DEPTH = 8

export async function allBlocksPresent (blocks: BlockLookup, root: CID, depth = 0): Promise<boolean> {
  if (!(await blocks.has(root))) return false
  if (root.code === RAW_CODEC) return true
  if (root.code !== DAG_PB_CODEC || depth >= MAX_DEPTH) return false
  let links
  try {
    links = decodeDagPb(await whole(blocks.get(root))).Links
  } catch {
    return false
  }
  if (links.length > MAX_CHILDREN_PER_NODE) return false
  for (const link of links) if (!(await allBlocksPresent(blocks, link.Hash, depth + 1))) return false
  return true
}

async function whole (read: AsyncIterable<Uint8Array> | Promise<Uint8Array>): Promise<Uint8Array> {
  if (read instanceof Promise) return await read
  const parts: Uint8Array[] = []
  for await (const part of read) parts.push(part)
  return parts.length === 1 ? parts[0]! : Buffer.concat(parts)
}
