// Small blocks without a file each: the single raw block of a small file (a ciphertext of up to
// SMALL_BLOCK_MAX_BYTES, nearly every file) lives in the embedded node's LevelDB — the one that
// already holds Helia's pins — under `/small-block/<multihash>`, written in the same batch as its
// pin (raw-blocks.ts). On this VM's ext4 a file create costs 0.2–0.5 ms of CPU and 0.3–0.8 ms of
// wall time; a value in a LevelDB batch costs microseconds, and many of them share one synced
// write (one fdatasync of LevelDB's log) instead of a create each plus a syncfs.
//
// Larger blocks stay files (blockstore-fs's layout), and so do every block of a multi-block file
// (verified-blocks.ts reads those files): LevelDB writes a value again at each compaction, which
// costs about what a create saves from 16–64 KiB on and more above (bench/storage.ts, a
// checkpoint of 64 blocks, CPU per block LevelDB vs files: 1 KiB 0.16 vs 0.40 ms, 32 KiB 0.40 vs
// 0.72, 64 KiB 0.75 vs 0.84, 256 KiB 2.4 vs 1.5; wall 0.6 vs 1.3, 1.9 vs 3.0, 4.4 vs 4.7, 15 vs 8
// ms). Blocks are keyed by multihash, as blockstore-fs names its files, so every CID of the same
// bytes finds the same block.
//
// `TieredBlockstore` is the blockstore Helia and UnixFS see: reads look in LevelDB first, then in
// the files, so homes whose small blocks are files (written before this tier existed) keep
// working with no migration; deletes (Helia's GC) remove both; `getAll` lists both. Its `put`
// writes a file: the tier is written only with pins, by this module's callers.
import type { ClassicLevel } from 'classic-level'
import type { GraphWalkerFactory } from 'helia'
import type { FsBlockstore } from 'blockstore-fs'
import { CID } from 'multiformats/cid'
import { base32upper } from 'multiformats/bases/base32'
import { decode as decodeMultihash } from 'multiformats/hashes/digest'
import { code as RAW_CODE } from 'multiformats/codecs/raw'

/** The largest block kept in LevelDB (bytes); larger ones are files. */
export const SMALL_BLOCK_MAX_BYTES = 32 * 1024

const PREFIX = '/small-block/'
/** The key range of every small block ('0' follows '/'). */
export const SMALL_BLOCK_RANGE = { gt: PREFIX, lt: '/small-block0' } as const

type Blockstore = Parameters<GraphWalkerFactory>[0]['blockstore']
type Pair = { cid: CID; bytes: Generator<Uint8Array> | AsyncGenerator<Uint8Array> }

/** Whether a single raw block of `bytes` is kept in LevelDB. */
export function fitsSmallBlocks (bytes: Uint8Array): boolean {
  return bytes.byteLength > 0 && bytes.byteLength <= SMALL_BLOCK_MAX_BYTES
}

/** The LevelDB key of a small block: its multihash as blockstore-fs names the file. */
export function smallBlockKey (cid: CID): string {
  return PREFIX + base32upper.encoder.encode(cid.multihash.bytes)
}

/** The batch operation that stores a small block (written with its pin, raw-blocks.ts). */
export function smallBlockPut (cid: CID, bytes: Uint8Array): { type: 'put'; key: string; value: Uint8Array } {
  return { type: 'put', key: smallBlockKey(cid), value: bytes }
}

/** The raw CIDv1 a small-block key names, or null for a key that is not one (never trusted). */
function cidOfKey (key: string): CID | null {
  try {
    return CID.createV1(RAW_CODE, decodeMultihash(base32upper.decode(key.slice(PREFIX.length))))
  } catch {
    return null
  }
}

/** classic-level hands out Buffers; storage answers plain Uint8Arrays, as the block files' reads do (no copy). */
function plainView (bytes: Uint8Array | undefined): Uint8Array | undefined {
  if (bytes === undefined || Object.getPrototypeOf(bytes) === Uint8Array.prototype) return bytes
  return new Uint8Array(bytes.buffer, bytes.byteOffset, bytes.byteLength)
}

/** The small blocks in LevelDB. Reads are not verified here: storage reads are (verified-reads.ts). */
export class SmallBlocks {
  constructor (private readonly db: ClassicLevel<string, Uint8Array>) {}

  async get (cid: CID): Promise<Uint8Array | undefined> {
    return plainView(await this.db.get(smallBlockKey(cid)))
  }

  async has (cid: CID): Promise<boolean> {
    return await this.db.has(smallBlockKey(cid))
  }

  async delete (cid: CID): Promise<void> {
    await this.db.del(smallBlockKey(cid))
  }

  /** Every small block, in key order; a key that names no CID is skipped. */
  async * entries (opts: { signal?: AbortSignal } = {}): AsyncGenerator<{ cid: CID; bytes: Uint8Array }> {
    for await (const [key, bytes] of this.db.iterator(SMALL_BLOCK_RANGE)) {
      opts.signal?.throwIfAborted()
      const cid = cidOfKey(key)
      if (cid !== null) yield { cid, bytes: plainView(bytes) as Uint8Array }
    }
  }
}

/** One blockstore over both tiers: LevelDB's small blocks first, then the block files. */
export class TieredBlockstore implements Blockstore {
  constructor (readonly small: SmallBlocks, readonly files: FsBlockstore) {}

  async has (cid: CID, opts?: { signal?: AbortSignal }): Promise<boolean> {
    return await this.small.has(cid) || await this.files.has(cid, opts)
  }

  async put (cid: CID, bytes: Uint8Array | Iterable<Uint8Array> | AsyncIterable<Uint8Array>, opts?: { signal?: AbortSignal }): Promise<CID> {
    return await this.files.put(cid, bytes, opts)
  }

  async * putMany (source: Iterable<{ cid: CID; bytes: Uint8Array }> | AsyncIterable<{ cid: CID; bytes: Uint8Array }>, opts?: { signal?: AbortSignal }): AsyncGenerator<CID> {
    for await (const { cid, bytes } of source) yield await this.put(cid, bytes, opts)
  }

  async * get (cid: CID, opts?: { signal?: AbortSignal }): AsyncGenerator<Uint8Array> {
    const small = await this.small.get(cid)
    if (small !== undefined) { yield small; return }
    yield * this.files.get(cid, opts)
  }

  async * getMany (source: Iterable<CID> | AsyncIterable<CID>, opts?: { signal?: AbortSignal }): AsyncGenerator<Pair> {
    for await (const cid of source) yield { cid, bytes: this.get(cid, opts) }
  }

  async delete (cid: CID, opts?: { signal?: AbortSignal }): Promise<void> {
    await this.small.delete(cid)
    await this.files.delete(cid, opts)
  }

  async * deleteMany (source: Iterable<CID> | AsyncIterable<CID>, opts?: { signal?: AbortSignal }): AsyncGenerator<CID> {
    for await (const cid of source) { await this.delete(cid, opts); yield cid }
  }

  async * getAll (opts?: { signal?: AbortSignal }): AsyncGenerator<Pair> {
    for await (const { cid, bytes } of this.small.entries(opts)) yield { cid, bytes: (async function * () { yield bytes })() }
    yield * this.files.getAll(opts)
  }
}
