// POSTs of one body from `clients` concurrent clients until `total` were answered 201, over a
// bench daemon's socket: the rate and the latencies the 1 KB POST rows print (bench/limits.ts,
// bench/api.ts).
import type { RunningDaemon } from './daemon.js'

export interface PostBurst { perSecond: number; p50: number; p99: number }

export async function postBurst (d: RunningDaemon, path: string, body: string, clients: number, total: number): Promise<PostBurst> {
  const latencies: number[] = []
  let issued = 0
  const started = performance.now()
  await Promise.all(Array.from({ length: clients }, async () => {
    while (issued < total) {
      issued++
      const t = performance.now()
      const r = await d.call('POST', path, body)
      if (r.status !== 201) throw new Error(`POST answered ${r.status}: ${r.body}`)
      latencies.push(performance.now() - t)
    }
  }))
  const seconds = (performance.now() - started) / 1000
  latencies.sort((a, b) => a - b)
  return { perSecond: total / seconds, p50: latencies[Math.floor(latencies.length / 2)]!, p99: latencies[Math.floor(latencies.length * 0.99)]! }
}
