// The owner's devices as a source of missing ciphertexts for restore: a device with files (real
// sync engine, storage and index) serves them over a real sync stream on 127.0.0.1 to a node with
// no engine of its own (so nothing arrives by a pull), which verifies, stores and pins them. A
// hostile device of the same owner that sends other bytes is refused with STORAGE_VERIFY_FAILED
// and nothing of it is stored; one that never answers is bounded; one that lacks it says missing.
import { test } from 'node:test'
import assert from 'node:assert/strict'
import { randomBytes } from 'node:crypto'
import { join } from 'node:path'
import { CID } from 'multiformats/cid'
import { openDatabase, openKv } from '../../src/db/database.js'
import { openFileIndex } from '../../src/db/file-index.js'
import { isHearthError } from '../../src/errors.js'
import { silentLogger } from '../../src/log.js'
import { privateNetworkKey } from '../../src/protocol/keys.js'
import { createCiphertextFetcher, type BlockSource } from '../../src/storage/block-sources.js'
import { createEmbeddedStorage } from '../../src/storage/embedded.js'
import { withVerifiedReads } from '../../src/storage/verified-reads.js'
import type { StorageBackend } from '../../src/storage/types.js'
import { createDeviceSources } from '../../src/sync/device-source.js'
import { createSyncNode, type SyncNode } from '../../src/sync/node.js'
import { SYNC_PROTOCOL_ID } from '../../src/sync/protocol.js'
import { helloMessage } from '../../src/sync/serve.js'
import { syncState } from '../../src/sync/state.js'
import { newCounters, openChannel } from '../../src/sync/wire.js'
import { startDevice, testOwner, waitFor, type TestDevice } from '../support/sync-device.js'
import { tempDir } from '../support/tmp.js'

type T = Parameters<typeof tempDir>[0]
type Owner = Awaited<ReturnType<typeof testOwner>>

/** A restoring device: a sync node, an index and embedded storage, and no sync engine. */
async function restorer (t: T, dir: string, owner: Owner, peers: string[]) {
  const db = await openDatabase(join(dir, 'index'))
  const index = await openFileIndex({ db })
  const storage: StorageBackend = withVerifiedReads(await createEmbeddedStorage({ blocksDir: join(dir, 'blocks'), datastoreDir: join(dir, 'datastore') }))
  const node = await bareNode(dir, owner, peers)
  t.after(async () => { await node.stop(); await storage.stop(); await db.close() })
  const sources = (readTimeoutMs = 10_000, sessionIdleMs?: number): BlockSource[] => {
    const devices = createDeviceSources({ node, ownerAddress: owner.ownerAddress, index, state: syncState(openKv(db, 'sync')), readTimeoutMs, ...(sessionIdleMs !== undefined ? { sessionIdleMs } : {}) })
    t.after(async () => { await devices.close() })
    return devices.list()
  }
  const fetcher = (remote: () => BlockSource[], timeoutMs = 30_000) => createCiphertextFetcher({ storage, remote, maxBytes: 64 * 1024 * 1024, sourceTimeoutMs: timeoutMs, logger: silentLogger() })
  return { node, storage, sources, fetcher, index }
}

async function bareNode (dir: string, owner: Owner, peers: string[] = []): Promise<SyncNode> {
  const node = await createSyncNode({
    networkKey: privateNetworkKey(owner.masterKey),
    peerKeyFile: join(dir, 'peer.key'),
    listen: ['/ip4/127.0.0.1/tcp/0'],
    mdns: false,
    bootstrapPeers: peers,
    logger: silentLogger(),
    redial: { minMs: 200, maxMs: 2000 }
  })
  await node.start()
  return node
}

async function deviceWithFiles (t: T, dir: string, owner: Owner): Promise<{ a: TestDevice; cids: string[]; bigCid: string }> {
  const a = await startDevice({ dir, owner })
  t.after(async () => { await a.stop() })
  const cids: string[] = []
  for (let i = 0; i < 5; i++) cids.push((await a.writeLocal('instagram.profile', { username: `d${i}` }, new Date(Date.UTC(2026, 0, 1, 0, 0, i)).toISOString())).cid!)
  const big = await a.writeLocal('spotify.savedTracks', { blob: randomBytes(900_000).toString('base64') }, '2026-01-02T00:00:00.000Z')
  return { a, cids: [...cids, big.cid!], bigCid: big.cid! }
}

/**
 * A device of the same owner that greets correctly and then misbehaves on `fetch`: sends other
 * bytes of the announced size (`lie`), answers nothing (`hang`) or says it lacks the CID.
 */
async function hostileDevice (t: T, dir: string, owner: Owner, behaviour: 'lie' | 'hang' | 'missing'): Promise<SyncNode> {
  const node = await bareNode(dir, owner)
  await node.libp2p.handle(SYNC_PROTOCOL_ID, async (stream) => {
    const ch = openChannel(stream, { readTimeoutMs: 30_000, counters: newCounters() })
    try {
      await ch.read()
      const db = { currentSeq: async () => 0 }
      await ch.send(await helloMessage({ ownerAddress: owner.ownerAddress, index: db as never, cursorFor: async () => 0 }, 'x'))
      const fetch = await ch.read()
      if (fetch?.type !== 'fetch' || behaviour === 'hang') return
      if (behaviour === 'missing') { await ch.send({ type: 'missing', cid: fetch.cid }); await ch.close(); return }
      const bytes = randomBytes(4000)
      await ch.send({ type: 'blob', cid: fetch.cid, size: bytes.byteLength })
      await ch.sendBlob(bytes)
      await ch.close()
    } catch {
      // the restoring side gave up
    }
  })
  t.after(async () => { await node.stop() })
  return node
}

test('a device of the owner serves every missing ciphertext (one multi-block) over sync; verified, stored and pinned here', async (t) => {
  const dir = await tempDir(t)
  const owner = await testOwner()
  const { a, cids, bigCid } = await deviceWithFiles(t, join(dir, 'a'), owner)
  assert.equal(CID.parse(bigCid).code, 0x70, 'the big ciphertext is a multi-block file')
  const b = await restorer(t, join(dir, 'b'), owner, a.addrs())
  await waitFor('B connected to A', async () => b.node.connectedPeers().includes(a.node.peerId))

  const sources = b.sources()
  assert.deepEqual(sources.map((s) => s.name), [`device ${a.node.peerId}`])
  const fetcher = b.fetcher(() => sources)
  for (const cid of cids) {
    const got = await fetcher.fetch(cid)
    assert.equal(got.source, `device ${a.node.peerId}`)
    assert.deepEqual(Buffer.from(got.bytes), Buffer.from(await a.storage.get(cid)))
    assert.equal(await b.storage.has(cid), true, 'stored and pinned here')
  }
  assert.equal(a.engine.stats().fetchesServed, cids.length)
  assert.equal((await fetcher.fetch(bigCid)).source, 'local storage')

  // one session for a run of fetches: one greeting, then one request per file
  const counters = newCounters()
  const devices = createDeviceSources({ node: b.node, ownerAddress: owner.ownerAddress, index: b.index, state: { cursor: async () => 0 }, readTimeoutMs: 10_000, counters })
  t.after(async () => { await devices.close() })
  const onSession = b.fetcher(() => devices.list())
  const missing = await Promise.all(Array.from({ length: 4 }, async () => await a.storage.add(randomBytes(64))))
  for (const cid of missing) await assert.rejects(onSession.fetch(cid), (err: unknown) => isHearthError(err, 'STORAGE_NOT_FOUND'))
  assert.equal(counters.messagesSent, 1 + missing.length, 'one hello and one fetch per file')

  // a CID the device does not offer (not in its index) is missing there
  const stranger = await a.storage.add(randomBytes(100))
  await assert.rejects(fetcher.fetch(stranger), (err: unknown) => {
    assert.ok(isHearthError(err, 'STORAGE_NOT_FOUND'))
    assert.deepEqual(err.details!.tried, [{ source: 'local storage', outcome: 'missing' }, { source: `device ${a.node.peerId}`, outcome: 'missing' }])
    assert.match(err.message, /start the device that holds it/)
    return true
  })
})

test('a device known only by its kept address is dialled for the fetch', async (t) => {
  const dir = await tempDir(t)
  const owner = await testOwner()
  const { a, cids } = await deviceWithFiles(t, join(dir, 'a'), owner)
  const b = await restorer(t, join(dir, 'b'), owner, [])
  b.node.keepConnected(a.addrs()[0]!)
  const sources = b.sources()
  assert.equal(sources.length, 1)
  const fetcher = b.fetcher(() => sources)
  const got = await fetcher.fetch(cids[0]!)
  assert.deepEqual(Buffer.from(got.bytes), Buffer.from(await a.storage.get(cids[0]!)))

  // the kept session dies with its connection: the next fetch opens a fresh one
  await b.node.hangUp(a.node.peerId)
  const again = await fetcher.fetch(cids[1]!)
  assert.equal(again.source, `device ${a.node.peerId}`)
  assert.deepEqual(Buffer.from(again.bytes), Buffer.from(await a.storage.get(cids[1]!)))
})

test('a device that sends other bytes is refused and nothing stored; one that hangs is bounded; the next device provides it', async (t) => {
  const dir = await tempDir(t)
  const owner = await testOwner()
  const { a, cids, bigCid } = await deviceWithFiles(t, join(dir, 'a'), owner)
  const liar = await hostileDevice(t, join(dir, 'liar'), owner, 'lie')
  const hang = await hostileDevice(t, join(dir, 'hang'), owner, 'hang')
  const lacking = await hostileDevice(t, join(dir, 'lacking'), owner, 'missing')
  const b = await restorer(t, join(dir, 'b'), owner, [...liar.multiaddrs(), ...hang.multiaddrs(), ...lacking.multiaddrs()])
  await waitFor('B connected to the three', async () => b.node.connectedPeers().length === 3)
  const byName = (ids: string[], readTimeoutMs?: number): BlockSource[] => {
    const all = b.sources(readTimeoutMs)
    return ids.map((id) => all.find((s) => s.name === `device ${id}`)!)
  }

  await assert.rejects(b.fetcher(() => byName([liar.peerId])).fetch(cids[1]!), (err: unknown) => {
    assert.ok(isHearthError(err, 'STORAGE_VERIFY_FAILED'), String(err))
    assert.deepEqual((err.details!.tried as Array<{ outcome: string }>).map((x) => x.outcome), ['missing', 'STORAGE_VERIFY_FAILED'])
    return true
  })
  assert.equal(await b.storage.has(cids[1]!), false)

  const started = Date.now()
  const bounded = b.fetcher(() => byName([hang.peerId], 500))
  await assert.rejects(bounded.fetch(cids[2]!), (err: unknown) => isHearthError(err, 'STORAGE_NOT_FOUND') && (err.details!.tried as Array<{ outcome: string }>)[1]!.outcome === 'TIMEOUT')
  assert.ok(Date.now() - started < 5000, `a silent device took ${Date.now() - started} ms`)

  // the liar, the silent one and one that lacks it come first: A (by its address) still provides it
  b.node.keepConnected(a.addrs()[0]!)
  const all = b.fetcher(() => [...byName([liar.peerId, hang.peerId, lacking.peerId], 500), ...b.sources().filter((s) => s.name === `device ${a.node.peerId}`)])
  const got = await all.fetch(bigCid)
  assert.deepEqual(got.attempts.map((x) => x.outcome), ['missing', 'STORAGE_VERIFY_FAILED', 'TIMEOUT', 'missing'])
  assert.equal(got.source, `device ${a.node.peerId}`)
  assert.deepEqual(Buffer.from(await b.storage.get(bigCid)), Buffer.from(await a.storage.get(bigCid)))
})
