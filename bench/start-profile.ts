// One start of the daemon under the CPU profiler, on an empty home and on a home of 10,000 stored,
// indexed and searchable files (bench/support/owner-home.ts, built by this checkout's daemon): where the main thread's time goes
// from the spawn until `/health` says "ok" (every part up), by area and by function, busy and idle.
// Started as bench/limits.ts starts it (bin/hearth.js with its #! line's flags). The profiler's
// own cost is in the numbers (~10–20 %): compare shares, and time starts with bench/limits.ts.
// Run: node --import tsx bench/start-profile.ts [--checkout DIR] [--reps N] [--keep DIR] [--bulk-home]
//      (--keep: leave the .cpuprofile files in DIR; HEARTH_LOG_LEVEL=debug prints each service's start)
import '../src/polyfill.js'
import { mkdtemp, readdir, readFile, rm } from 'node:fs/promises'
import { tmpdir } from 'node:os'
import { join, resolve } from 'node:path'
import { areaOf, monotonicMicros, summariseCpuProfile, type CpuProfile } from './cpu-profile.js'
import { buildMillionHome } from './support/million-home.js'
import { buildOwnerHome } from './support/owner-home.js'
import { launchDaemon, REPO } from './support/daemon.js'
import { ensureBuilt } from './support/dist-daemon.js'

const args = process.argv.slice(2)
const opt = (name: string): string | null => { const i = args.indexOf(name); return i >= 0 ? args[i + 1] ?? null : null }
const checkout = resolve(opt('--checkout') ?? REPO)
const reps = Number(opt('--reps') ?? 1)
const keep = opt('--keep')

/** The main thread's busy time per slice of `sliceMs` from the profile's start until `to`, with the slice's three largest areas. */
function timeline (profile: CpuProfile, to: number, sliceMs = 50): string {
  const byId = new Map(profile.nodes.map((n) => [n.id, n]))
  const slices: Array<Map<string, number>> = []
  let at = profile.startTime
  profile.samples.forEach((id, i) => {
    const delta = profile.timeDeltas[i] ?? 0
    at += delta
    if (at > to) return
    const node = byId.get(id)!
    const area = areaOf(node.callFrame.url, node.callFrame.functionName)
    const slice = Math.floor((at - profile.startTime) / 1000 / sliceMs)
    while (slices.length <= slice) slices.push(new Map())
    slices[slice]!.set(area, (slices[slice]!.get(area) ?? 0) + delta)
  })
  return slices.map((areas, i) => {
    const busy = [...areas].filter(([a]) => a !== 'idle').reduce((sum, [, us]) => sum + us, 0)
    const top = [...areas].filter(([a]) => a !== 'idle').sort((x, y) => y[1] - x[1]).slice(0, 3).map(([a, us]) => `${a} ${(us / 1000).toFixed(0)}`).join(', ')
    return `  ${String(i * sliceMs).padStart(5)}–${String((i + 1) * sliceMs).padEnd(5)} busy ${(busy / 1000).toFixed(0).padStart(3)} ms: ${top}`
  }).join('\n')
}

async function profiledStart (home: string, profDir: string): Promise<{ ok: number; text: string }> {
  const d = await launchDaemon({
    checkout,
    run: 'bin',
    home,
    env: { HEARTH_SYNC: 'false', HEARTH_UI: 'false', HEARTH_LOG_LEVEL: process.env.HEARTH_LOG_LEVEL ?? 'warn' },
    nodeArgs: ['--cpu-prof', `--cpu-prof-dir=${profDir}`],
    until: 'health'
  })
  const spawnedAt = performance.now() - d.startMs
  while ((JSON.parse((await d.call('GET', '/health')).body) as { status: string }).status === 'starting') await new Promise((resolve) => setTimeout(resolve, 5))
  const ok = performance.now() - spawnedAt
  const okAt = monotonicMicros()
  const r = await d.call('POST', '/v1/data/instagram.profile', JSON.stringify({ username: 'start', bio: 'x'.repeat(984) }))
  if (r.status !== 201) throw new Error(`the POST after the start answered ${r.status}: ${r.body}`)
  await d.stop()
  const files = (await readdir(profDir)).filter((f) => f.split('.')[3] === String(d.pid)).sort()
  const texts: string[] = []
  for (const f of files) {
    const profile = JSON.parse(await readFile(join(profDir, f), 'utf8')) as CpuProfile
    const thread = f.split('.')[4]
    texts.push(`thread ${thread}: ${summariseCpuProfile(profile, { top: thread === '0' ? 25 : 5, window: { from: profile.startTime, to: okAt } })}`)
    if (thread === '0') texts.push(`main thread by ${50} ms from the profiler's start (ms busy: the three largest areas):\n${timeline(profile, okAt)}`)
  }
  return { ok, text: texts.join('\n') }
}

ensureBuilt(checkout)
const homes: string[] = []
try {
  const k10 = await mkdtemp(join(tmpdir(), 'hearth-start-profile-10k-'))
  homes.push(k10)
  if (args.includes('--bulk-home')) await buildMillionHome(k10, 10_000)
  else await buildOwnerHome(REPO, k10, 10_000)
  for (let r = 0; r < reps; r++) {
    for (const [name, existing] of [['empty', null], ['10k', k10]] as const) {
      const home = existing ?? await mkdtemp(join(tmpdir(), 'hearth-start-profile-empty-'))
      const profDir = keep !== null ? join(keep, `${name}-${r}`) : await mkdtemp(join(tmpdir(), 'hearth-start-profile-cpu-'))
      try {
        const { ok, text } = await profiledStart(home, profDir)
        console.log(`\n── ${name} home, rep ${r + 1}: "ok" after ${ok.toFixed(0)} ms (with the profiler)\n${text}`)
      } finally {
        if (existing === null) await rm(home, { recursive: true, force: true })
        if (keep === null) await rm(profDir, { recursive: true, force: true })
      }
    }
  }
} finally {
  for (const h of homes) await rm(h, { recursive: true, force: true })
}
