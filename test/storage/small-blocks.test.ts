// Small blocks without a file each (src/storage/small-blocks.ts): the one raw block of a small
// file lives in the LevelDB beside its pin; larger blocks stay files; homes whose small blocks are
// files keep working; Helia's GC sees both tiers; a damaged or hostile entry is never served.
import { test } from 'node:test'
import assert from 'node:assert/strict'
import { randomBytes } from 'node:crypto'
import { readdir } from 'node:fs/promises'
import { join } from 'node:path'
import { ClassicLevel } from 'classic-level'
import { CID } from 'multiformats/cid'
import { createEmbeddedStorage } from '../../src/storage/embedded.js'
import { openStorage } from '../../src/storage/factory.js'
import { CHUNK_SIZE, cidOfBytes } from '../../src/storage/cid.js'
import { PinRecords, rawBlockCid, writeBlockDurably } from '../../src/storage/raw-blocks.js'
import { SMALL_BLOCK_MAX_BYTES, SMALL_BLOCK_RANGE, smallBlockKey } from '../../src/storage/small-blocks.js'
import { isHearthError } from '../../src/errors.js'
import { homeLayout } from '../../src/home.js'
import { inspectWithHelia } from '../support/helia-inspect.js'
import { overwriteStoredBlock, readStoredBlock, removeStoredBlock, type BlockDirs } from '../support/stored-blocks.js'
import { tempDir } from '../support/tmp.js'

type T = Parameters<typeof tempDir>[0]

function dirsIn (dir: string): BlockDirs {
  return { blocks: join(dir, 'blocks'), datastore: join(dir, 'datastore') }
}

async function open (t: T, dirs: BlockDirs): Promise<Awaited<ReturnType<typeof createEmbeddedStorage>>> {
  const s = await createEmbeddedStorage({ blocksDir: dirs.blocks, datastoreDir: dirs.datastore })
  t.after(async () => { await s.stop() })
  return s
}

async function blockFileCount (blocksDir: string): Promise<number> {
  return (await readdir(blocksDir, { recursive: true }).catch(() => [])).filter((f) => f.endsWith('.data')).length
}

test('small blocks are kept in LevelDB with their pins (no file each) and served after a restart; larger single blocks and a 10 MB file stay files', async (t) => {
  const dir = await tempDir(t)
  const dirs = dirsIn(dir)
  const first = await open(t, dirs)
  const small = [1, 1024, SMALL_BLOCK_MAX_BYTES].map((n) => randomBytes(n))
  const larger = randomBytes(SMALL_BLOCK_MAX_BYTES + 1)
  const chunk = randomBytes(CHUNK_SIZE)
  const tenMb = randomBytes(10 * 1024 * 1024)
  const smallCids = await Promise.all(small.map(async (b) => await first.add(b)))
  const unsynced = randomBytes(2000)
  const unsyncedAdd = (await first.addUnsynced!(unsynced))!
  assert.deepEqual(unsyncedAdd.files, [], 'a small block is durable with its batch: no file left to sync')
  const largerCid = await first.add(larger)
  const chunkCid = await first.add(chunk)
  const tenMbCid = await first.add(tenMb)
  for (const [i, b] of small.entries()) assert.equal(smallCids[i], await cidOfBytes(b), 'the CID of ipfs add --cid-version 1')
  assert.equal(await blockFileCount(dirs.blocks), 2 + 40 + 1, 'files: the two larger single blocks, the 10 MB file\'s 40 leaves and its root')
  await first.stop()

  for (const cid of [...smallCids, unsyncedAdd.cid]) assert.equal((await readStoredBlock(dirs, CID.parse(cid)))?.tier, 'small', `${cid} in LevelDB`)
  for (const cid of [largerCid, chunkCid, tenMbCid]) assert.equal((await readStoredBlock(dirs, CID.parse(cid)))?.tier, 'file', `${cid} a file`)

  const second = await open(t, dirs)
  for (const [i, cid] of smallCids.entries()) {
    assert.equal(await second.has(cid), true)
    assert.deepEqual(Buffer.from(await second.get(cid)), small[i], 'served after the restart')
  }
  assert.deepEqual(Buffer.from(await second.get(unsyncedAdd.cid)), unsynced)
  assert.deepEqual(Buffer.from(await second.get(largerCid)), larger)
  assert.deepEqual(Buffer.from(await second.get(tenMbCid)), tenMb)
  assert.equal(await second.add(small[1]!), smallCids[1], 'a re-add of stored bytes is the same CID')
  await second.stop()

  const helia = await inspectWithHelia(dir)
  try {
    for (const cid of [...smallCids, unsyncedAdd.cid, largerCid, tenMbCid]) {
      assert.equal(await helia.pinned(cid), true, `${cid} pinned in Helia's records`)
      assert.equal(await helia.hasBlock(cid), true)
    }
  } finally {
    await helia.close()
  }
})

test('unpinned small blocks are deleted by garbage collection over both tiers; pinned ones survive', async (t) => {
  const dir = await tempDir(t)
  const dirs = dirsIn(dir)
  const storage = await open(t, dirs)
  const kept = randomBytes(800)
  const dropped = randomBytes(900)
  const droppedLarge = randomBytes(SMALL_BLOCK_MAX_BYTES + 10)
  const keptCid = await storage.add(kept)
  const droppedCid = await storage.add(dropped)
  const droppedLargeCid = await storage.add(droppedLarge)
  await storage.unpin(droppedCid)
  await storage.unpin(droppedLargeCid)
  assert.equal(await storage.has(droppedCid), true, 'an unpinned block stays until a GC')
  await storage.stop()

  const helia = await inspectWithHelia(dir)
  try {
    assert.equal(await helia.pinned(droppedCid), false)
    await helia.gc()
    assert.equal(await helia.hasBlock(keptCid), true, 'pinned: kept')
    assert.equal(await helia.hasBlock(droppedCid), false, 'unpinned small block collected')
    assert.equal(await helia.hasBlock(droppedLargeCid), false, 'unpinned block file collected')
  } finally {
    await helia.close()
  }
  assert.equal(await readStoredBlock(dirs, CID.parse(droppedCid)), null, 'gone from LevelDB')
  const again = await open(t, dirs)
  assert.deepEqual(Buffer.from(await again.get(keptCid)), kept)
  await assert.rejects(again.get(droppedCid), (err) => isHearthError(err, 'STORAGE_NOT_FOUND'))
})

test('a home whose small blocks are files (written before the LevelDB tier) keeps working: read, pinned, re-added, unpinned and collected', async (t) => {
  const dir = await tempDir(t)
  const dirs = dirsIn(dir)
  // what the code before the tier left: a block file and Helia's pin records, no LevelDB block
  const oldBytes = [randomBytes(1000), randomBytes(1100)]
  const oldCids = oldBytes.map((b) => rawBlockCid(b))
  const db = new ClassicLevel<string, Uint8Array>(dirs.datastore, { keyEncoding: 'utf8', valueEncoding: 'view' })
  await db.open()
  for (const [i, b] of oldBytes.entries()) {
    await writeBlockDurably(dirs.blocks, oldCids[i]!, b, null)
    await new PinRecords(db).add(oldCids[i]!)
  }
  const unpinnedOld = randomBytes(1200)
  const unpinnedOldCid = rawBlockCid(unpinnedOld)
  await writeBlockDurably(dirs.blocks, unpinnedOldCid, unpinnedOld, null)
  await db.close()

  const storage = await open(t, dirs)
  for (const [i, cid] of oldCids.entries()) {
    assert.equal(await storage.has(cid.toString()), true)
    assert.deepEqual(Buffer.from(await storage.get(cid.toString())), oldBytes[i], 'an old block file is read')
  }
  assert.equal(await storage.add(oldBytes[0]!), oldCids[0]!.toString(), 'a re-add finds the old file')
  await storage.pin(unpinnedOldCid.toString())
  await storage.unpin(oldCids[1]!.toString())
  await storage.stop()
  assert.equal((await readStoredBlock(dirs, oldCids[0]!))?.tier, 'file', 'not moved: no migration step')

  const helia = await inspectWithHelia(dir)
  try {
    assert.equal(await helia.pinned(unpinnedOldCid.toString()), true, 'an old block file is pinned')
    await helia.gc()
    assert.equal(await helia.hasBlock(oldCids[0]!.toString()), true)
    assert.equal(await helia.hasBlock(unpinnedOldCid.toString()), true)
    assert.equal(await helia.hasBlock(oldCids[1]!.toString()), false, 'an unpinned old block file is collected')
  } finally {
    await helia.close()
  }
  assert.equal(await readStoredBlock(dirs, oldCids[1]!), null)
})

test('damaged or hostile small-block entries are refused by the CID check, and a re-add repairs them', async (t) => {
  const home = homeLayout(await tempDir(t))
  const dirs: BlockDirs = { blocks: home.blocks, datastore: home.datastore }
  let storage = await openStorage({ backend: 'embedded' }, home)
  const a = randomBytes(1500)
  const b = randomBytes(1600)
  const c = randomBytes(1700)
  const [aCid, bCid, cCid] = [await storage.add(a), await storage.add(b), await storage.add(c)]
  await storage.stop()

  const garbled = Buffer.from(a)
  garbled[7] = garbled[7]! ^ 0x10
  await overwriteStoredBlock(dirs, CID.parse(aCid), garbled)
  await overwriteStoredBlock(dirs, CID.parse(bCid), c) // another block's bytes under this key
  // keys under the tier's prefix that name no CID, and an empty value
  const db = new ClassicLevel<string, Uint8Array>(dirs.datastore, { keyEncoding: 'utf8', valueEncoding: 'view' })
  await db.open()
  await db.put(`${SMALL_BLOCK_RANGE.gt}not-a-multihash`, randomBytes(10))
  await db.put(`${SMALL_BLOCK_RANGE.gt}`, randomBytes(10))
  await db.put(smallBlockKey(rawBlockCid(randomBytes(5))), new Uint8Array(0))
  await db.close()

  storage = await openStorage({ backend: 'embedded' }, home)
  await assert.rejects(storage.get(aCid), (err) => isHearthError(err, 'STORAGE_VERIFY_FAILED'))
  await assert.rejects(storage.get(bCid), (err) => isHearthError(err, 'STORAGE_VERIFY_FAILED'))
  assert.deepEqual(Buffer.from(await storage.get(cCid)), c)
  assert.equal(await storage.add(a), aCid, 'the right bytes again')
  assert.deepEqual(Buffer.from(await storage.get(aCid)), a, 'a re-add replaced the damaged entry')
  await storage.stop()

  const helia = await inspectWithHelia(join(home.root, 'ipfs'))
  try {
    await helia.gc() // the hostile keys are skipped, never taken for CIDs
    assert.equal(await helia.hasBlock(cCid), true)
  } finally {
    await helia.close()
  }
  await removeStoredBlock(dirs, CID.parse(cCid))
  storage = await openStorage({ backend: 'embedded' }, home)
  t.after(async () => { await storage.stop() })
  await assert.rejects(storage.get(cCid), (err) => isHearthError(err, 'STORAGE_NOT_FOUND'))
  assert.equal(await storage.has(cCid), false)
})
