import { before, test } from 'node:test'
import assert from 'node:assert/strict'
import { randomBytes } from 'node:crypto'
import { join } from 'node:path'
import { createEmbeddedStorage } from '../../src/storage/embedded.js'
import { createKuboStorage } from '../../src/storage/kubo.js'
import { migrateStorage, type MigrateProgress } from '../../src/storage/migrate.js'
import { isHearthError } from '../../src/errors.js'
import type { StorageBackend } from '../../src/storage/types.js'
import { ensureIpfsInstalled, startIpfsDaemon, freeLoopbackPort } from '../support/ipfs-daemon.js'
import { tempDir } from '../support/tmp.js'
import { overwriteStoredBlock, readStoredBlock } from '../support/stored-blocks.js'
import { SMALL_BLOCK_MAX_BYTES } from '../../src/storage/small-blocks.js'
import { CID } from 'multiformats/cid'

// A fresh checkout builds Kubo on first use; that can take many minutes, outside test timeouts.
before(async () => { await ensureIpfsInstalled() }, { timeout: 60 * 60_000 })

type After = Parameters<typeof tempDir>[0]

async function embeddedIn (t: After, dir: string): Promise<StorageBackend> {
  const s = await createEmbeddedStorage({ blocksDir: join(dir, 'blocks'), datastoreDir: join(dir, 'datastore') })
  t.after(async () => { await s.stop() })
  return s
}

async function * slowly (cids: string[]): AsyncIterable<string> {
  for (const cid of cids) { await new Promise((resolve) => setImmediate(resolve)); yield cid }
}

test('migrate embedded → kubo → embedded with verification, progress and idempotent re-runs', async (t) => {
  const daemon = await startIpfsDaemon(t)
  const kubo = createKuboStorage({ url: daemon.apiUrl, timeoutMs: 10_000 })
  const sourceDir = await tempDir(t)
  const source = await embeddedIn(t, sourceDir)
  const files = Array.from({ length: 30 }, (_, i) => randomBytes(i % 10 === 0 ? 600_000 + i : 200 + i * 37))
  const cids: string[] = []
  for (const f of files) cids.push(await source.add(f))

  const events: MigrateProgress[] = []
  const first = await migrateStorage({ from: source, to: kubo, cids: slowly([...cids, cids[3]]), total: cids.length, onProgress: (p) => events.push(p) })
  assert.deepEqual(first, { copied: 30, verified: 30, skipped: 0 })
  assert.deepEqual(events.map((e) => e.done), Array.from({ length: 30 }, (_, i) => i + 1), 'progress counts every CID once, in order')
  assert.ok(events.every((e) => e.total === 30 && e.action === 'copied'))
  assert.deepEqual(new Set(events.map((e) => e.cid)), new Set(cids))
  for (const [i, cid] of cids.entries()) {
    assert.equal(await kubo.has(cid), true, 'pinned on the node')
    const res = await fetch(`${daemon.apiUrl}/api/v0/cat?arg=${cid}`, { method: 'POST' })
    assert.deepEqual(Buffer.from(await res.arrayBuffer()), files[i], 'the node itself serves the bytes')
  }

  const again = await migrateStorage({ from: source, to: kubo, cids })
  assert.deepEqual(again, { copied: 0, verified: 30, skipped: 30 }, 'a second run only verifies')

  const backDir = await tempDir(t)
  const back = await embeddedIn(t, backDir)
  const backEvents: MigrateProgress[] = []
  const third = await migrateStorage({ from: kubo, to: back, cids, concurrency: 1, onProgress: (p) => backEvents.push(p) })
  assert.deepEqual(third, { copied: 30, verified: 30, skipped: 0 })
  assert.equal(backEvents.length, 30)
  for (const [i, cid] of cids.entries()) assert.deepEqual(Buffer.from(await back.get(cid)), files[i])
  // small files' blocks were read from and written to the LevelDB tier, the others are files
  await source.stop()
  await back.stop()
  for (const [i, cid] of cids.entries()) {
    const tier = files[i]!.byteLength <= SMALL_BLOCK_MAX_BYTES ? 'small' : 'file'
    for (const dir of [sourceDir, backDir]) assert.equal((await readStoredBlock({ blocks: join(dir, 'blocks'), datastore: join(dir, 'datastore') }, CID.parse(cid)))?.tier, tier)
  }
})

test('CIDs missing from the source fail the migration after copying the rest', async (t) => {
  const source = await embeddedIn(t, await tempDir(t))
  const target = await embeddedIn(t, await tempDir(t))
  const present = [await source.add(randomBytes(100)), await source.add(randomBytes(300_000))]
  const missing = 'bafkreigh2akiscaildcqabsyg3dfr6chu3fgpregiymsck7e7aqa4s52zy'
  await assert.rejects(migrateStorage({ from: source, to: target, cids: [present[0], missing, present[1]] }), (err) =>
    isHearthError(err, 'STORAGE_NOT_FOUND') && (err.details?.missing as string[]).includes(missing) && err.details?.copied === 2)
  for (const cid of present) assert.equal(await target.has(cid), true)
  await assert.rejects(migrateStorage({ from: source, to: target, cids: ['nonsense'] }), (err) => isHearthError(err, 'INVALID_ARGUMENT'))
})

test('a damaged source block is refused, never copied as if it were the file', async (t) => {
  const dir = await tempDir(t)
  const dirs = { blocks: join(dir, 'blocks'), datastore: join(dir, 'datastore') }
  const cids: string[] = []
  const first = await embeddedIn(t, dir)
  // a small block (LevelDB) and a block file
  for (const size of [4096, SMALL_BLOCK_MAX_BYTES + 1]) cids.push(await first.add(randomBytes(size)))
  await first.stop()
  for (const [i, cid] of cids.entries()) {
    const stored = (await readStoredBlock(dirs, CID.parse(cid)))!
    assert.equal(stored.tier, i === 0 ? 'small' : 'file')
    const damaged = Buffer.from(stored.bytes)
    damaged[100] = damaged[100]! ^ 0xff
    await overwriteStoredBlock(dirs, CID.parse(cid), damaged)
  }
  const source = await embeddedIn(t, dir)
  const target = await embeddedIn(t, await tempDir(t))
  for (const cid of cids) {
    await assert.rejects(migrateStorage({ from: source, to: target, cids: [cid] }), (err) => isHearthError(err, 'STORAGE_VERIFY_FAILED'))
    assert.equal(await target.has(cid), false)
  }
})

test('an unreachable target stops the migration with STORAGE_UNAVAILABLE', async (t) => {
  const source = await embeddedIn(t, await tempDir(t))
  const cid = await source.add(randomBytes(64))
  const nowhere = createKuboStorage({ url: `http://127.0.0.1:${await freeLoopbackPort()}`, timeoutMs: 1000 })
  await assert.rejects(migrateStorage({ from: source, to: nowhere, cids: [cid] }), (err) => isHearthError(err, 'STORAGE_UNAVAILABLE'))
})
