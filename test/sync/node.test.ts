// The sync node: per-device peer identity, the owner's private network, redialling.
import { test } from 'node:test'
import assert from 'node:assert/strict'
import { stat } from 'node:fs/promises'
import { join } from 'node:path'
import { multiaddr } from '@multiformats/multiaddr'
import { isHearthError } from '../../src/errors.js'
import { silentLogger } from '../../src/log.js'
import { privateNetworkKey } from '../../src/protocol/keys.js'
import { createSyncNode } from '../../src/sync/node.js'
import { tempDir } from '../support/tmp.js'
import { OTHER_OWNER_KEY, instant, startDevice, testOwner, waitFor } from '../support/sync-device.js'

test('the peer key is created once per device (0600) and reused; it does not come from the master key', async (t) => {
  const dir = await tempDir(t)
  const owner = await testOwner()
  const keyFile = join(dir, 'identity', 'peer.key')
  const make = async (file: string): Promise<Awaited<ReturnType<typeof createSyncNode>>> =>
    await createSyncNode({ networkKey: privateNetworkKey(owner.masterKey), peerKeyFile: file, listen: ['/ip4/127.0.0.1/tcp/0'], logger: silentLogger() })
  const first = await make(keyFile)
  const again = await make(keyFile)
  const otherDevice = await make(join(dir, 'other', 'peer.key'))
  t.after(async () => { for (const n of [first, again, otherDevice]) await n.stop() })
  assert.equal(again.peerId, first.peerId)
  assert.notEqual(otherDevice.peerId, first.peerId, 'two devices of one owner have two peer ids')
  assert.equal((await stat(keyFile)).mode & 0o777, 0o600)
})

test('a device of another owner cannot open a connection and learns nothing', async (t) => {
  const dir = await tempDir(t)
  const owner = await testOwner()
  const stranger = await testOwner(OTHER_OWNER_KEY)
  const a = await startDevice({ dir: join(dir, 'a'), owner })
  t.after(async () => { await a.stop() })
  for (let i = 0; i < 5; i++) await a.writeLocal('instagram.profile', { username: `u${i}` }, instant(i))
  const x = await startDevice({ dir: join(dir, 'x'), owner: stranger, bootstrapPeers: a.addrs() })
  t.after(async () => { await x.stop() })

  await assert.rejects(x.node.libp2p.dial(multiaddr(a.addrs()[0]!)))
  // let the stranger's redial loop try a few more times
  await new Promise((resolve) => setTimeout(resolve, 1500))
  assert.deepEqual(x.node.connectedPeers(), [])
  assert.deepEqual(a.node.connectedPeers(), [])
  assert.equal(await x.index.count(), 0)
  assert.equal(x.engine.stats().bytesReceived, 0)
  assert.equal(a.engine.stats().messagesReceived, 0, 'no sync message reached A')
  assert.deepEqual(a.gets, [], 'A read no ciphertext for anyone')
  assert.deepEqual(await a.engine.peers(), [])
  assert.ok((await x.engine.peers()).every((p) => !p.connected && p.lastSyncAt === null))
})

test('a configured peer is redialled after it restarts, and what it wrote meanwhile arrives', async (t) => {
  const dir = await tempDir(t)
  const owner = await testOwner()
  const a1 = await startDevice({ dir: join(dir, 'a'), owner })
  const port = multiaddr(a1.addrs()[0]!).getComponents().find((c) => c.name === 'tcp')?.value
  const b = await startDevice({ dir: join(dir, 'b'), owner, bootstrapPeers: a1.addrs() })
  t.after(async () => { await b.stop() })
  await a1.writeLocal('instagram.profile', { username: 'before' }, instant(1))
  await waitFor('B to get the first file', async () => (await b.index.count()) === 1)

  await a1.stop()
  await waitFor('B to notice', () => b.node.connectedPeers().length === 0)
  const a2 = await startDevice({ dir: join(dir, 'a'), owner, listen: [`/ip4/127.0.0.1/tcp/${port}`] })
  t.after(async () => { await a2.stop() })
  await a2.writeLocal('instagram.profile', { username: 'after' }, instant(2))
  await waitFor('B to reconnect and get the second file', async () => (await b.index.count()) === 2)
  assert.deepEqual(b.node.connectedPeers(), [a2.node.peerId])
})

test('a listen address already in use fails start with a clear configuration error', async (t) => {
  const dir = await tempDir(t)
  const owner = await testOwner()
  const make = async (name: string, listen: string[]): Promise<Awaited<ReturnType<typeof createSyncNode>>> => {
    const n = await createSyncNode({ networkKey: privateNetworkKey(owner.masterKey), peerKeyFile: join(dir, name), listen, logger: silentLogger() })
    t.after(async () => { await n.stop() })
    return n
  }
  const first = await make('a.key', ['/ip4/127.0.0.1/tcp/0'])
  await first.start()
  const port = multiaddr(first.multiaddrs()[0]!).getComponents().find((c) => c.name === 'tcp')?.value
  const second = await make('b.key', [`/ip4/127.0.0.1/tcp/${port}`])
  await assert.rejects(second.start(), (err) => isHearthError(err, 'CONFIG_INVALID') && /sync/.test((err as Error).message))
})
