// 10,000 × 1 KB files pinned on a 3-peer IPFS Cluster (issue 27): the daemon on its own Kubo, each
// cluster peer with its own Kubo, the cluster reached through its Pinning Service API. Interleaved
// repetitions (the order alternates each rep, so warm-up and drift fall on both sides), each on a
// fresh home and a fresh device Kubo:
//   - POSTs with no pinning service (baseline);
//   - the same POSTs with the cluster configured: POST throughput while pinning runs, then the time
//     from the last POST until every CID is `pinned`, and the daemon's CPU over that time.
// Budgets from the issue: all pinned ≤ 60 s after the last POST; POST throughput ≤ 10 % lower.
// Run alone on a quiet machine: node --import tsx bench/pinning.ts [--files N] [--clients N] [--reps N]
//   [--concurrency N] (pinning.concurrency) [--first-rep N] (continue the alternation of an earlier run)
import '../src/polyfill.js'
import { mkdtemp, rm, writeFile } from 'node:fs/promises'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { parseArgs } from 'node:util'
import { launchDaemon, type RunningDaemon } from './support/daemon.js'
import { cpuMs } from './support/cpu-time.js'
import { postBurst, type PostBurst } from './support/post-burst.js'
import { startIpfsDaemon } from '../test/support/ipfs-daemon.js'
import { startIpfsCluster, type IpfsCluster } from '../test/support/ipfs-cluster.js'

const { values } = parseArgs({ options: { files: { type: 'string', default: '10000' }, clients: { type: 'string', default: '8' }, reps: { type: 'string', default: '3' }, concurrency: { type: 'string', default: '8' }, 'first-rep': { type: 'string', default: '0' } } })
const FILES = Number(values.files)
const CLIENTS = Number(values.clients)
const REPS = Number(values.reps)
const BODY = JSON.stringify({ username: 'x'.repeat(1000) }) // about 1 KB of data per file

type Cleanup = () => Promise<void> | void
/** A scope of cleanups (a test context's `after`), run last-in first-out. */
function scope (): { after: (fn: Cleanup) => void, close: () => Promise<void> } {
  const fns: Cleanup[] = []
  return { after: (fn) => { fns.push(fn) }, close: async () => { for (const fn of fns.splice(0).reverse()) await fn() } }
}

interface Run { burst: PostBurst, drainMs?: number, cpuMs?: number, clusterCpuMs?: number }

/** One run on a fresh home and a fresh device Kubo, with or without the cluster as pinning service. */
async function run (cluster: IpfsCluster | null): Promise<Run> {
  const s = scope()
  try {
    const device = await startIpfsDaemon(s as never)
    const dir = await mkdtemp(join(tmpdir(), 'hearth-bench-pinning-'))
    s.after(async () => { await rm(dir, { recursive: true, force: true }) })
    const peer = cluster?.peers[0]
    const pinning = cluster === null || peer === undefined
      ? {}
      : { pinning: { pollIntervalMs: 500, concurrency: Number(values.concurrency), sampleRate: 0.01, services: [{ name: 'cluster', endpoint: peer.pinsvcUrl, tokenFile: await cluster.tokenFile(dir), gateway: peer.kubo.gatewayUrl }] } }
    await writeFile(join(dir, 'config.json'), JSON.stringify(pinning))
    const d = await launchDaemon({ run: 'sources', home: dir, env: { HEARTH_SYNC: 'false', HEARTH_STORAGE: 'kubo', HEARTH_KUBO_URL: device.apiUrl }, until: 'ready' })
    s.after(async () => { await d.stop() })
    const clusterBefore = cluster === null ? 0 : await clusterCpuMs(cluster)
    const burst = await postBurst(d, '/v1/data/instagram.profile', BODY, CLIENTS, FILES)
    if (cluster === null) return { burst }
    return { burst, ...await drain(d), clusterCpuMs: await clusterCpuMs(cluster) - clusterBefore }
  } finally {
    await s.close()
  }
}

/** Time and daemon CPU from now (the last POST) until every file is pinned at the cluster. */
async function drain (d: RunningDaemon): Promise<{ drainMs: number, cpuMs: number }> {
  const lastPost = performance.now()
  const cpuBefore = await cpuMs(d.pid)
  for (;;) {
    const status = await d.json('GET', '/v1/status')
    const counts = status.pinning.services[0].counts as Record<string, number>
    if (counts.pinned >= FILES) break
    if (performance.now() - lastPost > 10 * 60_000) throw new Error(`not all pinned after 10 minutes: ${JSON.stringify(counts)}`)
    await new Promise((resolve) => setTimeout(resolve, 250))
  }
  const drainMs = performance.now() - lastPost
  return { drainMs, cpuMs: await cpuMs(d.pid) - cpuBefore }
}

/** CPU of the cluster's processes (its peers and their Kubos), the service's share of the machine. */
async function clusterCpuMs (cluster: IpfsCluster): Promise<number> {
  let sum = 0
  for (const p of cluster.peers) sum += await cpuMs(p.pid) + await cpuMs(p.kubo.pid)
  return sum
}

const median = (xs: number[]): number => [...xs].sort((a, b) => a - b)[Math.floor((xs.length - 1) / 2)]!
const spread = (xs: number[], digits = 0): string => `${median(xs).toFixed(digits)} [${Math.min(...xs).toFixed(digits)}–${Math.max(...xs).toFixed(digits)}]`

const top = scope()
try {
  const cluster = await startIpfsCluster(top as never, 3)
  const plain: Run[] = []
  const pinned: Run[] = []
  for (let rep = 0; rep < REPS; rep++) {
    const order = (rep + Number(values['first-rep'])) % 2 === 0 ? [null, cluster] : [cluster, null]
    for (const c of order) {
      const r = await run(c)
      ;(c === null ? plain : pinned).push(r)
      console.error(`rep ${rep + 1} ${c === null ? 'no service' : 'pinning'}: ${r.burst.perSecond.toFixed(0)} POST/s${r.drainMs !== undefined ? `, all pinned ${(r.drainMs / 1000).toFixed(1)} s after the last POST, daemon CPU ${(r.cpuMs! / 1000).toFixed(1)} s, the cluster's CPU over the POSTs and the drain ${(r.clusterCpuMs! / 1000).toFixed(1)} s` : ''}`)
    }
  }
  const rates = (rs: Run[]): number[] => rs.map((r) => r.burst.perSecond)
  console.log(`${FILES} × 1 KB POSTs on the kubo backend, ${CLIENTS} clients, ${REPS} interleaved reps (median [min–max]); 3-peer IPFS Cluster (v1.1.0, each peer with its own Kubo 0.43.1)`)
  console.table([
    { run: 'no pinning service', 'POST/s': spread(rates(plain)), 'p50 ms': spread(plain.map((r) => r.burst.p50), 1), 'p99 ms': spread(plain.map((r) => r.burst.p99), 1) },
    { run: 'pinning to the cluster', 'POST/s': spread(rates(pinned)), 'p50 ms': spread(pinned.map((r) => r.burst.p50), 1), 'p99 ms': spread(pinned.map((r) => r.burst.p99), 1) }
  ])
  console.log(`POST throughput while pinning: ${(100 * (median(rates(pinned)) / median(rates(plain)) - 1)).toFixed(1)} % of the median (budget ≥ -10 %)`)
  const drains = pinned.map((r) => r.drainMs! / 1000)
  const cpuShare = pinned.map((r) => 100 * r.cpuMs! / r.drainMs!)
  console.log(`the cluster's processes (3 peers, 3 Kubos) used ${spread(pinned.map((r) => r.clusterCpuMs! / 1000), 1)} s of CPU over the POSTs and the drain`)
  console.log(`last POST → all ${FILES} pinned: ${spread(drains, 1)} s (budget ≤ 60 s); daemon CPU meanwhile ${spread(pinned.map((r) => r.cpuMs! / 1000), 1)} s (${spread(cpuShare)} % of one core)`)
} finally {
  await top.close()
}
