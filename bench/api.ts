// POST /v1/data throughput and latency over the real unix socket, for 1 KB bodies, at 1 and 32
// concurrent clients, against a real daemon process on a temp home.
// Run: node --import tsx bench/api.ts [--quick]
import '../src/polyfill.js'
import { Agent, request } from 'node:http'
import { startBenchDaemon } from './support/daemon.js'

const quick = process.argv.includes('--quick')
const daemon = await startBenchDaemon({ name: 'api' })
const socketPath = daemon.socketPath

const agent = new Agent({ keepAlive: true, maxSockets: 64 })
const body = JSON.stringify({ username: 'bench', bio: 'x'.repeat(1024 - 40) })

function post (): Promise<number> {
  const started = performance.now()
  return new Promise((resolve, reject) => {
    const r = request({ socketPath, agent, method: 'POST', path: '/v1/data/instagram.profile', headers: { 'content-type': 'application/json', 'content-length': Buffer.byteLength(body) } }, (res) => {
      res.resume()
      res.on('end', () => res.statusCode === 201 ? resolve(performance.now() - started) : reject(new Error(`status ${res.statusCode}`)))
    })
    r.on('error', reject)
    r.end(body)
  })
}

async function measure (clients: number, total: number): Promise<Record<string, string>> {
  const latencies: number[] = []
  let issued = 0
  const started = performance.now()
  await Promise.all(Array.from({ length: clients }, async () => {
    while (issued < total) { issued++; latencies.push(await post()) }
  }))
  const seconds = (performance.now() - started) / 1000
  latencies.sort((a, b) => a - b)
  const pct = (p: number): string => latencies[Math.min(latencies.length - 1, Math.floor(p * latencies.length))]!.toFixed(2)
  return { clients: String(clients), requests: String(total), 'req/s': (total / seconds).toFixed(1), 'p50 ms': pct(0.5), 'p99 ms': pct(0.99) }
}

try {
  await measure(4, 50) // warm-up
  const n = quick ? 200 : 2000
  console.table([await measure(1, n), await measure(32, n)])
} finally {
  agent.destroy()
  await daemon.stop()
}
