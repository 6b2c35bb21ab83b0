// 10,000 × 1 KB files pinned on a 3-peer IPFS Cluster (issue 27): the daemon on its own Kubo, each
// cluster peer with its own Kubo, the cluster reached through its Pinning Service API.
//   1. POST throughput without any pinning service (baseline), on a fresh home;
//   2. the same POSTs with the cluster configured: POST throughput while pinning runs, then the
//      time from the last POST until every CID is `pinned`, and the daemon's CPU over that time.
// Budgets from the issue: all pinned ≤ 60 s after the last POST; POST throughput ≤ 10 % lower.
// Run alone on a quiet machine: node --import tsx bench/pinning.ts [--files N] [--clients N]
import '../src/polyfill.js'
import { mkdtemp, rm, writeFile } from 'node:fs/promises'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { parseArgs } from 'node:util'
import { launchDaemon, type RunningDaemon } from './support/daemon.js'
import { cpuMs } from './support/cpu-time.js'
import { postBurst } from './support/post-burst.js'
import { startIpfsDaemon } from '../test/support/ipfs-daemon.js'
import { startIpfsCluster } from '../test/support/ipfs-cluster.js'

const { values } = parseArgs({ options: { files: { type: 'string', default: '10000' }, clients: { type: 'string', default: '8' } } })
const FILES = Number(values.files)
const CLIENTS = Number(values.clients)
const BODY = JSON.stringify({ username: 'x'.repeat(1000) }) // about 1 KB of data per file

const cleanups: Array<() => Promise<void> | void> = []
const context = { after: (fn: () => Promise<void> | void) => { cleanups.push(fn) } }

async function home (config: object): Promise<string> {
  const dir = await mkdtemp(join(tmpdir(), 'hearth-bench-pinning-'))
  cleanups.push(async () => { await rm(dir, { recursive: true, force: true }) })
  await writeFile(join(dir, 'config.json'), JSON.stringify(config))
  return dir
}

async function daemonOn (dir: string, kuboUrl: string): Promise<RunningDaemon> {
  const d = await launchDaemon({ run: 'sources', home: dir, env: { HEARTH_SYNC: 'false', HEARTH_STORAGE: 'kubo', HEARTH_KUBO_URL: kuboUrl }, until: 'ready' })
  cleanups.push(async () => { await d.stop() })
  return d
}

try {
  const cluster = await startIpfsCluster(context as never, 3)
  const baselineKubo = await startIpfsDaemon(context as never)
  const baseline = await daemonOn(await home({}), baselineKubo.apiUrl)
  const plain = await postBurst(baseline, '/v1/data/instagram.profile', BODY, CLIENTS, FILES)
  await baseline.stop()

  const device = await startIpfsDaemon(context as never)
  const dir = await home({})
  const peer = cluster.peers[0]
  await writeFile(join(dir, 'config.json'), JSON.stringify({
    pinning: { pollIntervalMs: 500, sampleRate: 0.01, services: [{ name: 'cluster', endpoint: peer.pinsvcUrl, tokenFile: await cluster.tokenFile(dir), gateway: peer.kubo.gatewayUrl }] }
  }))
  const d = await daemonOn(dir, device.apiUrl)
  const pinning = await postBurst(d, '/v1/data/instagram.profile', BODY, CLIENTS, FILES)
  const lastPost = performance.now()
  const cpuBefore = await cpuMs(d.pid)
  let counts: Record<string, number> = {}
  while (true) {
    const status = await d.json('GET', '/v1/status')
    counts = status.pinning.services[0].counts
    if (counts.pinned >= FILES) break
    if (performance.now() - lastPost > 30 * 60_000) throw new Error(`not all pinned after 30 minutes: ${JSON.stringify(counts)}`)
    await new Promise((resolve) => setTimeout(resolve, 250))
  }
  const drainMs = performance.now() - lastPost
  const cpu = await cpuMs(d.pid) - cpuBefore
  console.log(`${FILES} × 1 KB POSTs on the kubo backend, ${CLIENTS} clients; 3-peer IPFS Cluster (v1.1.0, each peer with its own Kubo 0.43.1)`)
  console.table([
    { run: 'no pinning service', 'POST/s': plain.perSecond.toFixed(0), 'p50 ms': plain.p50.toFixed(1), 'p99 ms': plain.p99.toFixed(1) },
    { run: 'pinning to the cluster', 'POST/s': pinning.perSecond.toFixed(0), 'p50 ms': pinning.p50.toFixed(1), 'p99 ms': pinning.p99.toFixed(1) }
  ])
  console.log(`POST throughput while pinning: ${(100 * (pinning.perSecond / plain.perSecond - 1)).toFixed(1)} % (budget ≥ -10 %)`)
  console.log(`last POST → all ${FILES} pinned: ${(drainMs / 1000).toFixed(1)} s (budget ≤ 60 s); daemon CPU meanwhile ${(cpu / 1000).toFixed(1)} s (${(100 * cpu / drainMs).toFixed(0)} % of one core)`)
} finally {
  for (const fn of cleanups.reverse()) await fn()
}
