// The pipelined, batched pull against a scripted peer (a raw libp2p node speaking the protocol):
// a bad file among many costs only that file, and a peer that stops answering mid-pipeline is cut
// off by the read timeout with everything received before it kept, never fetched again.
import { test } from 'node:test'
import assert from 'node:assert/strict'
import { join } from 'node:path'
import { CID } from 'multiformats/cid'
import * as raw from 'multiformats/codecs/raw'
import { sha256 } from 'multiformats/hashes/sha2'
import type { Stream } from '@libp2p/interface'
import { silentLogger } from '../../src/log.js'
import { encryptEnvelopeBytes } from '../../src/protocol/encryption.js'
import { buildEnvelope, serializeEnvelope } from '../../src/protocol/envelope.js'
import { privateNetworkKey, scopeKeyHex, type MasterKey } from '../../src/protocol/keys.js'
import { createSyncNode, type SyncNode } from '../../src/sync/node.js'
import { SYNC_PROTOCOL_ID, type LiveEntry } from '../../src/sync/protocol.js'
import { newCounters, openChannel } from '../../src/sync/wire.js'
import { tempDir } from '../support/tmp.js'
import { instant, startDevice, testOwner, waitFor, type TestDevice } from '../support/sync-device.js'

interface Served { entry: LiveEntry; bytes: Uint8Array }

async function cidOf (bytes: Uint8Array): Promise<string> {
  return CID.create(1, raw.code, await sha256.digest(bytes)).toString()
}

/** `count` instagram.profile files as a peer lists them (seq 1..count), real ciphertexts. */
async function files (owner: MasterKey, count: number, scopeOf: (i: number) => string = () => 'instagram.profile'): Promise<Served[]> {
  const out: Served[] = []
  for (let i = 0; i < count; i++) {
    const scope = scopeOf(i)
    const env = buildEnvelope({ definitionUrl: 'ipfs://schema-1', scope, collectedAt: instant(i), data: { username: `p${i}` } })
    const bytes = await encryptEnvelopeBytes(serializeEnvelope(env), scopeKeyHex(owner.masterKey, scope))
    out.push({ entry: { seq: i + 1, cid: await cidOf(bytes), schemaId: '1', collectedAt: instant(i), size: bytes.byteLength, fileId: null }, bytes })
  }
  return out
}

/**
 * A peer that lists `served` and answers fetches through `answer`: the bytes to send, or
 * 'stall' to stop answering (the stream stays open). Records every fetch it was asked for.
 */
async function scriptedPeer (t: { after: (fn: () => Promise<void>) => void }, dir: string, owner: MasterKey, served: Served[], answer: (s: Served, nth: number) => Uint8Array | 'stall'): Promise<{ node: SyncNode; fetches: string[] }> {
  const node = await createSyncNode({ networkKey: privateNetworkKey(owner.masterKey), peerKeyFile: join(dir, 'scripted.key'), listen: ['/ip4/127.0.0.1/tcp/0'], logger: silentLogger() })
  const fetches: string[] = []
  const open = new Set<Stream>()
  await node.libp2p.handle(SYNC_PROTOCOL_ID, async (stream) => {
    open.add(stream)
    const ch = openChannel(stream, { readTimeoutMs: 60_000, counters: newCounters() })
    try {
      await ch.read()
      await ch.send({ type: 'hello', protocolVersion: 1, ownerAddress: owner.ownerAddress, head: served.length, cursor: 0 })
      let stalled = false
      for (;;) {
        const m = await ch.read()
        if (m === null || m.type === 'ack') break
        if (stalled) continue
        if (m.type === 'changes-request') {
          const entries = served.filter((s) => s.entry.seq > m.since).slice(0, m.limit).map((s) => s.entry)
          await ch.send({ type: 'changes', entries, next: entries.at(-1)?.seq ?? m.since, done: entries.length < m.limit })
        } else if (m.type === 'fetch') {
          const s = served.find((x) => x.entry.cid === m.cid)!
          fetches.push(m.cid)
          const bytes = answer(s, fetches.length)
          if (bytes === 'stall') { stalled = true; continue }
          await ch.sendBlob(bytes, { type: 'blob', cid: m.cid, size: bytes.byteLength })
        }
      }
      await ch.close()
    } catch {
      ch.abort(new Error('session over'))
    } finally {
      open.delete(stream)
    }
  })
  await node.start()
  t.after(async () => {
    for (const s of open) s.abort(new Error('test over'))
    await node.stop()
  })
  return { node, fetches }
}

async function receiver (t: { after: (fn: () => Promise<void>) => void }, dir: string, owner: MasterKey, engine: Parameters<typeof startDevice>[0]['engine'] = {}): Promise<TestDevice> {
  const d = await startDevice({ dir: join(dir, 'b'), owner, engine })
  t.after(async () => { await d.stop() })
  return d
}

test('a pipelined pull with a bad file among many rejects only that file', async (t) => {
  const dir = await tempDir(t)
  const owner = await testOwner()
  // file 40 is encrypted for another scope than its schema says (never decrypts here); file 90's
  // bytes are replaced by other bytes of the same length (CID mismatch)
  const served = await files(owner, 150, (i) => i === 39 ? 'spotify.savedTracks' : 'instagram.profile')
  const liar = served[89]!
  const peer = await scriptedPeer(t, dir, owner, served, (s) => s === liar ? new Uint8Array(s.bytes.byteLength).fill(7) : s.bytes)
  const b = await receiver(t, dir, owner, { batch: { files: 16 } })
  await b.engine.addPeer(`${peer.node.multiaddrs()[0]!}`)
  await waitFor('B to finish the pull', async () => (await b.engine.peers()).some((p) => p.peerId === peer.node.peerId && p.lastSyncAt !== null), 120_000)

  assert.equal(await b.index.count(), 148, 'every other file was written and indexed')
  const stats = b.engine.stats()
  assert.equal(stats.written, 148)
  assert.equal(stats.rejected, 2, 'the undecryptable file and the mismatched bytes')
  for (const s of served) {
    const held = (await b.index.byCid(s.entry.cid)).length
    assert.equal(held, s === liar || s === served[39] ? 0 : 1, `seq ${s.entry.seq}`)
  }
  assert.ok(!b.received.includes(liar.entry.cid), 'mismatched bytes never reach receive')
  assert.equal(new Set(peer.fetches).size, peer.fetches.length, 'each CID fetched once')

  // another round: the cursor moved past both, nothing crosses the wire again
  const before = peer.fetches.length
  await b.engine.syncNow({ peerId: peer.node.peerId })
  assert.equal((await b.engine.peers()).find((p) => p.peerId === peer.node.peerId)?.pendingIn, 0)
  assert.deepEqual(peer.fetches.slice(before), [])
})

test('a peer that stalls mid-pipeline is cut off by the read timeout; what arrived is kept and not fetched again', async (t) => {
  const dir = await tempDir(t)
  const owner = await testOwner()
  const served = await files(owner, 120)
  let stallAt: number | null = 45
  const peer = await scriptedPeer(t, dir, owner, served, (s, nth) => nth === stallAt ? 'stall' : s.bytes)
  const b = await receiver(t, dir, owner, { readTimeoutMs: 1_500, batch: { files: 8 } })
  const started = Date.now()
  await b.engine.addPeer(`${peer.node.multiaddrs()[0]!}`)
  await waitFor('the pull to fail', async () => (await b.engine.peers()).some((p) => p.peerId === peer.node.peerId && p.lastError !== null), 30_000)
  assert.ok(Date.now() - started < 15_000, `bounded by the read timeout (${Date.now() - started} ms)`)
  const status = (await b.engine.peers()).find((p) => p.peerId === peer.node.peerId)!
  assert.match(status.lastError ?? '', /no sync frame from the peer within 1500 ms/)
  assert.equal(await b.index.count(), 44, 'the 44 files answered before the stall were received')
  assert.equal(status.cursor, 44, 'and the cursor moved over them')

  // the peer answers again: the next round fetches only what was missing
  stallAt = null
  const [round] = await b.engine.syncNow({ peerId: peer.node.peerId })
  assert.equal(round?.ok, true, round?.error)
  assert.equal(await b.index.count(), 120)
  const kept = new Set(served.slice(0, 44).map((s) => s.entry.cid))
  assert.equal(peer.fetches.filter((cid) => kept.has(cid)).length, 44, 'nothing received before the stall crossed the wire again')
})

test('a page of large files starts the decryption worker; one stored as soon as it is read but never received (its batch came after a failed one) loses its pin again', async (t) => {
  const dir = await tempDir(t)
  const owner = await testOwner()
  const a = await startDevice({ dir: join(dir, 'a'), owner })
  t.after(async () => { await a.stop() })
  // two files over one storage chunk each, so both are stored ahead of their batch
  const first = await a.writeLocal('instagram.profile', { username: 'one', bio: 'a'.repeat(600_000) }, instant(1))
  const second = await a.writeLocal('instagram.profile', { username: 'two', bio: 'b'.repeat(600_000) }, instant(2))
  assert.ok((first.encryptedSize ?? 0) > 262_144 && (second.encryptedSize ?? 0) > 262_144)
  // the first file's receive fails like a disk would, once the second one has been read and stored
  const receiveFails = new Map([[first.cid!, 600]])
  let warmed = 0
  const b = await startDevice({ dir: join(dir, 'b'), owner, receiveFails, engine: { batch: { files: 1 }, expectLarge: () => { warmed++ } } })
  t.after(async () => { await b.stop() })
  await b.engine.addPeer(a.addrs()[0]!)
  const peerState = async (): Promise<{ lastError?: string | null } | undefined> => (await b.engine.peers()).find((p) => p.peerId === a.node.peerId)
  await waitFor('B\'s pull to fail on the first file', async () => /disk failed/.test((await peerState())?.lastError ?? ''), 60_000)
  await waitFor('B to let go of the second file', async () => b.unpinned.includes(second.cid!), 10_000)
  assert.equal(await b.index.count(), 0)
  assert.ok(!b.received.includes(second.cid!))
  assert.ok(warmed >= 1, 'a page listing large files has the decryption worker started')
  // the next round, with the disk back, brings both
  receiveFails.clear()
  await b.engine.syncNow({ peerId: a.node.peerId })
  assert.equal(await b.index.count(), 2)
  assert.deepEqual(new Set((await Promise.all([first.cid!, second.cid!].map(async (c) => (await b.index.byCid(c)).length)))), new Set([1]))
})
