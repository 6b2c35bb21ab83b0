// A sync device in its own process, for tests that kill a device mid-transfer (SIGKILL) or run
// devices in another network namespace. Usage:
//   node --import tsx --import ./src/polyfill.ts test/support/sync-peer.ts '<json config>'
// config: { dir, ownerKey, peers?: string[], listen?: string[], mdns?: boolean, mdnsIntervalMs?: number,
//           files?: number (write this many small files on start) }
// It prints one JSON object per line on stdout: {event:'ready', peerId, addrs}, then
// {event:'count', count, peers} every 100 ms. SIGTERM stops it cleanly.
import '../../src/polyfill.js'
import { createLogger, silentLogger } from '../../src/log.js'
import { instant, startDevice, testOwner } from './sync-device.js'

interface PeerConfig {
  dir: string
  ownerKey: string
  peers?: string[]
  listen?: string[]
  mdns?: boolean
  mdnsIntervalMs?: number
  files?: number
}

const config = JSON.parse(process.argv[2] ?? '{}') as PeerConfig
const print = (value: unknown): void => { process.stdout.write(JSON.stringify(value) + '\n') }

const device = await startDevice({
  dir: config.dir,
  // HEARTH_SYNC_PEER_LOG=debug shows the child's sync log on stderr (the spawning test quotes it on failure)
  logger: process.env.HEARTH_SYNC_PEER_LOG !== undefined ? createLogger({ level: process.env.HEARTH_SYNC_PEER_LOG }) : silentLogger(),
  owner: await testOwner(config.ownerKey),
  bootstrapPeers: config.peers ?? [],
  ...(config.listen !== undefined ? { listen: config.listen } : {}),
  ...(config.mdns !== undefined ? { mdns: config.mdns } : {}),
  ...(config.mdnsIntervalMs !== undefined ? { mdnsIntervalMs: config.mdnsIntervalMs } : {})
})
for (let i = 0; i < (config.files ?? 0); i++) {
  await device.writeLocal('instagram.profile', { username: `${device.node.peerId}-${i}` }, instant(i, Date.UTC(2026, 0, 1) + Math.floor(Math.random() * 1e9) * 1000))
}
print({ event: 'ready', peerId: device.node.peerId, addrs: device.addrs() })

const timer = setInterval(() => {
  void (async () => {
    print({ event: 'count', count: await device.index.count(), peers: device.node.connectedPeers() })
  })()
}, 100)

process.on('SIGTERM', () => {
  clearInterval(timer)
  device.stop().then(() => process.exit(0), () => process.exit(1))
})
