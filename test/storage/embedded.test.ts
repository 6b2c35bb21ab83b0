import { test } from 'node:test'
import assert from 'node:assert/strict'
import { randomBytes } from 'node:crypto'
import { mkdir, readdir, readFile, readlink, stat, writeFile } from 'node:fs/promises'
import { dirname, join } from 'node:path'
import { sha256 } from 'multiformats/hashes/sha2'
import { CID } from 'multiformats/cid'
import { createEmbeddedStorage } from '../../src/storage/embedded.js'
import { createFileWriter, type FileWriter } from '../../src/storage/file-writer.js'
import { createStorage, openStorage } from '../../src/storage/factory.js'
import { CHUNK_SIZE, cidOfBytes } from '../../src/storage/cid.js'
import { blockFilePath } from '../../src/storage/raw-blocks.js'
import { SMALL_BLOCK_MAX_BYTES } from '../../src/storage/small-blocks.js'
import { homeLayout } from '../../src/home.js'
import { isHearthError } from '../../src/errors.js'
import { silentLogger } from '../../src/log.js'
import type { StorageBackend } from '../../src/storage/types.js'
import { tempDir } from '../support/tmp.js'
import { readStoredBlock } from '../support/stored-blocks.js'
import { inspectWithHelia } from '../support/helia-inspect.js'

async function open (t: Parameters<typeof tempDir>[0], dir: string): Promise<StorageBackend> {
  const s = await createEmbeddedStorage({ blocksDir: join(dir, 'blocks'), datastoreDir: join(dir, 'datastore') })
  t.after(async () => { await s.stop() })
  return s
}

test('add, get, has, pin and unpin on the embedded backend', async (t) => {
  const storage = await open(t, await tempDir(t))
  assert.equal(storage.kind, 'embedded')
  const small = randomBytes(1024)
  const large = randomBytes(1_000_000)
  const a = await storage.add(small)
  const b = await storage.add(large)
  assert.equal(await storage.add(small), a, 'adding the same bytes again gives the same CID')
  assert.deepEqual(Buffer.from(await storage.get(a)), small)
  assert.deepEqual(Buffer.from(await storage.get(b)), large)
  assert.equal(await storage.has(a), true)
  assert.equal(await storage.has(b), true)
  assert.equal(await storage.has(`ipfs://${b}`), true, 'ipfs:// URLs are accepted')

  const absent = 'bafkreigh2akiscaildcqabsyg3dfr6chu3fgpregiymsck7e7aqa4s52zy'
  assert.equal(await storage.has(absent), false)
  await assert.rejects(storage.get(absent), (err) => isHearthError(err, 'STORAGE_NOT_FOUND') && String(err.message).includes(absent))
  await assert.rejects(storage.pin(absent), (err) => isHearthError(err, 'STORAGE_NOT_FOUND'))
  await storage.unpin(absent) // unknown: not an error
  assert.equal(await storage.has('not a cid'), false)
  await assert.rejects(storage.get('not a cid'), (err) => isHearthError(err, 'INVALID_ARGUMENT'))
  await assert.rejects(storage.add('text' as unknown as Uint8Array), (err) => isHearthError(err, 'INVALID_ARGUMENT'))

  await storage.unpin(b)
  await storage.unpin(b)
  await storage.pin(b)
  const health = await storage.health()
  assert.equal(health.ok, true)
  assert.match(health.detail ?? '', /embedded IPFS node, blocks in .*blocks/)
})

test('content and pins survive a restart; unpinned content is what garbage collection may take', async (t) => {
  const dir = await tempDir(t)
  const first = await createEmbeddedStorage({ blocksDir: join(dir, 'blocks'), datastoreDir: join(dir, 'datastore') })
  const kept = randomBytes(600_000)
  const dropped = randomBytes(2048)
  const keptCid = await first.add(kept)
  const droppedCid = await first.add(dropped)
  await first.unpin(droppedCid)
  await first.stop()
  assert.equal((await first.health()).ok, false)
  await assert.rejects(first.get(keptCid), (err) => isHearthError(err, 'STORAGE_UNAVAILABLE'))

  const second = await open(t, dir)
  assert.deepEqual(Buffer.from(await second.get(keptCid)), kept)
  assert.equal(await second.has(keptCid), true)
  assert.equal(await second.has(droppedCid), true, 'unpinned blocks stay until a GC')
  await second.stop()

  const helia = await inspectWithHelia(dir)
  try {
    assert.equal(await helia.pinned(keptCid), true, 'still pinned after the restart')
    assert.equal(await helia.pinned(droppedCid), false)
    await helia.gc()
    assert.equal(await helia.hasBlock(keptCid), true, 'a pinned file survives GC')
    assert.equal(await helia.hasBlock(droppedCid), false, 'an unpinned file is collectable')
  } finally {
    await helia.close()
  }
  const third = await open(t, dir)
  assert.deepEqual(Buffer.from(await third.get(keptCid)), kept, 'every block of the pinned multi-block file survived GC')
  await assert.rejects(third.get(droppedCid), (err) => isHearthError(err, 'STORAGE_NOT_FOUND'))
})

test('concurrent adds of the same and different bytes all end up pinned exactly once', async (t) => {
  const dir = await tempDir(t)
  const storage = await open(t, dir)
  const inputs = Array.from({ length: 40 }, (_, i) => randomBytes(100 + i * 5000))
  const twice = [...inputs, ...inputs]
  const cids = await Promise.all(twice.map(async (b) => await storage.add(b)))
  assert.deepEqual(cids.slice(0, 40), cids.slice(40))
  for (const [i, cid] of cids.slice(0, 40).entries()) assert.deepEqual(Buffer.from(await storage.get(cid)), inputs[i])
  for (const cid of cids.slice(0, 40)) await storage.unpin(cid)
  await storage.stop()
  const helia = await inspectWithHelia(dir)
  try {
    await helia.gc()
    for (const cid of cids.slice(0, 40)) assert.equal(await helia.hasBlock(cid), false, 'one unpin released the pin: it was counted once')
  } finally {
    await helia.close()
  }
})

test('a second process cannot open a home whose embedded store is in use', async (t) => {
  const dir = await tempDir(t)
  await open(t, dir)
  await assert.rejects(
    createEmbeddedStorage({ blocksDir: join(dir, 'blocks'), datastoreDir: join(dir, 'datastore') }),
    (err) => isHearthError(err, 'STORAGE_UNAVAILABLE') && /in use by another process/.test(err.message)
  )
})

test('the embedded node opens no socket at all', async (t) => {
  const sockets = async (): Promise<Set<string>> => {
    const out = new Set<string>()
    for (const fd of await readdir('/proc/self/fd')) {
      const target = await readlink(`/proc/self/fd/${fd}`).catch(() => '')
      if (target.startsWith('socket:')) out.add(target)
    }
    return out
  }
  const before = await sockets()
  const home = homeLayout(await tempDir(t))
  const storage = await openStorage({ backend: 'embedded' }, home, silentLogger())
  const cid = await storage.add(randomBytes(300_000))
  await storage.get(cid)
  await assert.rejects(storage.get('bafkreigh2akiscaildcqabsyg3dfr6chu3fgpregiymsck7e7aqa4s52zy'))
  const during = await sockets()
  await storage.stop()
  const opened = [...during].filter((s) => !before.has(s))
  assert.deepEqual(opened, [])
})

test('the factory rejects an incomplete or unknown configuration', async (t) => {
  const home = homeLayout(await tempDir(t))
  assert.throws(() => createStorage({ backend: 'kubo' }, home), (err) => isHearthError(err, 'CONFIG_INVALID'))
  assert.throws(() => createStorage({ backend: 'kubo', kubo: { url: 'ftp://x' } }, home), (err) => isHearthError(err, 'CONFIG_INVALID'))
  assert.throws(() => createStorage({ backend: 'kubo', kubo: { url: 'http://127.0.0.1:1', timeoutMs: 5 } }, home), (err) => isHearthError(err, 'CONFIG_INVALID'))
  assert.throws(() => createStorage({ backend: 'floppy' } as never, home), (err) => isHearthError(err, 'CONFIG_INVALID'))
})

test('single-block adds and unpins (the fast path, no Helia) give the CIDs of ipfs add and leave pins Helia itself honours', async (t) => {
  const dir = await tempDir(t)
  const storage = await createEmbeddedStorage({ blocksDir: join(dir, 'blocks'), datastoreDir: join(dir, 'datastore') })
  const inputs = [1, 1024, CHUNK_SIZE - 1, CHUNK_SIZE, CHUNK_SIZE + 1].map((n) => randomBytes(n))
  const cids = await Promise.all(inputs.map(async (b) => await storage.add(b)))
  for (const [i, cid] of cids.entries()) {
    assert.equal(cid, await cidOfBytes(inputs[i]!), `size ${inputs[i]!.byteLength}`)
    assert.deepEqual(Buffer.from(await storage.get(cid)), inputs[i])
  }
  assert.equal(CID.parse(cids[3]!).code, 0x55, 'one chunk is one raw block')
  assert.notEqual(CID.parse(cids[4]!).code, 0x55, 'one byte more is a DAG')
  const unpinned = await storage.add(randomBytes(500))
  await storage.unpin(unpinned)
  await storage.stop()

  const helia = await inspectWithHelia(dir)
  try {
    for (const cid of cids) assert.equal(await helia.pinned(cid), true, `${cid} pinned in Helia's records`)
    assert.equal(await helia.pinned(unpinned), false)
    await helia.gc()
    for (const cid of cids) assert.equal(await helia.hasBlock(cid), true, 'pinned blocks survive Helia GC')
    assert.equal(await helia.hasBlock(unpinned), false, 'an unpinned raw block is collectable')
  } finally {
    await helia.close()
  }
})

test('deferred single-block adds are served from memory, stored and pinned by writeDeferred (a small block in LevelDB, a larger one as a file), never stored once unpinned, and stored at stop', async (t) => {
  const dir = await tempDir(t)
  const dirs = { blocks: join(dir, 'blocks'), datastore: join(dir, 'datastore') }
  const storage = await createEmbeddedStorage({ blocksDir: dirs.blocks, datastoreDir: dirs.datastore })
  const kept = randomBytes(1024)
  const larger = randomBytes(SMALL_BLOCK_MAX_BYTES + 1)
  const dropped = randomBytes(700)
  const atStop = randomBytes(900)
  const added = (await storage.addDeferred!(kept))!
  assert.equal(added.cid, await cidOfBytes(kept), 'the CID of ipfs add')
  assert.deepEqual(added.files, [], 'a small block leaves no file to sync: its batch is synced')
  const addedLarger = (await storage.addDeferred!(larger))!
  assert.deepEqual(addedLarger.files, [blockFilePath(dirs.blocks, CID.parse(addedLarger.cid))], 'the block file it will be')
  assert.equal(await storage.addDeferred!(randomBytes(CHUNK_SIZE + 1)), null, 'a DAG is not deferred')
  await assert.rejects(stat(addedLarger.files[0]!), { code: 'ENOENT' }, 'nothing written yet')
  assert.equal(await storage.has(added.cid), true)
  assert.deepEqual(Buffer.from(await storage.get(added.cid)), kept)
  await storage.pin(added.cid) // pinned when written
  const gone = (await storage.addDeferred!(dropped))!
  await storage.unpin(gone.cid)
  assert.equal(await storage.has(gone.cid), false, 'unpinned before it was written: forgotten')

  await storage.writeDeferred!()
  assert.deepEqual(await readFile(addedLarger.files[0]!), larger, 'written where blockstore-fs keeps it')
  assert.deepEqual(Buffer.from(await storage.get(added.cid)), kept, 'read from LevelDB now')
  assert.deepEqual(Buffer.from(await storage.get(addedLarger.cid)), larger, 'read from the file now')
  const last = (await storage.addDeferred!(atStop))!
  await storage.stop()

  assert.equal((await readStoredBlock(dirs, CID.parse(added.cid)))?.tier, 'small')
  assert.equal((await readStoredBlock(dirs, CID.parse(last.cid)))?.tier, 'small', 'stored at stop')
  assert.equal(await readStoredBlock(dirs, CID.parse(gone.cid)), null)
  const helia = await inspectWithHelia(dir)
  try {
    for (const cid of [added.cid, addedLarger.cid, last.cid]) {
      assert.equal(await helia.pinned(cid), true, `${cid} pinned in Helia's records`)
      assert.equal(await helia.hasBlock(cid), true, `${cid} is a block Helia reads`)
    }
    assert.equal(await helia.pinned(gone.cid), false)
    assert.equal(await helia.hasBlock(gone.cid), false)
  } finally {
    await helia.close()
  }
})

test('a multi-block add makes every block it wrote durable in one sync before it answers', async (t) => {
  const dir = await tempDir(t)
  const syncs: string[][] = []
  let answered = false
  let answeredAtSync: boolean | null = null
  let storage: StorageBackend | null = null
  const bytes = randomBytes(10 * CHUNK_SIZE + 5)
  const root = await cidOfBytes(bytes)
  storage = await createEmbeddedStorage({
    blocksDir: join(dir, 'blocks'),
    datastoreDir: join(dir, 'datastore'),
    syncFiles: async (files) => {
      syncs.push([...files])
      answeredAtSync = answered
    }
  })
  t.after(async () => { await storage!.stop() })
  async function * pieces (): AsyncGenerator<Uint8Array> { for (let at = 0; at < bytes.length; at += CHUNK_SIZE) yield bytes.subarray(at, at + CHUNK_SIZE) }
  assert.equal(await storage.addStream!(pieces()).finally(() => { answered = true }), root)
  assert.equal(syncs.length, 1, 'one sync for the whole file')
  assert.equal(answeredAtSync, false, 'synced before the answer')
  // 11 leaves and the root, each a block file of blockstore-fs's layout, all of them in that sync
  const blockFiles = (await readdir(join(dir, 'blocks'), { recursive: true })).filter((f) => f.endsWith('.data')).map((f) => join(dir, 'blocks', f))
  assert.equal(blockFiles.length, 12)
  assert.deepEqual([...syncs[0]!].sort(), blockFiles.sort())
  assert.equal(await storage.has(root), true)
})

test('a multi-block add writes its blocks on the file writer\'s thread, each whole over whatever its name held (a torn block of the same size too)', async (t) => {
  const dir = await tempDir(t)
  const real = createFileWriter()
  t.after(async () => { await real.close() })
  const replaced: string[] = []
  const writer: FileWriter = { ...real, replaceBlocks: async (blocks) => { replaced.push(...blocks.map((b) => b.path)); await real.replaceBlocks(blocks) } }
  const storage = await createEmbeddedStorage({ blocksDir: join(dir, 'blocks'), datastoreDir: join(dir, 'datastore'), writer })
  t.after(async () => { await storage.stop() })
  const bytes = randomBytes(2 * CHUNK_SIZE + 7)
  const first = CID.createV1(0x55, await sha256.digest(bytes.subarray(0, CHUNK_SIZE)))
  // a block left torn by an earlier crash, of the right size
  const torn = blockFilePath(join(dir, 'blocks'), first)
  await mkdir(dirname(torn), { recursive: true })
  await writeFile(torn, Buffer.alloc(CHUNK_SIZE))
  const root = await storage.add(bytes)
  assert.equal(root, await cidOfBytes(bytes))
  assert.equal(replaced.length, 4, 'three leaves and the root, each through the thread')
  assert.ok(replaced.includes(torn))
  assert.deepEqual(await readFile(torn), bytes.subarray(0, CHUNK_SIZE), 'the torn block rewritten')
  assert.deepEqual(Buffer.from(await storage.get(root)), bytes)
  assert.deepEqual((await readdir(join(dir, 'blocks'), { recursive: true })).filter((f) => f.endsWith('.tmp')), [], 'no temp left behind')
})
