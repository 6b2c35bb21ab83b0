// Adding a device: an export of only what another device needs, `init --from` it, a peer key per
// device, and a copied peer key detected, replaced and reported.
import assert from 'node:assert/strict'
import { cp, readFile, stat, writeFile } from 'node:fs/promises'
import { join } from 'node:path'
import { test } from 'node:test'
import { EXIT } from '../../src/cli/command.js'
import { homeLayout } from '../../src/home.js'
import { identityFile } from '../../src/identity/identity.js'
import { deviceStamp } from '../../src/identity/device.js'
import { silentLogger } from '../../src/log.js'
import { createSyncNode, loadOrCreatePeerKey } from '../../src/sync/node.js'
import { peerIdFromPrivateKey } from '@libp2p/peer-id'
import { runCli, startDaemonProcess } from '../support/daemon.js'
import { tempDir } from '../support/tmp.js'

const PRIVATE_KEY = '0x0123456789abcdef0123456789abcdef0123456789abcdef0123456789abcdef'
const OWNER = '0xFCAd0B19bB29D4674531d6f115237E16AfCE377c'

test('identity export --for-device carries only the owner and master signature; init --from makes the same owner', async (t) => {
  const a = homeLayout(await tempDir(t))
  const b = homeLayout(await tempDir(t))
  const keyFile = join(a.root, 'key')
  await writeFile(keyFile, PRIVATE_KEY)
  assert.equal((await runCli(a, ['init', '--private-key-file', keyFile])).code, EXIT.OK)

  const out = join(a.root, 'for-laptop.json')
  assert.equal((await runCli(a, ['identity', 'export', '--for-device'])).code, EXIT.USAGE, 'never to the terminal')
  const exp = await runCli(a, ['identity', 'export', '--for-device', '--out', out])
  assert.equal(exp.code, EXIT.OK, exp.stderr)
  assert.match(exp.stdout, /hearth init --from /)
  assert.equal((await stat(out)).mode & 0o777, 0o600)
  const file = JSON.parse(await readFile(out, 'utf8'))
  assert.deepEqual(Object.keys(file).sort(), ['exportedAt', 'kind', 'ownerAddress', 'signature', 'version'])
  assert.ok(!JSON.stringify(file).includes(PRIVATE_KEY.slice(2)), 'the wallet key stays on the first device')
  assert.equal((await runCli(a, ['identity', 'export', '--for-device', '--out', out])).code, EXIT.FAILURE, 'an existing file is not replaced')

  const init = await runCli(b, ['init', '--from', out])
  assert.equal(init.code, EXIT.OK, init.stderr)
  assert.match(init.stdout, /its own peer id/)
  assert.equal((await runCli(b, ['whoami'])).stdout, OWNER + '\n')
  const stored = JSON.parse(await readFile(identityFile(b), 'utf8'))
  assert.equal(stored.kind, 'signature')
  assert.equal(stored.privateKey, undefined)

  const c = homeLayout(await tempDir(t))
  await writeFile(join(c.root, 'bad.json'), JSON.stringify({ ...file, ownerAddress: '0x' + '1'.repeat(40) }))
  const forged = await runCli(c, ['init', '--from', join(c.root, 'bad.json')])
  assert.equal(forged.code, EXIT.FAILURE)
  assert.match(forged.stderr, /^error INVALID_IDENTITY: .*does not belong to 0x1111/)
  await writeFile(join(c.root, 'other.json'), '{"privateKey": "0xabc"}')
  assert.match((await runCli(c, ['init', '--from', join(c.root, 'other.json')])).stderr, /^error INVALID_IDENTITY: .*not a device export/)
})

test('a peer key copied from another device is set aside and replaced; a configured address with our own peer id is reported', async (t) => {
  const a = await tempDir(t)
  const c = await tempDir(t)
  const [stampA, stampC] = [await deviceStamp(a), await deviceStamp(c)]
  assert.notEqual(stampA, stampC, 'a stamp is per machine and home')
  const keyA = await loadOrCreatePeerKey(join(a, 'peer-key'), stampA)
  const again = await loadOrCreatePeerKey(join(a, 'peer-key'), stampA, { detail: true })
  assert.equal(again.replaced, null)
  assert.equal(peerIdFromPrivateKey(again.key).toString(), peerIdFromPrivateKey(keyA).toString(), 'stable on its own device')

  await cp(join(a, 'peer-key'), join(c, 'peer-key'))
  await cp(join(a, 'peer-key.device'), join(c, 'peer-key.device'))
  const copied = await loadOrCreatePeerKey(join(c, 'peer-key'), stampC, { detail: true })
  assert.deepEqual(copied.replaced, { oldPeerId: peerIdFromPrivateKey(keyA).toString() })
  assert.notEqual(peerIdFromPrivateKey(copied.key).toString(), peerIdFromPrivateKey(keyA).toString())
  assert.deepEqual(await readFile(join(c, 'peer-key.copied')), await readFile(join(a, 'peer-key')))

  const self = peerIdFromPrivateKey(keyA).toString()
  const node = await createSyncNode({
    networkKey: new Uint8Array(32).fill(7),
    peerKeyFile: join(a, 'peer-key'),
    deviceStamp: stampA,
    listen: ['/ip4/127.0.0.1/tcp/0'],
    bootstrapPeers: [`/ip4/192.0.2.9/tcp/4011/p2p/${self}`],
    logger: silentLogger()
  })
  assert.equal(node.peerId, self)
  assert.match(node.problems().join('\n'), /^duplicate peer id: \/ip4\/192\.0\.2\.9\/tcp\/4011\/p2p\/12D3\S+ names this device's own peer id/)
})

test('a home whose identity/ folder was copied whole gets its own peer id and says why', async (t) => {
  const env = { HEARTH_SYNC: 'true', HEARTH_SYNC_LISTEN: '/ip4/127.0.0.1/tcp/0' }
  const first = await startDaemonProcess(t, { env })
  const firstPeer = (await first.request({ path: '/v1/peers' })).json.peerId as string
  assert.equal(await first.stop(), 0)
  const copy = homeLayout(await tempDir(t, 'hearth-home-'))
  await cp(first.home.identity, copy.identity, { recursive: true })
  const second = await startDaemonProcess(t, { home: copy.root, env })
  const peers = await runCli(copy, ['peers'])
  assert.equal(peers.code, EXIT.OK, peers.stderr)
  assert.doesNotMatch(peers.stdout, new RegExp(`^this device ${firstPeer}`))
  assert.match(peers.stdout, new RegExp(`^PROBLEM: duplicate peer id: .*was made on another device \\(peer ${firstPeer};`, 'm'))
  assert.equal((await runCli(copy, ['whoami'])).stdout, (await runCli(first.home, ['whoami'])).stdout, 'same owner')
  assert.equal(await second.stop(), 0)
})
