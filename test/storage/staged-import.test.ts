// A streamed add in two steps (StorageBackend.stageStream, storage/staged-import.ts): blocks
// staged outside the blockstore, then committed (moved in, synced, pinned) or discarded.
import { test } from 'node:test'
import assert from 'node:assert/strict'
import { randomBytes } from 'node:crypto'
import { join } from 'node:path'
import { createEmbeddedStorage } from '../../src/storage/embedded.js'
import { createFileWriter, type FileWriter } from '../../src/storage/file-writer.js'
import { CHUNK_SIZE } from '../../src/storage/cid.js'
import { stagingDirOf } from '../../src/storage/staged-import.js'
import type { StorageBackend } from '../../src/storage/types.js'
import { filesUnder, tempDir } from '../support/tmp.js'
import { referenceCid } from '../support/reference-cid.js'

async function * piecesOf (bytes: Uint8Array): AsyncGenerator<Uint8Array> {
  for (let at = 0; at < bytes.byteLength; at += CHUNK_SIZE) yield bytes.slice(at, at + CHUNK_SIZE)
}

async function open (dir: string): Promise<StorageBackend> {
  return await createEmbeddedStorage({ blocksDir: join(dir, 'blocks'), datastoreDir: join(dir, 'datastore') })
}

test('a staged add committed is the add of the same bytes: ipfs add\'s CID, its blocks in the blockstore, pinned, the staging folder empty', async (t) => {
  const dir = await tempDir(t)
  const storage = await open(dir)
  t.after(async () => { await storage.stop() })
  const bytes = new Uint8Array(randomBytes(3 * CHUNK_SIZE + 1000))
  const staged = storage.stageStream!(piecesOf(bytes))
  assert.ok(staged !== null)
  const cid = await staged.commit()
  assert.equal(cid, await referenceCid(bytes))
  assert.deepEqual(Buffer.compare(Buffer.from(await storage.get(cid)), Buffer.from(bytes)), 0)
  assert.equal(await storage.present!(cid), true)
  assert.equal((await filesUnder(join(dir, 'blocks'))).length, 5, 'four leaves and the root')
  assert.deepEqual(await filesUnder(stagingDirOf(join(dir, 'blocks'))), [])
  await storage.unpin(cid) // it was pinned: unpinning a root that is not pinned is a no-op, this one goes
  assert.equal(await storage.has(cid), true, 'blocks stay (no GC), only the pin went')
  await assert.rejects(staged.commit(), /committed once/)
})

test('a staged add discarded leaves nothing: no block in the blockstore, nothing staged, nothing pinned', async (t) => {
  const dir = await tempDir(t)
  const storage = await open(dir)
  t.after(async () => { await storage.stop() })
  const bytes = new Uint8Array(randomBytes(24 * CHUNK_SIZE))
  let release!: () => void
  const held = new Promise<void>((resolve) => { release = resolve })
  // the source stops half-way, as a body still arriving does (the importer writes leaves ten at a
  // time); it ends (an aborted job) before the discard
  const source = (async function * () {
    yield * piecesOf(bytes.slice(0, 12 * CHUNK_SIZE))
    await held
    throw new Error('the body never came')
  })()
  const staged = storage.stageStream!(source)!
  const staging = stagingDirOf(join(dir, 'blocks'))
  for (let i = 0; i < 500 && (await filesUnder(staging)).length === 0; i++) await new Promise((resolve) => setTimeout(resolve, 10))
  assert.ok((await filesUnder(staging)).length > 0, 'blocks are staged before the source ends')
  release()
  await staged.discard()
  assert.deepEqual(await filesUnder(staging), [])
  assert.deepEqual(await filesUnder(join(dir, 'blocks')), [])
  assert.equal(await storage.has(await referenceCid(bytes)), false)
  await assert.rejects(staged.commit(), /committed once/)
})

test('discarding a staged add whose blocks another stored file holds leaves that file whole', async (t) => {
  const dir = await tempDir(t)
  const storage = await open(dir)
  t.after(async () => { await storage.stop() })
  const bytes = new Uint8Array(randomBytes(3 * CHUNK_SIZE))
  const cid = await storage.add(bytes)
  const before = await filesUnder(join(dir, 'blocks'))
  const staged = storage.stageStream!(piecesOf(bytes))!
  // every block staged (the source is whole), then dropped
  for (let i = 0; i < 500 && (await filesUnder(stagingDirOf(join(dir, 'blocks')))).length < 4; i++) await new Promise((resolve) => setTimeout(resolve, 10))
  await staged.discard()
  assert.deepEqual(await filesUnder(join(dir, 'blocks')), before)
  assert.equal(await storage.present!(cid), true)
  assert.equal(Buffer.compare(Buffer.from(await storage.get(cid)), Buffer.from(bytes)), 0)
})

test('blocks a stopped (or killed) run staged are removed by the next start, before any add', async (t) => {
  const dir = await tempDir(t)
  const first = await open(dir)
  const bytes = new Uint8Array(randomBytes(24 * CHUNK_SIZE))
  let release!: () => void
  const held = new Promise<void>((resolve) => { release = resolve })
  const source = (async function * () { yield * piecesOf(bytes.slice(0, 12 * CHUNK_SIZE)); await held })()
  first.stageStream!(source)
  const staging = stagingDirOf(join(dir, 'blocks'))
  for (let i = 0; i < 500 && (await filesUnder(staging)).length === 0; i++) await new Promise((resolve) => setTimeout(resolve, 10))
  assert.ok((await filesUnder(staging)).length > 0)
  await first.stop() // neither committed nor discarded: what a kill leaves
  release()
  const second = await open(dir)
  t.after(async () => { await second.stop() })
  assert.deepEqual(await filesUnder(staging), [])
  assert.deepEqual(await filesUnder(join(dir, 'blocks')), [])
})

test('a one-piece staged add is the single-block add at commit; nothing is staged for it', async (t) => {
  const dir = await tempDir(t)
  const storage = await open(dir)
  t.after(async () => { await storage.stop() })
  const bytes = new Uint8Array(randomBytes(1000))
  const staged = storage.stageStream!(piecesOf(bytes))!
  assert.equal(await staged.commit(), await referenceCid(bytes))
  assert.deepEqual(await filesUnder(stagingDirOf(join(dir, 'blocks'))), [])
})

test('a block write that fails (a full disk) fails the commit, and leaves nothing staged or stored', async (t) => {
  const dir = await tempDir(t)
  const real = createFileWriter()
  t.after(async () => { await real.close() })
  let writes = 0
  const writer: FileWriter = {
    ...real,
    async writeBlocks (blocks, opts) {
      if (++writes === 1) throw Object.assign(new Error('ENOSPC: no space left on device, write'), { code: 'ENOSPC' })
      await real.writeBlocks(blocks, opts)
    }
  }
  const storage = await createEmbeddedStorage({ blocksDir: join(dir, 'blocks'), datastoreDir: join(dir, 'datastore'), writer })
  t.after(async () => { await storage.stop() })
  const bytes = new Uint8Array(randomBytes(12 * CHUNK_SIZE))
  const staged = storage.stageStream!(piecesOf(bytes))!
  await assert.rejects(staged.commit(), (err: Error & { cause?: { code?: string } }) => err.cause?.code === 'ENOSPC')
  assert.deepEqual(await filesUnder(stagingDirOf(join(dir, 'blocks'))), [])
  assert.deepEqual(await filesUnder(join(dir, 'blocks')), [])
})
