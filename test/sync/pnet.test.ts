// The private-network layer survives what crashes @libp2p/pnet 3.0.27 as released (see
// src/sync/pnet.ts): a large transfer followed by ordinary traffic, and many connections over time.
import { test } from 'node:test'
import assert from 'node:assert/strict'
import { createRequire } from 'node:module'
import { join } from 'node:path'
import { multiaddr } from '@multiformats/multiaddr'
import * as lp from 'it-length-prefixed'
import { silentLogger } from '../../src/log.js'
import { createSyncNode, type SyncNode } from '../../src/sync/node.js'
import { tempDir } from '../support/tmp.js'

const PROTOCOL = '/hearth-test/echo/1.0.0'
const networkKey = new Uint8Array(32).fill(42)

async function node (t: { after: (fn: () => Promise<void>) => void }, dir: string, name: string): Promise<SyncNode> {
  const n = await createSyncNode({ networkKey, peerKeyFile: join(dir, `${name}.key`), listen: ['/ip4/127.0.0.1/tcp/0'], logger: silentLogger() })
  await n.start()
  t.after(async () => { await n.stop() })
  return n
}

test('a large transfer followed by many small messages in both directions keeps working', async (t) => {
  const dir = await tempDir(t)
  const a = await node(t, dir, 'a')
  const b = await node(t, dir, 'b')
  // b answers every frame with its length
  await b.libp2p.handle(PROTOCOL, async (stream) => {
    for await (const frame of lp.decode(stream, { maxDataLength: 64 * 1024 * 1024 })) {
      stream.send(lp.encode.single(new TextEncoder().encode(String(frame.byteLength))))
    }
    await stream.close()
  })
  const stream = await a.libp2p.dialProtocol(multiaddr(b.multiaddrs()[0]!), PROTOCOL)
  const answers = lp.decode(stream)[Symbol.asyncIterator]()
  const ask = async (bytes: Uint8Array): Promise<string> => {
    stream.send(lp.encode.single(bytes, { maxDataLength: 64 * 1024 * 1024 }))
    const next = await answers.next()
    return new TextDecoder().decode((next.value as { subarray: () => Uint8Array }).subarray())
  }
  // one write batch of 8 MiB: with the released pnet it grows the shared cipher memory
  assert.equal(await ask(new Uint8Array(8 * 1024 * 1024).fill(7)), String(8 * 1024 * 1024))
  for (let i = 0; i < 1500; i++) assert.equal(await ask(new Uint8Array(i % 50 + 1)), String(i % 50 + 1))
  await stream.close()
})

test('closed connections give their cipher slots back', async (t) => {
  const dir = await tempDir(t)
  const a = await node(t, dir, 'a')
  const b = await node(t, dir, 'b')
  // The xsalsa20 package (used by @libp2p/pnet) hands out 64-byte slots of one shared pool; a
  // fresh cipher's slot shows whether the pool grew.
  const xsalsa20 = createRequire(import.meta.resolve('@libp2p/pnet'))('xsalsa20') as (nonce: Uint8Array, key: Uint8Array) => { _xor: { _pointer: number }; finalize: () => void }
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
