// Sync between devices of one owner: real libp2p nodes on 127.0.0.1, real file indexes, real
// embedded IPFS storage and real OpenPGP (see test/support/sync-device.ts).
import { test } from 'node:test'
import assert from 'node:assert/strict'
import { readFile } from 'node:fs/promises'
import { join } from 'node:path'
import type { FileRecord } from '../../src/db/types.js'
import { tempDir } from '../support/tmp.js'
import {
  fileSet, instant, startDevice, testOwner, waitFor, type TestDevice, type DeviceOptions
} from '../support/sync-device.js'
import { encryptEnvelopeBytes } from '../../src/protocol/encryption.js'
import { buildEnvelope, serializeEnvelope } from '../../src/protocol/envelope.js'
import { scopeKeyHex } from '../../src/protocol/keys.js'

async function device (t: { after: (fn: () => Promise<void>) => void }, dir: string, name: string, opts: Omit<DeviceOptions, 'dir'>): Promise<TestDevice> {
  const d = await startDevice({ dir: join(dir, name), ...opts })
  t.after(async () => { await d.stop() })
  return d
}

function duplicates (list: string[]): string[] {
  const seen = new Set<string>()
  return list.filter((x) => { if (seen.has(x)) return true; seen.add(x); return false })
}

/**
 * Same files = same (CID, plaintext hash) pairs. Paths may differ: two devices that wrote one
 * scope in the same second each keep their own file under the plain name and the other's under a
 * suffixed one.
 */
async function sameFiles (a: TestDevice, b: TestDevice): Promise<boolean> {
  const contents = async (d: TestDevice): Promise<string[]> => [...(await fileSet(d)).values()].map((v) => `${v.cid} ${v.sha256}`).sort()
  return JSON.stringify(await contents(a)) === JSON.stringify(await contents(b))
}

test('500 files written on A arrive on B, decrypt to identical bytes, and a second round moves nothing', async (t) => {
  const dir = await tempDir(t)
  const owner = await testOwner()
  const a = await device(t, dir, 'a', { owner })
  const written: FileRecord[] = []
  for (let i = 0; i < 500; i++) {
    const scope = i % 2 === 0 ? 'instagram.profile' : 'spotify.savedTracks'
    written.push(await a.writeLocal(scope, { username: `user-${i}`, n: i }, instant(i)))
  }
  const progress: number[] = []
  const b = await device(t, dir, 'b', { owner, bootstrapPeers: a.addrs(), engine: { pageSize: 200, onProgress: (p) => progress.push(p.handled) } })

  await waitFor('B to hold 500 files', async () => (await b.index.count()) === 500)
  for (const r of written) {
    const [mine, theirs] = await Promise.all([readFile(join(a.dataDir, r.path)), readFile(join(b.dataDir, r.path))])
    assert.deepEqual(theirs, mine, r.path)
    const received = await b.index.get(r.path)
    assert.equal(received?.cid, r.cid)
    assert.equal(received?.origin, 'peer')
    assert.equal(received?.schemaId, r.schemaId)
  }
  assert.equal(a.engine.stats().fetchesServed, 500)
  assert.equal(duplicates(b.received).length, 0, 'no ciphertext handed to receive twice')
  assert.ok(progress.length >= 2, 'progress was reported while the set synced')

  // B's own log now lists 500 received files; A already holds every one of them.
  await waitFor('A to have handled B\'s log', async () => (await a.engine.peers()).some((p) => p.pendingIn === 0 && p.remoteHead === 500))
  const before = { a: a.engine.stats(), b: b.engine.stats() }
  const [round] = await b.engine.syncNow()
  assert.equal(round?.ok, true)
  assert.equal(round?.totals.fetched, 0)
  assert.equal(round?.totals.listed, 0)
  const after = b.engine.stats()
  assert.equal(a.engine.stats().fetchesServed, before.a.fetchesServed, 'no fetch in the idle round')
  // hello, changes-request, ack out; hello, changes back
  assert.ok(after.messagesSent - before.b.messagesSent <= 3, `idle round sent ${after.messagesSent - before.b.messagesSent} messages`)
  assert.ok(after.bytesReceived - before.b.bytesReceived < 1024, `idle round received ${after.bytesReceived - before.b.bytesReceived} bytes`)
  assert.equal(await a.index.count(), 500, 'nothing came back to A as a new file')

  await waitFor('B to learn that A has handled its whole log', async () => (await b.engine.peers())[0]?.pendingOut === 0)
  const peersOfB = await b.engine.peers()
  assert.equal(peersOfB.length, 1)
  assert.equal(peersOfB[0]?.peerId, a.node.peerId)
  assert.equal(peersOfB[0]?.connected, true)
  assert.equal(peersOfB[0]?.pendingIn, 0)
  assert.ok((peersOfB[0]?.lastSyncAt ?? 0) > 0)
  assert.ok(peersOfB[0]?.addrs.some((x) => x.endsWith(`/p2p/${a.node.peerId}`)))
})

test('files written on both devices at the same time converge, each fetched once', async (t) => {
  const dir = await tempDir(t)
  const owner = await testOwner()
  const a = await device(t, dir, 'a', { owner })
  const b = await device(t, dir, 'b', { owner, bootstrapPeers: a.addrs() })
  await waitFor('A and B connected', () => a.node.connectedPeers().includes(b.node.peerId))

  await Promise.all([
    (async () => { for (let i = 0; i < 60; i++) await a.writeLocal('instagram.profile', { username: `a-${i}` }, instant(i)) })(),
    (async () => { for (let i = 0; i < 60; i++) await b.writeLocal('instagram.profile', { username: `b-${i}` }, instant(i, Date.UTC(2026, 5, 1))) })(),
    // same scope and same second on both sides: both versions must survive on both devices
    a.writeLocal('spotify.savedTracks', { from: 'a' }, '2026-03-03T03:03:03Z'),
    b.writeLocal('spotify.savedTracks', { from: 'b' }, '2026-03-03T03:03:03Z')
  ])
  await waitFor('both devices to hold 122 files', async () => (await a.index.count()) === 122 && (await b.index.count()) === 122)
  await waitFor('identical file sets', async () => await sameFiles(a, b))
  assert.equal((await a.index.versions('spotify.savedTracks')).length, 2)
  assert.deepEqual(duplicates(a.received), [])
  assert.deepEqual(duplicates(b.received), [])
  assert.equal(a.received.length, 61)
  assert.equal(b.received.length, 61)
})

test('A-B-C in a line: C gets A\'s files through B, nothing loops, logs stop growing', async (t) => {
  const dir = await tempDir(t)
  const owner = await testOwner()
  const a = await device(t, dir, 'a', { owner })
  const b = await device(t, dir, 'b', { owner, bootstrapPeers: a.addrs() })
  const c = await device(t, dir, 'c', { owner, bootstrapPeers: b.addrs() })
  for (let i = 0; i < 40; i++) await a.writeLocal('instagram.profile', { username: `a-${i}` }, instant(i))
  for (let i = 0; i < 10; i++) await c.writeLocal('youtube.watchLater', { video: `c-${i}` }, instant(i))

  await waitFor('all three to hold 50 files', async () =>
    (await a.index.count()) === 50 && (await b.index.count()) === 50 && (await c.index.count()) === 50)
  await waitFor('identical sets', async () => await sameFiles(a, b) && await sameFiles(b, c))
  assert.ok(!a.node.connectedPeers().includes(c.node.peerId), 'A and C never connected')

  // Let every pending poke and pull finish, then check that the system is quiet.
  const heads = async (): Promise<number[]> => await Promise.all([a, b, c].map(async (d) => await d.index.currentSeq()))
  let last = await heads()
  await waitFor('change logs to stop growing', async () => {
    await new Promise((resolve) => setTimeout(resolve, 300))
    const now = await heads()
    const stable = now.every((h, i) => h === last[i])
    last = now
    return stable
  })
  const served = [a, b, c].map((d) => d.engine.stats().fetchesServed)
  for (const d of [a, b, c]) {
    const rounds = await d.engine.syncNow()
    assert.ok(rounds.every((r) => r.ok && r.totals.fetched === 0), JSON.stringify(rounds))
  }
  assert.deepEqual(await heads(), last, 'an explicit round changes nothing')
  assert.deepEqual([a, b, c].map((d) => d.engine.stats().fetchesServed), served)
  // each device received each foreign file exactly once
  for (const d of [a, b, c]) assert.deepEqual(duplicates(d.received), [])
  assert.equal(a.received.length, 10)
  assert.equal(b.received.length, 50)
  assert.equal(c.received.length, 40)
})

test('deletions propagate as tombstones along a line and a device that missed one cannot bring the file back', async (t) => {
  const dir = await tempDir(t)
  const owner = await testOwner()
  const a = await device(t, dir, 'a', { owner })
  const b = await device(t, dir, 'b', { owner, bootstrapPeers: a.addrs() })
  const c = await device(t, dir, 'c', { owner, bootstrapPeers: b.addrs() })
  const files: FileRecord[] = []
  for (let i = 0; i < 6; i++) files.push(await a.writeLocal('instagram.profile', { username: `u${i}` }, instant(i)))
  await waitFor('C to hold 6 files', async () => (await c.index.count()) === 6)

  await a.deleteLocal(files[0]!.path)
  await a.deleteLocal(files[1]!.path)
  await waitFor('C to drop the 2 deleted files', async () => (await c.index.count()) === 4 && (await b.index.count()) === 4)
  for (const d of [b, c]) {
    assert.equal(await d.index.get(files[0]!.path), null)
    await assert.rejects(readFile(join(d.dataDir, files[0]!.path)), { code: 'ENOENT' })
  }

  // B goes offline, its copy of file 2 changes (it learns a fileId: a new seq in B's log), and A
  // deletes file 2 meanwhile. When B is back, A must not re-fetch file 2 from B's newer entry.
  await b.stop()
  const bAgain = await device(t, dir, 'b', { owner, bootstrapPeers: [] })
  const f2 = (await bAgain.index.get(files[2]!.path))!
  await bAgain.index.put({ ...f2, fileId: '77', state: 'registered', updatedAt: Date.now() })
  await bAgain.stop()
  await a.deleteLocal(files[2]!.path)
  const b2 = await device(t, dir, 'b', { owner, bootstrapPeers: a.addrs() })
  await waitFor('B to drop file 2', async () => (await b2.index.get(files[2]!.path)) === null)
  await waitFor('B\'s log handled by A', async () => (await a.engine.peers()).some((p) => p.peerId === b2.node.peerId && p.pendingIn === 0 && !p.syncing))
  await a.engine.syncNow()
  assert.equal(await a.index.get(files[2]!.path), null, 'A did not resurrect the file it deleted')
  assert.equal(a.received.length, 0)
  assert.equal(await a.index.count(), 3)
})

test('a file whose schema is unknown waits with its ciphertext and is written without a refetch once the schema is known', async (t) => {
  const dir = await tempDir(t)
  const owner = await testOwner()
  const a = await device(t, dir, 'a', { owner })
  const record = await a.writeLocal('youtube.watchLater', { video: 'v1' }, instant(1))
  const b = await device(t, dir, 'b', { owner, bootstrapPeers: a.addrs(), schemas: { 1: 'instagram.profile' } })
  await waitFor('B to park the file', () => b.received.length === 1)
  await b.engine.syncNow()
  assert.equal(await b.index.count(), 0)
  assert.equal(a.engine.stats().fetchesServed, 1)

  b.schemas['3'] = 'youtube.watchLater'
  const retry = await b.engine.retryWaiting()
  assert.deepEqual(retry, { retried: 1, written: 1, stillWaiting: 0, failed: 0 })
  assert.equal((await b.index.get(record.path))?.cid, record.cid)
  await b.engine.syncNow()
  assert.equal(a.engine.stats().fetchesServed, 1, 'the ciphertext crossed the wire once')
})

test('a ciphertext that does not decrypt for its announced schema is rejected once and never fetched again', async (t) => {
  const dir = await tempDir(t)
  const owner = await testOwner()
  const a = await device(t, dir, 'a', { owner })
  // A's index claims schema 1 (instagram.profile), but the bytes are encrypted for spotify.
  const env = buildEnvelope({ definitionUrl: 'ipfs://x', scope: 'spotify.savedTracks', collectedAt: instant(5), data: { t: 1 } })
  const ciphertext = await encryptEnvelopeBytes(serializeEnvelope(env), scopeKeyHex(owner.masterKey, 'spotify.savedTracks'))
  const cid = await a.storage.add(ciphertext)
  await a.index.put({
    path: 'instagram.profile/2026-01-01T00-00-05.000Z.json', scope: 'instagram.profile', collectedAt: instant(5),
    schemaId: '1', cid, size: 10, encryptedSize: ciphertext.byteLength, sha256: 'x'.repeat(64), mtimeMs: 0,
    state: 'stored', origin: 'local', updatedAt: Date.now()
  })
  await a.writeLocal('instagram.profile', { username: 'fine' }, instant(6))
  const b = await device(t, dir, 'b', { owner, bootstrapPeers: a.addrs() })
  await waitFor('B to get the valid file', async () => (await b.index.count()) === 1)
  await waitFor('B to finish its pull', async () => (await b.engine.peers()).every((p) => !p.syncing && p.pendingIn === 0))
  assert.equal(b.engine.stats().rejected, 1)

  // A third device relays the same bad CID; B must not fetch it again.
  const c = await device(t, dir, 'c', { owner, bootstrapPeers: a.addrs(), schemas: { 1: 'spotify.savedTracks', 2: 'instagram.profile' } })
  await waitFor('C to take the file under its own table', async () => (await c.index.count()) >= 1)
  await b.engine.addPeer(c.addrs()[0]!)
  await waitFor('B connected to C', () => b.node.connectedPeers().includes(c.node.peerId))
  await b.engine.syncNow()
  assert.equal(b.received.filter((x) => x === cid).length, 1)
})
