// Missing ciphertexts fetched from a configured IPFS gateway (a trustless-gateway simulator on
// loopback serving the blocks of a real embedded store), every block verified against its CID
// and stored in another real embedded store only once proven; a lying, hanging, partial or
// absent gateway never stores anything and says what was tried.
import { test } from 'node:test'
import assert from 'node:assert/strict'
import { randomBytes } from 'node:crypto'
import { readdir } from 'node:fs/promises'
import { join } from 'node:path'
import { CID } from 'multiformats/cid'
import { createEmbeddedStorage } from '../../src/storage/embedded.js'
import { withVerifiedReads } from '../../src/storage/verified-reads.js'
import { createCiphertextFetcher, type BlockSource } from '../../src/storage/block-sources.js'
import { createGatewaySource } from '../../src/storage/gateway-source.js'
import { isHearthError } from '../../src/errors.js'
import { silentLogger } from '../../src/log.js'
import type { StorageBackend } from '../../src/storage/types.js'
import { startGatewaySim } from '../support/gateway-sim.js'
import { blockDirsOf, overwriteStoredBlock, readStoredBlock } from '../support/stored-blocks.js'
import { tempDir } from '../support/tmp.js'

type T = Parameters<typeof tempDir>[0]

async function store (t: T, at?: string): Promise<{ storage: StorageBackend; blocksDir: string }> {
  const dir = at ?? await tempDir(t, 'hearth-blocks-')
  const blocksDir = join(dir, 'blocks')
  const storage = withVerifiedReads(await createEmbeddedStorage({ blocksDir, datastoreDir: join(dir, 'datastore') }))
  t.after(async () => { await storage.stop() })
  return { storage, blocksDir }
}

/** An origin store holding a one-block file and a 1.3 MB file of five blocks and a root, stopped (gateways serve it). */
async function origin (t: T): Promise<{ blocksDir: string; small: Uint8Array; big: Uint8Array; smallCid: string; bigCid: string }> {
  const { storage, blocksDir } = await store(t)
  const small = randomBytes(3000)
  const big = randomBytes(1_300_000)
  const added = { blocksDir, small, big, smallCid: await storage.add(small), bigCid: await storage.add(big) }
  await storage.stop()
  return added
}

async function blockFiles (blocksDir: string): Promise<number> {
  let n = 0
  for (const d of await readdir(blocksDir).catch(() => [])) n += (await readdir(join(blocksDir, d))).length
  return n
}

function fetcherFor (storage: StorageBackend, sources: BlockSource[], o: { timeoutMs?: number; maxBytes?: number } = {}) {
  return createCiphertextFetcher({ storage, remote: () => sources, maxBytes: o.maxBytes ?? 64 * 1024 * 1024, sourceTimeoutMs: o.timeoutMs ?? 30_000, logger: silentLogger() })
}

test('a one-block and a multi-block (1.3 MB) ciphertext come from a gateway, verified, stored and pinned here', async (t) => {
  const o = await origin(t)
  const sim = await startGatewaySim(t, o.blocksDir)
  const here = await store(t)
  const gateway = createGatewaySource({ baseUrl: sim.url, requestTimeoutMs: 5000 })
  const fetcher = fetcherFor(here.storage, [gateway])

  const small = await fetcher.fetch(o.smallCid)
  assert.deepEqual(Buffer.from(small.bytes), Buffer.from(o.small))
  assert.equal(small.source, gateway.name)
  assert.deepEqual(small.attempts, [{ source: 'local storage', outcome: 'missing' }])

  const big = await fetcher.fetch(o.bigCid)
  assert.deepEqual(Buffer.from(big.bytes), Buffer.from(o.big))
  assert.equal(CID.parse(o.bigCid).code, 0x70, 'the big file is a dag-pb root')
  assert.equal(sim.requests.filter((c) => c !== o.smallCid).length, 6, 'its root and five leaves, each asked once')
  assert.ok(sim.accepts.every((a) => a === 'application/vnd.ipld.raw'))

  for (const [cid, bytes] of [[o.smallCid, o.small], [o.bigCid, o.big]] as const) {
    assert.equal(await here.storage.has(cid), true)
    assert.deepEqual(Buffer.from(await here.storage.get(cid)), Buffer.from(bytes), 'readable (and verified) from local storage')
  }
  const requests = sim.requests.length
  assert.equal((await fetcher.fetch(o.bigCid)).source, 'local storage', 'a second fetch is local')
  assert.equal(sim.requests.length, requests)
})

test('a lying gateway is refused with STORAGE_VERIFY_FAILED, nothing is stored, and the next source is used', async (t) => {
  const o = await origin(t)
  const liar = await startGatewaySim(t, o.blocksDir, 'lying')
  const honest = await startGatewaySim(t, o.blocksDir)
  const here = await store(t)
  const lying = createGatewaySource({ baseUrl: liar.url, requestTimeoutMs: 5000 })

  for (const cid of [o.smallCid, o.bigCid]) {
    await assert.rejects(fetcherFor(here.storage, [lying]).fetch(cid), (err: unknown) => {
      assert.ok(isHearthError(err, 'STORAGE_VERIFY_FAILED'), String(err))
      const tried = err.details!.tried as Array<{ outcome: string; message: string }>
      assert.deepEqual(tried.map((a) => a.outcome), ['missing', 'STORAGE_VERIFY_FAILED'])
      assert.match(tried[1]!.message, /do not match/)
      return true
    })
  }
  assert.equal(liar.requests.filter((c) => c === o.bigCid).length, 1, 'a lying root is not walked')
  assert.equal(await blockFiles(here.blocksDir), 0, 'nothing was stored')
  assert.equal(await here.storage.has(o.bigCid), false)
  assert.equal(await here.storage.has(o.smallCid), false)

  // an honest root with one garbled leaf: refused all the same
  const root = (await import('@ipld/dag-pb')).decode(Buffer.from(await (await fetch(`${honest.url}/ipfs/${o.bigCid}?format=raw`)).arrayBuffer()))
  honest.garble.add(root.Links[2]!.Hash.toString())
  await assert.rejects(fetcherFor(here.storage, [createGatewaySource({ baseUrl: honest.url, requestTimeoutMs: 5000 })]).fetch(o.bigCid),
    (err: unknown) => isHearthError(err, 'STORAGE_VERIFY_FAILED') && /do not match/.test((err.details!.tried as Array<{ message: string }>)[1]!.message))
  assert.equal(await blockFiles(here.blocksDir), 0, 'nothing was stored')
  honest.garble.clear()

  const got = await fetcherFor(here.storage, [lying, createGatewaySource({ baseUrl: `${honest.url}/`, requestTimeoutMs: 5000 })]).fetch(o.bigCid)
  assert.deepEqual(Buffer.from(got.bytes), Buffer.from(o.big))
  assert.equal(got.attempts[1]!.outcome, 'STORAGE_VERIFY_FAILED')
  assert.equal(got.attempts[1]!.source, lying.name)
})

test('a gateway that never answers is bounded by the request deadline; then the next source is tried', async (t) => {
  const o = await origin(t)
  const hang = await startGatewaySim(t, o.blocksDir, 'hanging')
  const honest = await startGatewaySim(t, o.blocksDir)
  const here = await store(t)
  const started = Date.now()
  const got = await fetcherFor(here.storage, [
    createGatewaySource({ baseUrl: hang.url, requestTimeoutMs: 400 }),
    createGatewaySource({ baseUrl: honest.url, requestTimeoutMs: 5000 })
  ]).fetch(o.smallCid)
  assert.ok(Date.now() - started < 5000, `took ${Date.now() - started} ms`)
  assert.equal(got.attempts[1]!.outcome, 'TIMEOUT')
  assert.deepEqual(Buffer.from(got.bytes), Buffer.from(o.small))

  // a source that timed out is not asked again for a while: the next file does not wait for it
  const remembering = fetcherFor((await store(t)).storage, [createGatewaySource({ baseUrl: hang.url, requestTimeoutMs: 400 })])
  await assert.rejects(remembering.fetch(o.bigCid))
  const asked = hang.requests.length
  const quick = Date.now()
  await assert.rejects(remembering.fetch(o.smallCid), (err: unknown) => isHearthError(err, 'STORAGE_NOT_FOUND') && /not asked/.test((err.details!.tried as Array<{ message: string }>)[1]!.message))
  assert.ok(Date.now() - quick < 300)
  assert.equal(hang.requests.length, asked)

  // the per-source deadline bounds a whole file too, whatever the request deadline
  const bounded = Date.now()
  await assert.rejects(fetcherFor(here.storage, [createGatewaySource({ baseUrl: hang.url, requestTimeoutMs: 60_000 })], { timeoutMs: 500 }).fetch(o.bigCid),
    (err: unknown) => isHearthError(err, 'STORAGE_NOT_FOUND') && (err.details!.tried as Array<{ outcome: string }>)[1]!.outcome === 'TIMEOUT')
  assert.ok(Date.now() - bounded < 5000)
})

test('no source has it: STORAGE_NOT_FOUND naming every attempt and the next step; a partial DAG and an oversized file store nothing', async (t) => {
  const o = await origin(t)
  const empty = await startGatewaySim(t, join(o.blocksDir, 'nothing-here'))
  const partial = await startGatewaySim(t, o.blocksDir)
  const here = await store(t)
  const gatewayA = createGatewaySource({ baseUrl: empty.url, requestTimeoutMs: 5000 })
  await assert.rejects(fetcherFor(here.storage, [gatewayA, createGatewaySource({ baseUrl: 'http://127.0.0.1:9', requestTimeoutMs: 5000 })]).fetch(o.smallCid), (err: unknown) => {
    assert.ok(isHearthError(err, 'STORAGE_NOT_FOUND'), String(err))
    const tried = err.details!.tried as Array<{ source: string; outcome: string }>
    assert.deepEqual(tried.map((a) => a.outcome), ['missing', 'missing', 'STORAGE_UNAVAILABLE'])
    assert.equal(tried[1]!.source, gatewayA.name)
    assert.match(err.message, /hearth peers add/)
    assert.match(err.message, /another IPFS gateway/)
    assert.match(err.message, /storage migrate --to kubo/)
    return true
  })

  // a gateway that has the root but not one leaf: missing, nothing stored
  const root = CID.parse(o.bigCid)
  const leaves = (await import('@ipld/dag-pb')).decode(Buffer.from(await (await fetch(`${partial.url}/ipfs/${root}?format=raw`)).arrayBuffer())).Links
  partial.withhold.add(leaves[3]!.Hash.toString())
  const gatewayB = createGatewaySource({ baseUrl: partial.url, requestTimeoutMs: 5000 })
  await assert.rejects(fetcherFor(here.storage, [gatewayB]).fetch(o.bigCid), (err: unknown) => isHearthError(err, 'STORAGE_NOT_FOUND'))
  await assert.rejects(fetcherFor(here.storage, [gatewayB], { maxBytes: 1_000_000 }).fetch(o.bigCid),
    (err: unknown) => isHearthError(err, 'STORAGE_NOT_FOUND') && (err.details!.tried as Array<{ outcome: string }>)[1]!.outcome === 'FILE_TOO_LARGE')
  assert.equal(await blockFiles(here.blocksDir), 0)
})

test('a damaged local copy (same size, bit rot) is replaced by a verified one from a gateway', async (t) => {
  const o = await origin(t)
  const sim = await startGatewaySim(t, o.blocksDir)
  const hereDir = await tempDir(t, 'hearth-blocks-')
  const gateway = createGatewaySource({ baseUrl: sim.url, requestTimeoutMs: 5000 })
  const first = await store(t, hereDir)
  await fetcherFor(first.storage, [gateway]).fetch(o.smallCid)
  await fetcherFor(first.storage, [gateway]).fetch(o.bigCid)
  await first.storage.stop()
  // one bit of the small block (kept in LevelDB) and of a leaf (a block file) changed
  const dirs = blockDirsOf(first.blocksDir)
  const leaf = (await import('@ipld/dag-pb')).decode((await readStoredBlock(dirs, CID.parse(o.bigCid)))!.bytes).Links[1]!.Hash
  for (const [cid, tier] of [[CID.parse(o.smallCid), 'small'], [leaf, 'file']] as const) {
    const stored = (await readStoredBlock(dirs, cid))!
    assert.equal(stored.tier, tier)
    const bytes = Buffer.from(stored.bytes)
    bytes[10] = bytes[10]! ^ 0x01
    await overwriteStoredBlock(dirs, cid, bytes)
  }
  const here = await store(t, hereDir)
  const fetcher = fetcherFor(here.storage, [gateway])
  for (const [cid, bytes] of [[o.smallCid, o.small], [o.bigCid, o.big]] as const) {
    await assert.rejects(here.storage.get(cid), (err: unknown) => isHearthError(err, 'STORAGE_VERIFY_FAILED'))
    const got = await fetcher.fetch(cid)
    assert.equal(got.attempts[0]!.outcome, 'STORAGE_VERIFY_FAILED')
    assert.deepEqual(Buffer.from(await here.storage.get(cid)), Buffer.from(bytes), 'the local copy is sound again')
  }
})
