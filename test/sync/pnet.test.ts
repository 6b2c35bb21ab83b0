// The private-network layer (src/sync/pnet.ts): pnet v1 on the wire as @libp2p/pnet speaks it
// (both ways, with either XSalsa20 implementation), a node of another key refused, and what
// crashed @libp2p/pnet 3.0.27 as released (a large transfer followed by ordinary traffic, many
// connections over time) survived.
import { test } from 'node:test'
import assert from 'node:assert/strict'
import { createRequire } from 'node:module'
import { join } from 'node:path'
import { createLibp2p, type Libp2p } from 'libp2p'
import { tcp } from '@libp2p/tcp'
import { noise } from '@chainsafe/libp2p-noise'
import { yamux } from '@chainsafe/libp2p-yamux'
import { preSharedKey } from '@libp2p/pnet'
import { multiaddr } from '@multiformats/multiaddr'
import * as lp from 'it-length-prefixed'
import { silentLogger } from '../../src/log.js'
import { createSyncNode, swarmKeyFile, type SyncNode } from '../../src/sync/node.js'
import { availableCiphers, type PnetCipher } from '../../src/sync/pnet.js'
import { tempDir } from '../support/tmp.js'

const PROTOCOL = '/hearth-test/echo/1.0.0'
const MAX = 64 * 1024 * 1024
const networkKey = new Uint8Array(32).fill(42)
type T = { after: (fn: () => Promise<void>) => void }

async function node (t: T, dir: string, name: string, cipher?: PnetCipher, key = networkKey): Promise<SyncNode> {
  const n = await createSyncNode({ networkKey: key, peerKeyFile: join(dir, `${name}.key`), listen: ['/ip4/127.0.0.1/tcp/0'], logger: silentLogger(), ...(cipher !== undefined ? { pnetCipher: cipher } : {}) })
  await n.start()
  t.after(async () => { await n.stop() })
  return n
}

/** A plain libp2p node with @libp2p/pnet's own protector: the reference implementation of pnet v1. */
async function referenceNode (t: T, key = networkKey): Promise<Libp2p> {
  const n = await createLibp2p({
    addresses: { listen: ['/ip4/127.0.0.1/tcp/0'] },
    transports: [tcp()],
    connectionProtector: preSharedKey({ psk: swarmKeyFile(key) }),
    connectionEncrypters: [noise()],
    streamMuxers: [yamux()]
  })
  t.after(async () => { await n.stop() })
  return n
}

/** Every frame is answered with its length and the sum of its bytes, so a corrupted byte shows. */
async function serveEcho (n: Libp2p): Promise<void> {
  await n.handle(PROTOCOL, async (stream) => {
    for await (const frame of lp.decode(stream, { maxDataLength: MAX })) {
      let sum = 0
      for (const b of frame.subarray()) sum = (sum + b) % 65521
      stream.send(lp.encode.single(new TextEncoder().encode(`${frame.byteLength}:${sum}`)))
    }
    await stream.close()
  })
}

function expected (bytes: Uint8Array): string {
  let sum = 0
  for (const b of bytes) sum = (sum + b) % 65521
  return `${bytes.byteLength}:${sum}`
}

async function echoSession (from: Libp2p, to: Libp2p, sizes: number[]): Promise<void> {
  const stream = await from.dialProtocol(to.getMultiaddrs()[0]!, PROTOCOL)
  const answers = lp.decode(stream)[Symbol.asyncIterator]()
  for (const [i, size] of sizes.entries()) {
    const bytes = new Uint8Array(size).map((_, k) => (k * 31 + i) & 0xff)
    stream.send(lp.encode.single(bytes, { maxDataLength: MAX }))
    const next = await answers.next()
    assert.equal(new TextDecoder().decode((next.value as { subarray: () => Uint8Array }).subarray()), expected(bytes))
  }
  await stream.close()
}

for (const cipher of availableCiphers()) {
  test(`pnet v1 interoperates with @libp2p/pnet both ways (${cipher})`, async (t) => {
    const dir = await tempDir(t)
    const ours = await node(t, dir, 'ours', cipher)
    const reference = await referenceNode(t)
    await serveEcho(ours.libp2p)
    await serveEcho(reference)
    const sizes = [1, 100, 3 * 1024 * 1024 + 17, 65, 64 * 1024, 5]
    await echoSession(ours.libp2p, reference, sizes)
    await echoSession(reference, ours.libp2p, sizes)
  })

  test(`a large transfer followed by many small messages in both directions keeps working (${cipher})`, async (t) => {
    const dir = await tempDir(t)
    const a = await node(t, dir, 'a', cipher)
    const b = await node(t, dir, 'b', cipher)
    await serveEcho(b.libp2p)
    // one write batch of 8 MiB: with the released pnet it grew the shared cipher memory
    await echoSession(a.libp2p, b.libp2p, [8 * 1024 * 1024, ...Array.from({ length: 1500 }, (_, i) => i % 50 + 1)])
  })
}

test('the two XSalsa20 implementations give the same keystream', { skip: availableCiphers().length < 2 }, async (t) => {
  const dir = await tempDir(t)
  const a = await node(t, dir, 'a', 'sodium')
  const b = await node(t, dir, 'b', 'wasm')
  await serveEcho(a.libp2p)
  await serveEcho(b.libp2p)
  await echoSession(a.libp2p, b.libp2p, [1, 2 * 1024 * 1024 + 3, 77])
  await echoSession(b.libp2p, a.libp2p, [1, 2 * 1024 * 1024 + 3, 77])
})

test('a node with another network key is refused, ours or the reference implementation', async (t) => {
  const dir = await tempDir(t)
  const ours = await node(t, dir, 'ours')
  const stranger = await node(t, dir, 'stranger', undefined, new Uint8Array(32).fill(7))
  const referenceStranger = await referenceNode(t, new Uint8Array(32).fill(7))
  await serveEcho(ours.libp2p)
  for (const from of [stranger.libp2p, referenceStranger]) {
    await assert.rejects(from.dialProtocol(multiaddr(ours.multiaddrs()[0]!), PROTOCOL, { signal: AbortSignal.timeout(3000) }))
  }
  await assert.rejects(ours.libp2p.dial(referenceStranger.getMultiaddrs()[0]!, { signal: AbortSignal.timeout(3000) }))
  assert.deepEqual(ours.connectedPeers(), [])
})

test('closed connections give their cipher slots back (WebAssembly fallback)', async (t) => {
  const dir = await tempDir(t)
  const a = await node(t, dir, 'a', 'wasm')
  const b = await node(t, dir, 'b', 'wasm')
  // The xsalsa20 package hands out 64-byte slots of one shared pool; a fresh cipher's slot shows
  // whether the pool grew.
  const xsalsa20 = createRequire(import.meta.url)('xsalsa20') as (nonce: Uint8Array, key: Uint8Array) => { _xor: { _pointer: number }; finalize: () => void }
  const probe = (): number => {
    const c = xsalsa20(new Uint8Array(24), new Uint8Array(32))
    const pointer = c._xor._pointer
    c.finalize()
    return pointer
  }
  const before = probe()
  // (libp2p refuses more than 5 inbound connections per second from one host)
  for (let i = 0; i < 12; i++) {
    const conn = await a.libp2p.dial(multiaddr(b.multiaddrs()[0]!))
    await conn.close()
    await new Promise((resolve) => setTimeout(resolve, 250))
  }
  assert.equal(probe(), before, '24 connection ends left no cipher slot behind')
})
