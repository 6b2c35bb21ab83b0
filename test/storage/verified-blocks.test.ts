// A stored multi-block file read block by block (src/storage/verified-blocks.ts), through the
// verified reads every caller gets (withVerifiedReads): the same bytes as the exporter's read, a
// garbled, truncated or missing leaf or root refused, and content of another layout still read
// the general way.
import { test } from 'node:test'
import assert from 'node:assert/strict'
import { randomBytes } from 'node:crypto'
import { readFile, unlink, writeFile } from 'node:fs/promises'
import { join } from 'node:path'
import { CID } from 'multiformats/cid'
import * as dagPb from '@ipld/dag-pb'
import { createEmbeddedStorage } from '../../src/storage/embedded.js'
import { withVerifiedReads } from '../../src/storage/verified-reads.js'
import { readVerifiedFile } from '../../src/storage/verified-blocks.js'
import { CHUNK_SIZE } from '../../src/storage/cid.js'
import { MAX_BLOB_BYTES } from '../../src/storage/cid.js'
import { blockFilePath } from '../../src/storage/raw-blocks.js'
import { isHearthError } from '../../src/errors.js'
import type { StorageBackend } from '../../src/storage/types.js'
import { tempDir } from '../support/tmp.js'

async function open (t: Parameters<typeof tempDir>[0]): Promise<{ storage: StorageBackend; blocksDir: string }> {
  const dir = await tempDir(t)
  const blocksDir = join(dir, 'blocks')
  const storage = withVerifiedReads(await createEmbeddedStorage({ blocksDir, datastoreDir: join(dir, 'datastore') }))
  t.after(async () => { await storage.stop() })
  return { storage, blocksDir }
}

/** The leaves of a stored file's root, in order. */
async function leavesOf (blocksDir: string, root: string): Promise<CID[]> {
  const node = dagPb.decode(await readFile(blockFilePath(blocksDir, CID.parse(root))))
  return node.Links.map((l) => l.Hash)
}

test('a multi-block file reads back block by block as the same bytes, one-block and 174+-leaf files too', async (t) => {
  const { storage, blocksDir } = await open(t)
  for (const size of [CHUNK_SIZE + 1, 10 * CHUNK_SIZE + 777, 175 * CHUNK_SIZE + 3]) {
    const bytes = randomBytes(size)
    const cid = await storage.add(bytes)
    const direct = await readVerifiedFile(blocksDir, CID.parse(cid))
    assert.ok(direct !== null, `${size} bytes: read block by block`)
    assert.ok(Buffer.from(direct).equals(bytes))
    assert.ok(Buffer.from(await storage.get(cid)).equals(bytes))
  }
  const one = randomBytes(1000)
  const small = await storage.add(one)
  assert.equal(await readVerifiedFile(blocksDir, CID.parse(small)), null, 'a raw block is read by get')
  assert.ok(Buffer.from(await storage.get(small)).equals(one))
})

test('a garbled, short or missing block, or a garbled or missing root, is refused with its code', async (t) => {
  const { storage, blocksDir } = await open(t)
  const add = async (): Promise<{ cid: string; leaves: CID[] }> => {
    const cid = await storage.add(randomBytes(5 * CHUNK_SIZE + 10))
    return { cid, leaves: await leavesOf(blocksDir, cid) }
  }
  const garbled = await add()
  const leaf = blockFilePath(blocksDir, garbled.leaves[2]!)
  const bytes = await readFile(leaf)
  bytes[1000]! ^= 1
  await writeFile(leaf, bytes)
  await assert.rejects(storage.get(garbled.cid), (err) => isHearthError(err, 'STORAGE_VERIFY_FAILED'))

  const short = await add()
  await writeFile(blockFilePath(blocksDir, short.leaves[4]!), (await readFile(blockFilePath(blocksDir, short.leaves[4]!))).subarray(0, 100))
  await assert.rejects(storage.get(short.cid), (err) => isHearthError(err, 'STORAGE_VERIFY_FAILED'))

  const missing = await add()
  await unlink(blockFilePath(blocksDir, missing.leaves[0]!))
  assert.equal(await readVerifiedFile(blocksDir, CID.parse(missing.cid)), null, 'a block without a file is left to the general read')
  await assert.rejects(storage.get(missing.cid), (err) => isHearthError(err, 'STORAGE_NOT_FOUND'))

  const root = await add()
  const rootFile = blockFilePath(blocksDir, CID.parse(root.cid))
  const rootBytes = await readFile(rootFile)
  rootBytes[rootBytes.byteLength - 1]! ^= 1
  await writeFile(rootFile, rootBytes)
  await assert.rejects(storage.get(root.cid), (err) => isHearthError(err, 'STORAGE_VERIFY_FAILED'))
  await unlink(rootFile)
  await assert.rejects(storage.get(root.cid), (err) => isHearthError(err, 'STORAGE_NOT_FOUND'))
})

test('a dag-pb node that is not a UnixFS file of Hearth\'s layout is left to the general read', async (t) => {
  const { storage, blocksDir } = await open(t)
  // a proven dag-pb block with no UnixFS data: not something Hearth added
  const node = dagPb.encode({ Links: [] })
  const { sha256 } = await import('multiformats/hashes/sha2')
  const cid = CID.createV1(dagPb.code, await sha256.digest(node))
  const { writeBlockDurably } = await import('../../src/storage/raw-blocks.js')
  await writeBlockDurably(blocksDir, cid, node, null)
  assert.equal(await readVerifiedFile(blocksDir, cid), null)
  await assert.rejects(storage.get(cid.toString()))
})

test('a DAG stating more than Hearth\'s layout holds (a leaf over one chunk, over 174 links, a node linked twice, distinct nodes adding up to over 1 GiB) is left to the general read before any buffer is sized from it', async (t) => {
  const dir = await tempDir(t)
  const blocksDir = join(dir, 'blocks')
  const { sha256 } = await import('multiformats/hashes/sha2')
  const { writeBlockDurably } = await import('../../src/storage/raw-blocks.js')
  const { UnixFS } = await import('ipfs-unixfs')
  const { code: RAW } = await import('multiformats/codecs/raw')
  const put = async (codec: number, bytes: Uint8Array): Promise<CID> => {
    const cid = CID.createV1(codec, await sha256.digest(bytes))
    await writeBlockDurably(blocksDir, cid, bytes, null)
    return cid
  }
  /** A file node over `children`, each stated to hold its size. */
  const node = async (children: Array<{ cid: CID; size: number }>): Promise<CID> => {
    const file = new UnixFS({ type: 'file', blockSizes: children.map((c) => BigInt(c.size)) })
    return await put(dagPb.code, dagPb.encode({ Data: file.marshal(), Links: children.map((c) => ({ Hash: c.cid, Tsize: c.size })) }))
  }
  const leaf = await put(RAW, randomBytes(1000))
  // a true leaf stated at a terabyte: the buffer would be sized from that before the leaf is read
  assert.equal(await readVerifiedFile(blocksDir, await node([{ cid: leaf, size: 1000 }, { cid: leaf, size: 2 ** 40 }])), null)
  assert.equal(await readVerifiedFile(blocksDir, await node([{ cid: leaf, size: CHUNK_SIZE + 1 }])), null)
  // more links than a node of Hearth's layout has
  assert.equal(await readVerifiedFile(blocksDir, await node(Array.from({ length: 175 }, () => ({ cid: leaf, size: 1000 })))), null)
  // one inner node linked over and over: 174 × 174 leaves stated, from two blocks
  const inner = await node(Array.from({ length: 174 }, () => ({ cid: leaf, size: 1000 })))
  assert.equal(await readVerifiedFile(blocksDir, await node([{ cid: inner, size: 174_000 }, { cid: inner, size: 174_000 }])), null)
  // distinct nodes, each within the bounds, stating 174 leaves of a whole chunk: 24 of them add
  // up to more than the largest file Hearth accepts (MAX_BLOB_BYTES), from 25 small blocks
  const full = Array.from({ length: 174 }, () => CHUNK_SIZE)
  const inners: CID[] = []
  for (let i = 0; i < 24; i++) {
    const own = await put(RAW, randomBytes(1000))
    inners.push(await node(full.map((size) => ({ cid: own, size }))))
  }
  assert.ok(24 * 174 * CHUNK_SIZE > MAX_BLOB_BYTES)
  assert.equal(await readVerifiedFile(blocksDir, await node(inners.map((cid) => ({ cid, size: 174 * CHUNK_SIZE })))), null)
  // within the bounds, the same shapes read as before
  const ok = await readVerifiedFile(blocksDir, await node(Array.from({ length: 174 }, () => ({ cid: leaf, size: 1000 }))))
  assert.equal(ok?.byteLength, 174_000)
})
