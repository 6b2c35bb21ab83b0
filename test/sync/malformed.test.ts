// A peer that breaks the protocol (a buggy or hostile device holding the owner's network key)
// costs one stream, never the daemon: raw streams on the protocol id in both directions.
import { test } from 'node:test'
import assert from 'node:assert/strict'
import { join } from 'node:path'
import * as lp from 'it-length-prefixed'
import { multiaddr } from '@multiformats/multiaddr'
import { peerIdFromString } from '@libp2p/peer-id'
import type { Stream } from '@libp2p/interface'
import { CID } from 'multiformats/cid'
import * as raw from 'multiformats/codecs/raw'
import { sha256 } from 'multiformats/hashes/sha2'
import { silentLogger } from '../../src/log.js'
import { privateNetworkKey } from '../../src/protocol/keys.js'
import { createSyncNode, type SyncNode } from '../../src/sync/node.js'
import { SYNC_PROTOCOL_ID, type SyncMessage } from '../../src/sync/protocol.js'
import { newCounters, openChannel } from '../../src/sync/wire.js'
import { tempDir } from '../support/tmp.js'
import { OTHER_OWNER_KEY, instant, startDevice, testOwner, waitFor, type TestDevice } from '../support/sync-device.js'

const json = (value: unknown): Uint8Array => new TextEncoder().encode(JSON.stringify(value))

async function rawNode (t: { after: (fn: () => Promise<void>) => void }, dir: string, master: Uint8Array): Promise<SyncNode> {
  const node = await createSyncNode({ networkKey: privateNetworkKey(master), peerKeyFile: join(dir, 'raw.key'), listen: ['/ip4/127.0.0.1/tcp/0'], logger: silentLogger() })
  await node.start()
  t.after(async () => { await node.stop() })
  return node
}

async function openTo (from: SyncNode, to: TestDevice): Promise<Stream> {
  return await from.libp2p.dialProtocol(multiaddr(to.addrs()[0]!), SYNC_PROTOCOL_ID)
}

/** Everything the device sends back until it closes or resets the stream. */
async function answers (stream: Stream): Promise<{ messages: SyncMessage[]; ended: 'closed' | 'reset' }> {
  const ch = openChannel(stream, { readTimeoutMs: 10_000, counters: newCounters() })
  const messages: SyncMessage[] = []
  try {
    for (;;) {
      const m = await ch.read()
      if (m === null) return { messages, ended: 'closed' }
      messages.push(m)
    }
  } catch {
    return { messages, ended: 'reset' }
  }
}

test('malformed requests end their stream with an error and the device keeps serving', async (t) => {
  const dir = await tempDir(t)
  const owner = await testOwner()
  const a = await startDevice({ dir: join(dir, 'a'), owner, engine: { idleTimeoutMs: 1_000 } })
  t.after(async () => { await a.stop() })
  await a.writeLocal('instagram.profile', { username: 'still-here' }, instant(1))
  const r = await rawNode(t, dir, owner.masterKey)
  const hello = { type: 'hello', protocolVersion: 1, ownerAddress: owner.ownerAddress, head: 0, cursor: 0 }
  const unknownCid = CID.create(1, raw.code, await sha256.digest(json('nobody has this'))).toString()

  const cases: Array<{ name: string; frames: Uint8Array[]; rawBytes?: Uint8Array; expectCode?: string; expectFirst?: string }> = [
    { name: 'not JSON', frames: [new Uint8Array([0xff, 0x00, 0x13])], expectCode: 'SYNC_PROTOCOL_ERROR' },
    { name: 'a JSON array', frames: [json([1, 2])], expectCode: 'SYNC_PROTOCOL_ERROR' },
    { name: 'no hello first', frames: [json({ type: 'changes-request', since: 0, limit: 10 })], expectCode: 'SYNC_PROTOCOL_ERROR' },
    { name: 'hello with an extra field', frames: [json({ ...hello, admin: true })], expectCode: 'SYNC_PROTOCOL_ERROR' },
    { name: 'hello of another owner', frames: [json({ ...hello, ownerAddress: '0x' + 'ab'.repeat(20) })], expectCode: 'PEER_REJECTED' },
    { name: 'a newer protocol version', frames: [json({ ...hello, protocolVersion: 9 })], expectCode: 'PEER_REJECTED' },
    { name: 'an answer sent as a request', frames: [json(hello), json({ type: 'changes', entries: [], next: 0, done: true })], expectFirst: 'hello', expectCode: 'SYNC_PROTOCOL_ERROR' },
    { name: 'a limit beyond the cap', frames: [json(hello), json({ type: 'changes-request', since: 0, limit: 1e9 })], expectFirst: 'hello', expectCode: 'SYNC_PROTOCOL_ERROR' },
    { name: 'an oversized frame length', frames: [json(hello)], rawBytes: new Uint8Array([0x80, 0x80, 0x80, 0x40]), expectFirst: 'hello' },
    { name: 'an endless length prefix', frames: [], rawBytes: new Uint8Array(12).fill(0xff) },
    { name: 'hello then silence', frames: [json(hello)], expectFirst: 'hello' }
  ]
  for (const c of cases) {
    const stream = await openTo(r, a)
    for (const f of c.frames) stream.send(lp.encode.single(f))
    if (c.rawBytes !== undefined) stream.send(c.rawBytes)
    const started = Date.now()
    const { messages } = await answers(stream)
    if (c.expectFirst !== undefined) assert.equal(messages[0]?.type, c.expectFirst, c.name)
    if (c.expectCode !== undefined) {
      const error = messages.find((m) => m.type === 'error')
      assert.equal(error?.type === 'error' ? error.code : undefined, c.expectCode, c.name)
    }
    assert.ok(messages.every((m) => m.type === 'hello' || m.type === 'error'), `${c.name}: nothing else was answered`)
    assert.ok(Date.now() - started < 8_000, `${c.name}: the stream was ended promptly`)
  }

  // A fetch for a CID A does not offer is answered "missing", and the session goes on.
  const stream = await openTo(r, a)
  const ch = openChannel(stream, { readTimeoutMs: 5_000, counters: newCounters() })
  await ch.send(hello as SyncMessage)
  assert.equal((await ch.read())?.type, 'hello')
  await ch.send({ type: 'fetch', cid: unknownCid })
  assert.deepEqual(await ch.read(), { type: 'missing', cid: unknownCid })
  await ch.send({ type: 'changes-request', since: 0, limit: 10 })
  const page = await ch.read()
  assert.equal(page?.type === 'changes' ? page.entries.length : -1, 1)
  await ch.close()

  assert.deepEqual(a.gets, [], 'no ciphertext was read for the raw peer')
  const b = await startDevice({ dir: join(dir, 'b'), owner, bootstrapPeers: a.addrs() })
  t.after(async () => { await b.stop() })
  await waitFor('a well-behaved device to still sync', async () => (await b.index.count()) === 1)
})

test('a peer that answers with wrong bytes, garbage or a blob larger than it listed cannot make a device write anything', async (t) => {
  const dir = await tempDir(t)
  const owner = await testOwner()
  const b = await startDevice({ dir: join(dir, 'b'), owner })
  t.after(async () => { await b.stop() })
  const r = await rawNode(t, dir, owner.masterKey)
  const honest = new TextEncoder().encode('the bytes the CID names')
  const cid = CID.create(1, raw.code, await sha256.digest(honest)).toString()
  const otherCid = CID.create(1, raw.code, await sha256.digest(new TextEncoder().encode('listed at 23 bytes, too'))).toString()
  let sessions = 0
  let mode: 'wrong-bytes' | 'garbage' | 'oversize' = 'wrong-bytes'
  await r.libp2p.handle(SYNC_PROTOCOL_ID, async (stream) => {
    sessions++
    const ch = openChannel(stream, { readTimeoutMs: 5_000, counters: newCounters() })
    try {
      await ch.read() // the device's hello
      await ch.send({ type: 'hello', protocolVersion: 1, ownerAddress: owner.ownerAddress, head: mode === 'oversize' ? 2 : 1, cursor: 0 })
      for (;;) {
        const m = await ch.read()
        if (m === null || m.type === 'ack') break
        if (m.type === 'changes-request') {
          if (mode === 'garbage') { stream.send(lp.encode.single(json({ type: 'changes', entries: [{ seq: 'one' }], next: 1, done: true }))); continue }
          await ch.send({ type: 'changes', entries: [mode === 'oversize' ? { seq: 2, cid: otherCid, schemaId: '1', collectedAt: instant(2), size: honest.byteLength, fileId: null } : { seq: 1, cid, schemaId: '1', collectedAt: instant(1), size: honest.byteLength, fileId: null }], next: mode === 'oversize' ? 2 : 1, done: true })
        } else if (m.type === 'fetch') {
          const lie = mode === 'oversize' ? new Uint8Array(4 * 1024 * 1024) : new TextEncoder().encode('other bytes, same len!!')
          await ch.send({ type: 'blob', cid: m.cid, size: lie.byteLength })
          await ch.sendBlob(lie)
        }
      }
      await ch.close()
    } catch {
      ch.abort(new Error('done'))
    }
  })

  await b.engine.addPeer(`${r.multiaddrs()[0]!}`)
  await waitFor('B to pull from the lying peer', async () => (await b.engine.peers()).some((p) => p.peerId === r.peerId && p.lastSyncAt !== null))
  assert.equal(b.engine.stats().rejected, 1, 'the CID mismatch was caught')
  assert.deepEqual(b.received, [], 'nothing reached the receive hook')
  assert.equal(await b.index.count(), 0)

  mode = 'garbage'
  await b.index.put({ // make B's cursor for the liar restart, so it lists again
    path: 'instagram.profile/x.json', scope: 'instagram.profile', collectedAt: instant(9), schemaId: '1', cid: null, size: 1,
    encryptedSize: null, sha256: 'b'.repeat(64), mtimeMs: 0, state: 'waiting-schema', origin: 'local', updatedAt: 0
  })
  const [round] = await b.engine.syncNow({ peerId: r.peerId })
  assert.equal(round?.ok, false)
  assert.match(round?.error ?? '', /malformed/)
  assert.ok(sessions >= 2)
  const status = (await b.engine.peers()).find((p) => p.peerId === r.peerId)
  assert.match(status?.lastError ?? '', /malformed/)

  mode = 'oversize'
  await b.index.put({ // restart the cursor again
    path: 'instagram.profile/y.json', scope: 'instagram.profile', collectedAt: instant(10), schemaId: '1', cid: null, size: 1,
    encryptedSize: null, sha256: 'c'.repeat(64), mtimeMs: 0, state: 'waiting-schema', origin: 'local', updatedAt: 0
  })
  const [oversized] = await b.engine.syncNow({ peerId: r.peerId })
  assert.equal(oversized?.ok, false)
  assert.match(oversized?.error ?? '', /not the 23 listed/)
  assert.deepEqual(b.received, [], 'nothing reached the receive hook')
  // still alive and serving: another owner's node is still refused, the same owner's gets answers
  const stranger = await rawNode(t, join(dir, 's'), (await testOwner(OTHER_OWNER_KEY)).masterKey)
  await assert.rejects(stranger.libp2p.dial(multiaddr(b.addrs()[0]!)))
  const hello = await openTo(r, b)
  const ch = openChannel(hello, { readTimeoutMs: 5_000, counters: newCounters() })
  await ch.send({ type: 'hello', protocolVersion: 1, ownerAddress: owner.ownerAddress, head: 0, cursor: 0 })
  assert.equal((await ch.read())?.type, 'hello')
  await ch.close()
  assert.ok(peerIdFromString(r.peerId))
})
