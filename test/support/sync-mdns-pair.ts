// Two devices with mDNS and no configured peers, in this process. Only ever run inside a network
// namespace made for the test (see test/sync/mdns.test.ts): mDNS must never touch a real interface.
// Usage: sync-mdns-pair.ts '{"dir": "...", "ownerKey": "0x...", "files": 5}'
// Prints {event:'synced', count, discovered: true} when the second device holds the first one's
// files, or {event:'failed', reason} after the deadline; then exits.
import '../../src/polyfill.js'
import { join } from 'node:path'
import { instant, startDevice, testOwner, waitFor } from './sync-device.js'

const config = JSON.parse(process.argv[2] ?? '{}') as { dir: string; ownerKey: string; files: number }
const print = (value: unknown): void => { process.stdout.write(JSON.stringify(value) + '\n') }
const owner = await testOwner(config.ownerKey)
const options = { owner, mdns: true, mdnsIntervalMs: 500, bootstrapPeers: [] }
const first = await startDevice({ dir: join(config.dir, 'm1'), ...options })
const second = await startDevice({ dir: join(config.dir, 'm2'), ...options })
try {
  for (let i = 0; i < config.files; i++) await first.writeLocal('instagram.profile', { username: `m${i}` }, instant(i))
  await waitFor('mDNS discovery and sync', async () => (await second.index.count()) === config.files, 30_000)
  print({
    event: 'synced',
    count: await second.index.count(),
    discovered: second.node.keptAddresses().length === 0 && second.node.connectedPeers().includes(first.node.peerId)
  })
} catch (err) {
  print({ event: 'failed', reason: (err as Error).message })
} finally {
  await second.stop()
  await first.stop()
}
process.exit(0)
