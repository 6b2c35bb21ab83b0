// Where a dropped file's CPU goes: one real daemon (a checkout's `bin/hearth.js`, as bench/limits.ts
// starts it), 1,000 × 1 KB envelopes dropped into its data folder one by one (temp name, then
// rename) until all are indexed, several such rounds on the same daemon (the first is
// bench/limits.ts's row; later ones show what a warm daemon pays: V8's optimising compiles of
// the ingest path are done by then), each round's CPU per file by thread from /proc; with
// --perf, an on-CPU profile of every thread of each round (perf record -g; JIT frames named by
// node's --perf-basic-prof), summarised by thread kind and area (support/perf-summary.ts).
// Run: node --import tsx bench/dropped-profile.ts [--checkout DIR] [--rounds N] [--perf DIR]
import '../src/polyfill.js'
import { spawn, type ChildProcess } from 'node:child_process'
import { mkdir, mkdtemp, rm } from 'node:fs/promises'
import { tmpdir } from 'node:os'
import { join, resolve } from 'node:path'
import { launchDaemon, REPO } from './support/daemon.js'
import { ensureBuilt } from './support/dist-daemon.js'
import { dropFiles } from './support/dropped-files.js'
import { cpuMs, threadCpu, threadCpuPerUnit } from './support/cpu-time.js'
import { postBurst } from './support/post-burst.js'
import { summarisePerf } from './support/perf-summary.js'

const args = process.argv.slice(2)
const opt = (name: string): string | null => { const i = args.indexOf(name); return i >= 0 ? args[i + 1] ?? null : null }
const dir = resolve(opt('--checkout') ?? REPO)
const rounds = Number(opt('--rounds') ?? 3)
const perfDir = opt('--perf')
const SCOPE = 'instagram.profile'
const FILES = 1000
const sleep = async (ms: number): Promise<void> => { await new Promise((resolve) => setTimeout(resolve, ms)) }

ensureBuilt(dir)
if (perfDir !== null) await mkdir(perfDir, { recursive: true })
const home = await mkdtemp(join(tmpdir(), 'hearth-bench-dropped-profile-'))
const d = await launchDaemon({
  checkout: dir,
  run: 'bin',
  home,
  env: { HEARTH_SYNC: 'false', HEARTH_UI: 'false' },
  ...(perfDir !== null ? { nodeArgs: ['--perf-basic-prof'] } : {}),
  until: 'health'
})
const summaries: string[] = []
try {
  // as bench/limits.ts's dropped row: a warm-up POST learns the schema
  await postBurst(d, `/v1/data/${SCOPE}`, JSON.stringify({ username: 'bench', bio: 'x'.repeat(1024 - 40) }), 4, 50)
  const { $schema } = JSON.parse((await d.call('GET', `/v1/data/${SCOPE}`)).body) as { $schema: string }
  const versions = async (): Promise<number> => (JSON.parse((await d.call('GET', `/v1/data/${SCOPE}/versions?limit=1`)).body) as { total: number }).total
  for (let r = 0; r < rounds; r++) {
    await sleep(1000) // the previous round's checkpoint is over
    const before = await versions()
    let perf: ChildProcess | null = null
    const perfData = perfDir === null ? null : join(perfDir, `round${r + 1}.data`)
    if (perfData !== null) {
      perf = spawn('perf', ['record', '-F', '2999', '-g', '-p', String(d.pid), '-o', perfData], { stdio: 'ignore' })
      await sleep(500) // perf attached
    }
    const threads = await threadCpu(d.pid)
    const cpu = await cpuMs(d.pid)
    const started = performance.now()
    await dropFiles(home, SCOPE, $schema, FILES, 1 + r * FILES)
    const dropped = performance.now() - started
    while (await versions() < before + FILES) await sleep(10)
    const perFile = (await cpuMs(d.pid) - cpu) / FILES
    const split = threadCpuPerUnit(threads, await threadCpu(d.pid), FILES)
    if (perf !== null) {
      perf.kill('SIGINT')
      await new Promise((resolve) => perf!.once('exit', resolve))
      summaries.push(`round ${r + 1} (perf, from 0.5 s before the drop to the last file indexed):\n${summarisePerf(perfData!, d.pid, FILES)}`)
    }
    console.log(`round ${r + 1}: dropping ${dropped.toFixed(0)} ms, indexed ${(performance.now() - started).toFixed(0)} ms after the first file; CPU ${perFile.toFixed(3)} ms per file: ${split}`)
  }
} finally {
  await d.stop()
  await rm(home, { recursive: true, force: true })
}
console.log(summaries.join('\n'))
