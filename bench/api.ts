// POST /v1/data over the real unix socket, 1 KB bodies, at 16 concurrent clients (the budget's
// row) and at one, against real daemon processes (each checkout's compiled `dist/` with its
// launcher's flags) on fresh temp homes: files/s, p50/p99, and what a POST costs the daemon in CPU
// (user + system, with the journal checkpoint that follows the POSTs): all threads, and the main
// thread alone — the thread the 16-client budget is
// bound by (3,000 files/s leaves it 0.33 ms per POST), and which load inflates far less than
// throughput. `--base DIR` runs an older checkout side by side, the variants alternating for
// `--rounds N` rounds (medians printed); `--prof DIR` profiles each variant's 16-client burst
// (main thread: self time by area, top functions, and the request path's own functions; the CPU
// rows then include the profiler's cost, and say so).
// Each daemon first takes WARM_POSTS POSTs at 16 clients (its code optimised; their CPU is a row
// of its own), so the measured bursts cost what a running daemon's POSTs do.
// Each round measures its floors before and after the daemons (issue #28): plain
// create+write+fsync+close of 1 KB files at 16 concurrent, which the 16-client rate is divided
// by, one fdatasync, which the one-client p50 is compared with, and a lone POST's disk work
// without Hearth's CPU (floors.ts: its p99 beside the one-client p99), and the CPU a POST's
// file create costs the kernel alone (beside the CPU per POST).
// `--log-level info`: the daemon logs as a user's does (a line per stored file) instead of warn.
// Run: node --import tsx bench/api.ts [--quick] [--base DIR] [--rounds N] [--prof DIR] [--log-level LEVEL]
import '../src/polyfill.js'
import { mkdtemp, readFile, readdir, rm, writeFile } from 'node:fs/promises'
import { tmpdir } from 'node:os'
import { join, resolve } from 'node:path'
import { launchDaemon, REPO, type RunningDaemon } from './support/daemon.js'
import { ensureBuilt } from './support/dist-daemon.js'
import { checkpointSettled, cpuMs } from './support/cpu-time.js'
import { postBurst, type PostBurst } from './support/post-burst.js'
import { floorCreateCpu, floorFdatasync, floorSyncBesideCreate, floorWriteFsync } from './support/floors.js'
import { monotonicMicros, summariseCpuProfile, type CpuProfile } from './cpu-profile.js'

const args = process.argv.slice(2)
const opt = (name: string): string | null => { const i = args.indexOf(name); return i >= 0 ? args[i + 1] ?? null : null }
const quick = args.includes('--quick')
const base = opt('--base')
const rounds = Number(opt('--rounds') ?? 1)
const profDir = opt('--prof')
/** The daemon's log level (the benches' default is warn; a user's daemon logs at info, a line per stored file). */
const logLevel = opt('--log-level')
const SCOPE = 'instagram.profile'
const N16 = quick ? 600 : 3000
const N1 = quick ? 200 : 600
/**
 * POSTs at 16 clients before the measured bursts, in both modes: a fresh daemon's first ~1,200
 * POSTs cost ~1.5× what later ones do (its code not yet optimised; `bench/threads.ts`-style
 * per-thread reads: 1.55 then 1.08 ms per POST, bursts of 600), which a `--quick` burst of 600
 * right after a short warm-up measured instead of the steady cost. Their CPU is printed as a row
 * of its own: the cold cost stays in sight.
 */
const WARM_POSTS = 1500
const body = JSON.stringify({ username: 'bench', bio: 'x'.repeat(1024 - 40) })

/** CPU milliseconds of the process's main thread (its task id is the pid). */
async function mainThreadCpuMs (pid: number): Promise<number> {
  const fields = (await readFile(`/proc/${pid}/task/${pid}/stat`, 'utf8')).split(') ')[1]!.split(' ')
  return (Number(fields[11]) + Number(fields[12])) * 10
}

/** `endedAt`: the last answer's monotonic time (µs), before the wait for the checkpoint. */
interface Burst extends PostBurst { cpu: number; mainCpu: number; endedAt: number }

/**
 * `total` POSTs from `clients` clients; their CPU is read once the journal's checkpoint after
 * them has run (its block writes, pins and syncfs come up to ~200 ms after the last `201`), so it
 * counts in this burst's cost, not in the next one's.
 */
async function postMany (d: RunningDaemon, clients: number, total: number): Promise<Burst> {
  const [cpu0, main0] = [await cpuMs(d.pid), await mainThreadCpuMs(d.pid)]
  const burst = await postBurst(d, `/v1/data/${SCOPE}`, body, clients, total)
  const endedAt = monotonicMicros()
  await checkpointSettled()
  const [cpu1, main1] = [await cpuMs(d.pid), await mainThreadCpuMs(d.pid)]
  return { ...burst, cpu: (cpu1 - cpu0) / total, mainCpu: (main1 - main0) / total, endedAt }
}

/** The request path's own functions (HTTP, envelope, layout, encryption): their total time, inclusive. */
const REQUEST_PATH = /\/(api|protocol|ingest\/(layout|envelope-bytes|encryptor|submit-names))\//

function requestPathShare (profile: CpuProfile, window: { from: number; to: number }): string {
  const parent = new Map<number, number>()
  for (const n of profile.nodes) for (const c of n.children ?? []) parent.set(c, n.id)
  const byId = new Map(profile.nodes.map((n) => [n.id, n]))
  const inclusive = new Map<string, number>()
  let busy = 0
  let at = profile.startTime
  profile.samples.forEach((id, i) => {
    const delta = profile.timeDeltas[i] ?? 0
    at += delta
    if (at < window.from || at > window.to || byId.get(id)!.callFrame.functionName === '(idle)') return
    busy += delta
    const seen = new Set<string>()
    for (let x: number | undefined = id; x !== undefined; x = parent.get(x)) {
      const f = byId.get(x)!.callFrame
      if (!REQUEST_PATH.test(f.url)) continue
      const name = `${f.functionName || '(anonymous)'} ${f.url.replace(/^.*\/(src|dist)\//, '')}`
      if (seen.has(name)) continue
      seen.add(name)
      inclusive.set(name, (inclusive.get(name) ?? 0) + delta)
    }
  })
  const lines = ['request path (inclusive, the outermost frames cover the rest):']
  for (const [name, us] of [...inclusive].sort((a, b) => b[1] - a[1]).slice(0, 25)) lines.push(`  ${(100 * us / busy).toFixed(1).padStart(5)} %  ${name}`)
  return lines.join('\n')
}

async function profileSummary (dir: string, pid: number, window: { from: number; to: number }): Promise<string> {
  const main = (await readdir(dir)).find((f) => f.split('.')[3] === String(pid) && f.split('.')[4] === '0')
  if (main === undefined) return '(no profile written)'
  const profile = JSON.parse(await readFile(join(dir, main), 'utf8')) as CpuProfile
  return `${summariseCpuProfile(profile, { window, top: 25 })}\n${requestPathShare(profile, window)}`
}

/**
 * The round's floors (the mean of before and after its daemons): files/s at 16 concurrent, one
 * fdatasync (ms), a lone POST's disk work without Hearth's CPU (p50 and p99, ms: floors.ts), and
 * the kernel's CPU for a POST's file create alone (ms per file).
 */
interface Floor { fsync16: number; fdatasync: number; beside: { p50: number; p99: number }; createCpu: number }
interface Result { warm: Burst; post16: Burst; post1: Burst; floor: Floor; profile?: string }

async function measureFloor (): Promise<Floor> {
  return { fsync16: await floorWriteFsync(16, N16), fdatasync: await floorFdatasync(N1), beside: await floorSyncBesideCreate(N1), createCpu: await floorCreateCpu(N16) }
}

async function runVariant (name: string, dir: string, round: number): Promise<Omit<Result, 'floor'>> {
  const home = await mkdtemp(join(tmpdir(), `hearth-bench-api-${name}-`))
  const prof = profDir === null ? null : join(profDir, `${name}-${round}`)
  const d = await launchDaemon({
    checkout: dir,
    run: 'dist',
    home,
    env: { HEARTH_SYNC: 'false', HEARTH_MDNS: 'false', HEARTH_UI: 'false', ...(logLevel !== null ? { HEARTH_LOG_LEVEL: logLevel } : {}) },
    ...(prof !== null ? { nodeArgs: ['--cpu-prof', '--cpu-prof-interval=250', `--cpu-prof-dir=${prof}`] } : {}),
    until: 'ready'
  })
  try {
    const warm = await postMany(d, 16, WARM_POSTS) // schema resolution, JIT: the daemon's code optimised
    const from = monotonicMicros()
    const post16 = await postMany(d, 16, N16)
    const to = post16.endedAt // the profile's window: the burst itself
    const post1 = await postMany(d, 1, N1)
    await d.stop()
    if (prof === null) return { warm, post16, post1 }
    // the burst's window beside the profiles, for a closer look at them afterwards
    await writeFile(join(prof, 'burst-window.json'), JSON.stringify({ pid: d.pid, from, to }))
    return { warm, post16, post1, profile: await profileSummary(prof, d.pid, { from, to }) }
  } finally {
    await d.stop()
    await rm(home, { recursive: true, force: true })
  }
}

const variants: Array<[string, string]> = [...(base !== null ? [['base', resolve(base)] as [string, string]] : []), ['current', REPO]]
for (const [, dir] of variants) ensureBuilt(dir)
const results = new Map<string, Result[]>(variants.map(([name]) => [name, []]))
const floors: Array<{ before: Floor; after: Floor }> = []
for (let round = 0; round < rounds; round++) {
  const before = await measureFloor()
  const ran: Array<[string, Omit<Result, 'floor'>]> = []
  // alternate which variant goes first: a machine getting busier does not favour one
  for (const [name, dir] of round % 2 === 0 ? variants : [...variants].reverse()) {
    console.error(`round ${round + 1}/${rounds}: ${name} …`)
    ran.push([name, await runVariant(name, dir, round)])
  }
  const after = await measureFloor()
  floors.push({ before, after })
  const mean = (a: number, b: number): number => (a + b) / 2
  const floor = {
    fsync16: mean(before.fsync16, after.fsync16),
    fdatasync: mean(before.fdatasync, after.fdatasync),
    beside: { p50: mean(before.beside.p50, after.beside.p50), p99: mean(before.beside.p99, after.beside.p99) },
    createCpu: mean(before.createCpu, after.createCpu)
  }
  for (const [name, r] of ran) results.get(name)!.push({ ...r, floor })
}

function median (xs: number[]): number {
  const s = [...xs].sort((a, b) => a - b)
  return s[Math.floor(s.length / 2)]!
}
const cell = (name: string, pick: (r: Result) => number, digits: number): string => {
  const xs = results.get(name)!.map(pick)
  return xs.length === 1 ? xs[0]!.toFixed(digits) : `${median(xs).toFixed(digits)} (${xs.map((x) => x.toFixed(digits)).join(' ')})`
}
/** With --prof every CPU row includes the profiler's own cost (its sampling, on the main thread). */
const profiled = profDir !== null ? ', with the profiler' : ''
const rows: Array<[string, (r: Result) => number, number]> = [
  ['1 KB POST, 16 clients (files/s)', (r) => r.post16.perSecond, 0],
  ['  ÷ the round\'s create+write+fsync+close floor at 16 (budget ≥ 0.6)', (r) => r.post16.perSecond / r.floor.fsync16, 2],
  [`  daemon CPU per POST, all threads (ms${profiled})`, (r) => r.post16.cpu, 3],
  [`  main thread CPU per POST (ms; budget pace 0.33${profiled})`, (r) => r.post16.mainCpu, 3],
  ['  the round\'s CPU of a POST\'s file create alone, no Hearth (ms per file; the all-threads budget is 0.35)', (r) => r.floor.createCpu, 3],
  ['  p50 (ms)', (r) => r.post16.p50, 2],
  ['  p99 (ms)', (r) => r.post16.p99, 2],
  ['1 KB POST, one client, p50 (ms)', (r) => r.post1.p50, 2],
  ['  − the round\'s one fdatasync (ms; budget ≤ 0.3)', (r) => r.post1.p50 - r.floor.fdatasync, 2],
  ['  p99 (ms; budget ≤ 4)', (r) => r.post1.p99, 2],
  ['  the round\'s lone-POST disk floor, p99 (ms; a synced append beside a file create, syncfs every 200 ms)', (r) => r.floor.beside.p99, 2],
  [`  daemon CPU per POST, all threads (ms${profiled})`, (r) => r.post1.cpu, 3],
  [`  main thread CPU per POST (ms${profiled})`, (r) => r.post1.mainCpu, 3],
  [`a fresh daemon's first ${WARM_POSTS.toLocaleString('en')} POSTs at 16 clients (the warm-up), CPU per POST (ms${profiled})`, (r) => r.warm.cpu, 3],
  [`  main thread CPU per POST (ms${profiled})`, (r) => r.warm.mainCpu, 3]
]
console.table(rows.map(([what, pick, digits]) => ({ what, ...Object.fromEntries(variants.map(([name]) => [name, cell(name, pick, digits)])) })))
console.log(`floors, before / after each round: create+write+fsync+close of 1 KB at 16 concurrent ${floors.map((f) => `${f.before.fsync16.toFixed(0)} / ${f.after.fsync16.toFixed(0)}`).join(', ')} files/s; one fdatasync ${floors.map((f) => `${f.before.fdatasync.toFixed(2)} / ${f.after.fdatasync.toFixed(2)}`).join(', ')} ms; a synced append beside a file create (syncfs every 200 ms), p50 and p99 ${floors.map((f) => `${f.before.beside.p50.toFixed(2)} and ${f.before.beside.p99.toFixed(2)} / ${f.after.beside.p50.toFixed(2)} and ${f.after.beside.p99.toFixed(2)}`).join(', ')} ms; CPU of a file create alone ${floors.map((f) => `${f.before.createCpu.toFixed(3)} / ${f.after.createCpu.toFixed(3)}`).join(', ')} ms per file`)
for (const [name, list] of results) {
  list.forEach((r, i) => { if (r.profile !== undefined) console.log(`\nCPU profile of the 16-client burst, ${name}, round ${i + 1}:\n${r.profile}`) })
}
