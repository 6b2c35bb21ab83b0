// Where a 1 KB POST's CPU goes, by thread: one real daemon (a checkout's compiled `dist/`), a
// burst at 16 clients and one at one client, each thread's user + system time per POST from
// /proc/<pid>/task/*/stat (the main thread, the file writer, libuv's pool that runs LevelDB's
// reads, writes and syncs, V8's helpers), all threads' user and system apart, during the burst
// and in the journal checkpoint after it; and what the daemon spends idle. Threads are named by
// the kernel's name and task id (Node 20 names its threads "node"; the main thread is "main").
// `--prof DIR`: CPU profiles of every thread, and the bursts' windows (monotonic µs) printed
// for a closer look at them (bench/cpu-profile.ts).
// Run: node --import tsx bench/threads.ts [--checkout DIR] [--posts16 N] [--posts1 N] [--prof DIR]
import '../src/polyfill.js'
import { mkdtemp, rm } from 'node:fs/promises'
import { tmpdir } from 'node:os'
import { join, resolve } from 'node:path'
import { launchDaemon, REPO } from './support/daemon.js'
import { ensureBuilt } from './support/dist-daemon.js'
import { postBurst } from './support/post-burst.js'
import { CHECKPOINT_SETTLE_MS, threadCpu, threadCpuPerUnit as perUnit } from './support/cpu-time.js'
import { monotonicMicros } from './cpu-profile.js'

const args = process.argv.slice(2)
const opt = (name: string): string | null => { const i = args.indexOf(name); return i >= 0 ? args[i + 1] ?? null : null }
const dir = resolve(opt('--checkout') ?? REPO)
const prof = opt('--prof')
const bursts: Array<[number, number]> = [[16, Number(opt('--posts16') ?? 3000)], [1, Number(opt('--posts1') ?? 600)]]
const SCOPE_PATH = '/v1/data/instagram.profile'
const body = JSON.stringify({ username: 'bench', bio: 'x'.repeat(1024 - 40) })

const sleep = async (ms: number): Promise<void> => { await new Promise((resolve) => setTimeout(resolve, ms)) }
ensureBuilt(dir)
const home = await mkdtemp(join(tmpdir(), 'hearth-bench-threads-'))
const d = await launchDaemon({
  checkout: dir,
  run: 'dist',
  home,
  env: { HEARTH_SYNC: 'false', HEARTH_MDNS: 'false', HEARTH_UI: 'false' },
  until: 'ready',
  ...(prof !== null ? { nodeArgs: ['--cpu-prof', '--cpu-prof-interval=250', `--cpu-prof-dir=${prof}`] } : {})
})
try {
  // warm-up: schema resolution, and the daemon's code optimised (its first ~1,200 POSTs cost ~1.5×
  // later ones, bench/api.ts), so the bursts show a running daemon's split
  await postBurst(d, SCOPE_PATH, body, 16, 1500)
  await sleep(1500)
  const idle0 = await threadCpu(d.pid)
  await sleep(2000)
  console.log(`idle (ms of CPU per second): ${perUnit(idle0, await threadCpu(d.pid), 2) || 'none'}`)
  const windows: Array<{ clients: number; from: number; to: number }> = []
  for (const [clients, total] of bursts) {
    const before = await threadCpu(d.pid)
    const from = monotonicMicros()
    const burst = await postBurst(d, SCOPE_PATH, body, clients, total)
    windows.push({ clients, from, to: monotonicMicros() })
    const during = await threadCpu(d.pid)
    await sleep(CHECKPOINT_SETTLE_MS)
    console.log(`${clients} client(s), ${total} POSTs: ${burst.perSecond.toFixed(0)} files/s, p50 ${burst.p50.toFixed(2)} ms\n  ms of CPU per POST during the burst: ${perUnit(before, during, total)}\n  in the checkpoint after it: ${perUnit(during, await threadCpu(d.pid), total) || 'none'}`)
  }
  if (prof !== null) console.log(`bursts' windows (monotonic µs): ${JSON.stringify(windows)}`)
} finally {
  await d.stop()
  await rm(home, { recursive: true, force: true })
}
