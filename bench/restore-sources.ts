// Restore's remote sources side by side, in one run: fetching ciphertexts a device lacks from
// another device of the owner over sync (real libp2p on loopback: TCP + pnet + Noise + Yamux, the
// device's real engine serving) and from a trustless IPFS gateway (test/support/gateway-sim.ts on
// loopback, serving the same device's real block files), each verified against its CID and
// stored and pinned in a fresh embedded store; the floor is a verified read of the same content
// from the origin's own storage. The device is asked on one session kept open between fetches
// (the default) and, for comparison, on a new session (dial + greeting) per file.
//   sets: 200 small files (1 KB of data each) and 3 × 10 MB files (--quick: 50 and 1)
// Prints files/s, ciphertext MB/s and ms per file for each source and set.
// Run: node --import tsx bench/restore-sources.ts [--quick]
import '../src/polyfill.js'
import { randomBytes } from 'node:crypto'
import { mkdtemp, rm } from 'node:fs/promises'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { openDatabase, openKv } from '../src/db/database.js'
import { openFileIndex } from '../src/db/file-index.js'
import { silentLogger } from '../src/log.js'
import { privateNetworkKey } from '../src/protocol/keys.js'
import { createCiphertextFetcher, type BlockSource } from '../src/storage/block-sources.js'
import { createEmbeddedStorage } from '../src/storage/embedded.js'
import { createGatewaySource } from '../src/storage/gateway-source.js'
import { withVerifiedReads } from '../src/storage/verified-reads.js'
import { createDeviceSources } from '../src/sync/device-source.js'
import { createSyncNode } from '../src/sync/node.js'
import { syncState } from '../src/sync/state.js'
import { startGatewaySim } from '../test/support/gateway-sim.js'
import { instant, startDevice, testOwner, waitFor } from '../test/support/sync-device.js'

const quick = process.argv.includes('--quick')
const root = await mkdtemp(join(tmpdir(), 'hearth-bench-restore-'))
const owner = await testOwner()
const cleanup: Array<() => Promise<void>> = []
const t = { after: (fn: () => Promise<void>) => { cleanup.push(fn) } }

interface Row { set: string; source: string; files: number; seconds: number; filesPerSec: number; mbPerSec: number; msPerFile: number }
const rows: Row[] = []

try {
  const origin = await startDevice({ dir: join(root, 'origin'), owner })
  cleanup.push(async () => { await origin.stop() })
  const sets: Array<{ name: string; cids: string[]; bytes: number }> = []
  for (const [name, count, dataBytes] of [['small (1 KB)', quick ? 50 : 200, 1024], ['large (10 MB)', quick ? 1 : 3, 10 * 1024 * 1024]] as const) {
    const cids: string[] = []
    let bytes = 0
    for (let i = 0; i < count; i++) {
      const r = await origin.writeLocal('instagram.profile', { username: `u${i}`, blob: randomBytes(Math.floor(dataBytes * 3 / 4)).toString('base64') }, instant(i + (dataBytes > 1024 ? 10_000 : 0)))
      cids.push(r.cid!)
      bytes += r.encryptedSize ?? 0
    }
    sets.push({ name, cids, bytes })
  }
  // the gateway serves a stopped copy of the origin's ciphertexts (the running origin holds its LevelDB)
  const served = await createEmbeddedStorage({ blocksDir: join(root, 'gateway', 'blocks'), datastoreDir: join(root, 'gateway', 'datastore') })
  for (const set of sets) for (const cid of set.cids) await served.add(await origin.storage.get(cid))
  await served.stop()
  const gateway = await startGatewaySim(t, join(root, 'gateway', 'blocks'))

  let n = 0
  /** A fresh restoring device (index, embedded storage, a sync node connected to the origin) fetching from `pick`'s sources. */
  async function restorer (pick: (devices: BlockSource[]) => BlockSource[], sessionIdleMs?: number): Promise<(cid: string) => Promise<void>> {
    const dir = join(root, `restorer-${n++}`)
    const db = await openDatabase(join(dir, 'index'))
    const index = await openFileIndex({ db })
    const storage = withVerifiedReads(await createEmbeddedStorage({ blocksDir: join(dir, 'blocks'), datastoreDir: join(dir, 'datastore') }))
    const node = await createSyncNode({ networkKey: privateNetworkKey(owner.masterKey), peerKeyFile: join(dir, 'peer.key'), listen: ['/ip4/127.0.0.1/tcp/0'], mdns: false, bootstrapPeers: origin.addrs(), logger: silentLogger() })
    await node.start()
    cleanup.push(async () => { await node.stop(); await storage.stop(); await db.close() })
    await waitFor('connected to the origin', () => node.connectedPeers().length > 0)
    const devices = createDeviceSources({ node, ownerAddress: owner.ownerAddress, index, state: syncState(openKv(db, 'sync')), readTimeoutMs: 30_000, ...(sessionIdleMs !== undefined ? { sessionIdleMs } : {}) })
    cleanup.push(async () => { await devices.close() })
    const sources = pick(devices.list())
    const fetcher = createCiphertextFetcher({ storage, remote: () => sources, maxBytes: 64 * 1024 * 1024, sourceTimeoutMs: 300_000, logger: silentLogger() })
    return async (cid) => {
      if ((await fetcher.fetch(cid)).source === 'local storage') throw new Error(`${cid} was already here`)
    }
  }

  for (const set of sets) {
    const variants: Array<{ source: string; run: (cid: string) => Promise<unknown> }> = [
      { source: 'floor: verified local read', run: async (cid) => await origin.storage.get(cid) },
      { source: 'device over sync, one session per file', run: await restorer((devices) => devices, 0) },
      { source: 'device over sync, session kept (default)', run: await restorer((devices) => devices) },
      { source: 'gateway (raw blocks)', run: await restorer(() => [createGatewaySource({ baseUrl: gateway.url, requestTimeoutMs: 30_000 })]) }
    ]
    for (const v of variants) {
      const started = performance.now()
      for (const cid of set.cids) await v.run(cid)
      const seconds = (performance.now() - started) / 1000
      rows.push({ set: set.name, source: v.source, files: set.cids.length, seconds, filesPerSec: set.cids.length / seconds, mbPerSec: set.bytes / 1e6 / seconds, msPerFile: 1000 * seconds / set.cids.length })
    }
  }

  console.log('| set | source | files | seconds | files/s | ciphertext MB/s | ms per file |')
  console.log('|---|---|---:|---:|---:|---:|---:|')
  for (const r of rows) console.log(`| ${r.set} | ${r.source} | ${r.files} | ${r.seconds.toFixed(2)} | ${r.filesPerSec.toFixed(1)} | ${r.mbPerSec.toFixed(1)} | ${r.msPerFile.toFixed(1)} |`)
} finally {
  for (const fn of cleanup.reverse()) await fn().catch(() => {})
  await rm(root, { recursive: true, force: true })
}
