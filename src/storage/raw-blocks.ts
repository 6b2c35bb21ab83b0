// Single-block files — a ciphertext up to one chunk (256 KiB), nearly every file — stored without
// Helia's importer and pin walker; every freshly added file's pin is written here in Helia's format. `ipfs add --cid-version 1` with raw leaves gives such
// bytes the CID of one raw block (codec raw, sha2-256 of the bytes), so the CID is one hash here.
// A small block (small-blocks.ts) goes into the pin batch itself; a larger one is written durably
// in blockstore-fs's own layout (Helia reads it like any block). The pins are recorded in Helia's
// own format with one group-committed LevelDB batch.
import { createHash } from 'node:crypto'
import { join } from 'node:path'
import { stat } from 'node:fs/promises'
import type { ClassicLevel } from 'classic-level'
import { CID } from 'multiformats/cid'
import { create as createDigest } from 'multiformats/hashes/digest'
import { code as RAW_CODE } from 'multiformats/codecs/raw'
import { base32upper } from 'multiformats/bases/base32'
import * as cborg from 'cborg'
import { createGroupCommit, type GroupCommit } from '../db/group-commit.js'
import { CHUNK_SIZE } from './cid.js'
import { writeFileDurably, type DirSync } from './durable-file.js'
import { smallBlockKey, smallBlockPut } from './small-blocks.js'

const SHA2_256 = 0x12

/** Whether `add` stores these bytes as one raw block (the same rule as the UnixFS importer's). */
export function isSingleBlock (bytes: Uint8Array): boolean {
  return bytes.byteLength > 0 && bytes.byteLength <= CHUNK_SIZE
}

/** The CIDv1 of one raw block holding `bytes`. */
export function rawBlockCid (bytes: Uint8Array): CID {
  return rawBlockCidOfDigest(createHash('sha256').update(bytes).digest())
}

/** The CIDv1 of a raw block whose SHA-256 is `sha256`. */
export function rawBlockCidOfDigest (sha256: Uint8Array): CID {
  return CID.createV1(RAW_CODE, createDigest(SHA2_256, sha256))
}

/** Where blockstore-fs (default NextToLast sharding) keeps a block: by multihash, base32 upper. */
export function blockFilePath (blocksDir: string, cid: CID): string {
  const name = base32upper.encoder.encode(cid.multihash.bytes)
  return join(blocksDir, name.slice(-2), `${name}.data`)
}

/** Whether the block file is there with this many bytes (a re-add of pinned bytes writes nothing). */
export async function hasBlockFile (blocksDir: string, cid: CID, size: number): Promise<boolean> {
  return await stat(blockFilePath(blocksDir, cid)).then((st) => st.isFile() && st.size === size, () => false)
}

/** Writes the block file whole; durably unless `syncDir` is null. Returns its path. */
export async function writeBlockDurably (blocksDir: string, cid: CID, bytes: Uint8Array, syncDir: DirSync | null): Promise<string> {
  // content-addressed: an existing block of the same name holds the same bytes, replacing is harmless
  const path = blockFilePath(blocksDir, cid)
  await writeFileDurably(path, bytes, { existing: 'replace', syncDir, mode: 0o644, mtime: false })
  return path
}

interface PinRecord { depth: number; metadata: Record<string, unknown> }
export interface PinnedBlockRecord { pinCount: number; pinnedBy: Uint8Array[] }

// Helia's pin records (helia/src/pins.ts): `/pin/<cid base36>` → {depth, metadata} and
// `/pinned-block/<multihash base36>` → {pinCount, pinnedBy}, both CBOR. Written here in the
// same form, so Helia's pins.get/ls/rm and its GC treat these pins exactly like its own.
const pinKey = (cid: CID): string => `/pin/${base36Of(cid.toV1().bytes)}`
const pinnedBlockKey = (cid: CID): string => `/pinned-block/${base36Of(cid.multihash.bytes)}`
const RECURSIVE_PIN = cborg.encode({ depth: Infinity, metadata: {} } satisfies PinRecord)

/**
 * `base36.encode` of multiformats (multibase prefix `k`, then base-x: one `0` per leading zero
 * byte, the rest as a number in base 36) on the native BigInt: base-x's generic loop costs tens of
 * microseconds per 36-byte key, and a checkpoint makes two keys per block.
 */
export function base36Of (bytes: Uint8Array): string {
  let zeros = 0
  while (zeros < bytes.length && bytes[zeros] === 0) zeros++
  const rest = Buffer.from(bytes.buffer, bytes.byteOffset + zeros, bytes.byteLength - zeros)
  return `k${'0'.repeat(zeros)}${rest.byteLength === 0 ? '' : BigInt(`0x${rest.toString('hex')}`).toString(36)}`
}

// cborg's bytes of {pinCount: 1, pinnedBy: [<one CID>]} (a block pinned once, nearly every one):
// a map of two, the keys in cborg's order, then the CID as a byte string
const ONE_PIN_HEAD = cborg.encode({ pinCount: 1, pinnedBy: [] }).subarray(0, -1)

/** cborg.encode(counter), with the common one-pin counter written directly. */
export function encodePinnedBlock (counter: PinnedBlockRecord): Uint8Array {
  const only = counter.pinnedBy[0]
  if (counter.pinCount !== 1 || counter.pinnedBy.length !== 1 || only === undefined || only.byteLength >= 256) return cborg.encode(counter)
  const out = new Uint8Array(ONE_PIN_HEAD.byteLength + 3 + only.byteLength)
  out.set(ONE_PIN_HEAD)
  let at = ONE_PIN_HEAD.byteLength
  out[at++] = 0x81 // an array of one
  if (only.byteLength < 24) out[at++] = 0x40 + only.byteLength
  else { out[at++] = 0x58; out[at++] = only.byteLength }
  out.set(only, at)
  return at + only.byteLength === out.byteLength ? out : out.subarray(0, at + only.byteLength)
}

/**
 * A recursive pin to record: its root and every block of its DAG (the root included); `bytes`, the
 * root's own bytes to store in the same batch (a small block, small-blocks.ts), written even when
 * the root is pinned already; `sync`, the batch is synced before this resolves.
 */
export interface PinRequest { root: CID; blocks: readonly CID[]; bytes?: Uint8Array; sync?: boolean }

/**
 * Recursive pins written in Helia's format without its walker, for content whose blocks this
 * process has just written (so no block is read back): one group-committed LevelDB batch (read
 * the counters, write them) for all concurrent adds, with the small blocks among them. Synced when
 * one of them asks (a small block is durable only once its batch is); a pin alone needs no sync:
 * it only guards blocks against garbage collection, which Hearth never runs, while the blocks
 * themselves and the index record naming the root are synced. The caller keeps other pin changes
 * of the same blocks out meanwhile (PinLock).
 */
export class PinRecords {
  readonly #db: ClassicLevel<string, Uint8Array>
  readonly #write: GroupCommit<PinRequest>

  constructor (db: ClassicLevel<string, Uint8Array>) {
    this.#db = db
    this.#write = createGroupCommit<PinRequest>(async (requests) => { await this.#pinAll(requests) })
  }

  async has (root: CID): Promise<boolean> {
    return (await this.#db.get(pinKey(root))) !== undefined
  }

  /** A small block's stored bytes (small-blocks.ts) and whether its recursive pin is recorded, in one read. */
  async smallBlockAndPin (root: CID): Promise<{ bytes: Uint8Array | undefined; pinned: boolean }> {
    const [bytes, pin] = await this.#db.getMany([smallBlockKey(root), pinKey(root)])
    return { bytes, pinned: pin !== undefined }
  }

  async add (root: CID, blocks: readonly CID[] = [root], opts: { bytes?: Uint8Array; sync?: boolean } = {}): Promise<void> {
    await this.#write({ root, blocks, ...opts })
  }

  /**
   * Removes the recursive pin of a single-block root as Helia's `pins.rm` does (the pin record,
   * and the block's counter: decremented, deleted at zero), in one batch, without loading Helia.
   * False when it was not pinned. The caller keeps other pin changes of this block out (PinLock).
   */
  async removeSingleBlock (root: CID): Promise<boolean> {
    const key = pinKey(root)
    if ((await this.#db.get(key)) === undefined) return false
    const blockKey = pinnedBlockKey(root)
    const stored = await this.#db.get(blockKey)
    const ops: Array<{ type: 'del'; key: string } | { type: 'put'; key: string; value: Uint8Array }> = [{ type: 'del', key }]
    if (stored !== undefined) {
      const counter = cborg.decode(stored) as PinnedBlockRecord
      counter.pinCount--
      counter.pinnedBy = counter.pinnedBy.filter((c) => !equalBytes(c, root.bytes))
      ops.push(counter.pinCount <= 0 ? { type: 'del', key: blockKey } : { type: 'put', key: blockKey, value: encodePinnedBlock(counter) })
    }
    await this.#db.batch(ops)
    return true
  }

  async #pinAll (requests: PinRequest[]): Promise<void> {
    const ops: Array<{ type: 'put'; key: string; value: Uint8Array }> = []
    for (const r of requests) if (r.bytes !== undefined) ops.push(smallBlockPut(r.root, r.bytes))
    // each key made once (base36 of a CID or multihash: a BigInt each): a root's pin key names it
    const roots = new Map<string, { root: CID; blockKeys: string[] }>()
    for (const r of requests) {
      const key = pinKey(r.root)
      if (!roots.has(key)) roots.set(key, { root: r.root, blockKeys: [...new Set(r.blocks.map(pinnedBlockKey))] })
    }
    const pinKeys = [...roots.keys()]
    const blockKeys = [...new Set([...roots.values()].flatMap((r) => r.blockKeys))]
    // the pins and their blocks' counters in one read; a counter is used only when its pin is new
    // (nearly always: a root pinned already is a re-add)
    const read = await this.#db.getMany([...pinKeys, ...blockKeys])
    const stored = new Map(blockKeys.map((k, i) => [k, read[pinKeys.length + i]]))
    const counters = new Map<string, PinnedBlockRecord>()
    pinKeys.forEach((key, i) => {
      if (read[i] !== undefined) return
      const { root, blockKeys: keys } = roots.get(key)!
      for (const blockKey of keys) {
        let counter = counters.get(blockKey)
        if (counter === undefined) {
          const existing = stored.get(blockKey)
          counter = existing === undefined ? { pinCount: 0, pinnedBy: [] } : cborg.decode(existing) as PinnedBlockRecord
          counters.set(blockKey, counter)
        }
        if (counter.pinnedBy.some((c) => equalBytes(c, root.bytes))) continue
        counter.pinCount++
        counter.pinnedBy.push(root.bytes)
      }
      ops.push({ type: 'put', key, value: RECURSIVE_PIN })
    })
    for (const [key, counter] of counters) ops.push({ type: 'put', key, value: encodePinnedBlock(counter) })
    if (ops.length === 0) return
    await this.#db.batch(ops, { sync: requests.some((r) => r.sync === true) })
  }
}

function equalBytes (a: Uint8Array, b: Uint8Array): boolean {
  return a.byteLength === b.byteLength && a.every((x, i) => x === b[i])
}
