// The ingest and start-up budgets (docs/protocol.md §5) against real daemon processes, each row
// printed next to the floors measured in the same run, for the current checkout and (with
// --base DIR, a checkout of an older commit whose dependencies match) the old code side by side:
//   floors:  plain create+write+fsync+close of 1 KB files at 16 concurrent and one fdatasync,
//            each before and after the Hearth rows (load moves them); bare openpgp.encrypt of a 1 KB
//            envelope with minimal S2K, and Hearth's own writer of the same message form;
//            node:crypto AES-256-CFB + SHA-256 over 10 MB
//   rows:    POST 1 KB at 16 concurrent (files/s) and at one client (p50); POST 10 MB (median);
//            1,000 × 1 KB dropped into the data folder until all are indexed (files/s), and the
//            same files moved in as one prepared folder (one rename) until all are indexed, three
//            folders one after another (the first and the third, warm, reported): the first row is
//            bounded by the bench's own writing, the others are the daemon's own rate;
//            start until /health first answers, until it says "ok" (every part up) and until a
//            1 KB POST sent then is stored (201), with an empty home and with 10,000 files; idle RSS
//            (10,000 files, sync and dashboard off) and idle RSS of the default configuration
//            (sync with mDNS and the dashboard, in a network namespace of its own) split into
//            file-backed, anonymous, V8 heap and external memory, and again 12 s after (10,000 files: after the initial scan; default: after every part is up) and ~30 s after start
//   --million: start until /health answers on a home of 1,000,000 stored and indexed files (built
//            once in bulk, shared by the variants, removed at the end), until every part is up,
//            until the initial scan has checked every file, the slowest /health answer during
//            that scan (is the event loop free?), and RSS after it
//   --start-only: only the start rows, the 10,000-file home built as an owner's daemon leaves it
//            (POSTed through this checkout's daemon, searchable: bench/support/owner-home.ts);
//            with --reps N the start rows N times, the variants interleaved, as median [min–max];
//            --no-idle: without the idle RSS rows (~45 s a variant); --bulk-home: that home built in
//            bulk like the million's instead (no blocks, no search index; rounds 1–3's numbers)
//   --dropped-only: only the dropped-files rows; with --reps N they run N times, the variants
//            interleaved in alternating order (base, current, current, base, …), each row as median [min–max], and the
//            daemon's CPU per dropped file split by thread (user and system apart)
//   --post-only: only the 1 KB POST rows (16 clients, one client) and the empty start
// Both daemons run the compiled JavaScript (`dist/`, built here when older than `src/`), one at
// a time, on fresh temp homes, with sync off unless said otherwise, started through their
// launcher (bin/hearth.js) as users start them, so its node flags count.
// Run: node --import tsx bench/limits.ts [--quick] [--base DIR] [--also NAME=DIR …] [--variant current|base|NAME]
//      [--start-only [--reps N] [--no-idle]] [--dropped-only [--reps N]] [--post-only] [--million]
//      [--prof DIR]  (CPU profiles of each daemon (every thread) during the 1 KB burst and the dropped files, summarised;
//                     the CPU rows then include the profiler and say so)
import '../src/polyfill.js'
import { execFileSync } from 'node:child_process'
import { mkdtemp, rm, readFile, rename } from 'node:fs/promises'
import { existsSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join, resolve } from 'node:path'
import { fileURLToPath } from 'node:url'
import { monotonicMicros, summariseProfileDir } from './cpu-profile.js'
import { buildMillionHome } from './support/million-home.js'
import { buildOwnerHome } from './support/owner-home.js'
import { dropFiles, floorDropFiles, prepareFolder } from './support/dropped-files.js'
import { floorWriteFsync, floorFdatasync, floorOpenpgp, floorHearthWriter, floorAesSha } from './support/floors.js'
import { launchDaemon, REPO, type RunningDaemon } from './support/daemon.js'
import { ensureBuilt } from './support/dist-daemon.js'
import { checkpointSettled, cpuMs, threadCpu, threadCpuPerUnit } from './support/cpu-time.js'
import { postBurst, type PostBurst } from './support/post-burst.js'

const args = process.argv.slice(2)
const quick = args.includes('--quick')
const opt = (name: string): string | null => { const i = args.indexOf(name); return i >= 0 ? args[i + 1] ?? null : null }
const base = opt('--base')
const onlyVariant = opt('--variant')
const profDir = opt('--prof')
const million = args.includes('--million')
const startOnly = args.includes('--start-only')
const droppedOnly = args.includes('--dropped-only')
const postOnly = args.includes('--post-only')
const reps = Number(opt('--reps') ?? 1)
const noIdle = args.includes('--no-idle')
const bulkHome = args.includes('--bulk-home')
const MILLION = Number(process.env.HEARTH_BENCH_MILLION ?? 1_000_000)
const SCOPE = 'instagram.profile'
const N16 = quick ? 600 : 3000
const N1 = quick ? 200 : 600
const DROPPED = 1000
const START_FILES = 10_000

// ── one daemon ──────────────────────────────────────────────────────────────────────────────

function median (xs: number[]): number {
  const s = [...xs].sort((a, b) => a - b)
  return s[Math.floor(s.length / 2)]!
}

interface StartOptions {
  /** Node flags for this run only (on node's command line before the launcher), e.g. a CPU profile. */
  nodeOptions?: string[]
  /** The default configuration (sync with mDNS, the dashboard) inside a fresh network namespace, instead of sync and dashboard off. */
  defaults?: boolean
  env?: NodeJS.ProcessEnv
}

// Started the way a user starts it (`bin/hearth.js`, executed, as `hearth daemon`, `npm start` and
// the systemd unit do), so process-level settings of the launcher count in both variants; up once
// `/health` answers.
async function startDaemon (dir: string, home: string, opts: StartOptions = {}): Promise<RunningDaemon> {
  return await launchDaemon({
    checkout: dir,
    run: 'bin',
    home,
    env: { ...(opts.defaults === true ? {} : { HEARTH_SYNC: 'false', HEARTH_UI: 'false' }), ...opts.env },
    ...(opts.nodeOptions !== undefined ? { nodeArgs: opts.nodeOptions } : {}),
    netns: opts.defaults === true,
    until: 'health'
  })
}

/** A start's three moments (ms from the spawn): `/health` first answers, it says "ok", a POST sent then is stored. */
interface StartTimes { first: number; ok: number; posted: number }

/**
 * Started as startDaemon does, then timed on: `/health` saying `starting` does not count as
 * started, so the start ends once it says anything else and a 1 KB POST sent then is answered 201.
 */
async function timedStart (dir: string, home: string, opts: StartOptions = {}): Promise<{ d: RunningDaemon; times: StartTimes }> {
  const d = await startDaemon(dir, home, opts)
  const spawnedAt = performance.now() - d.startMs
  while (await healthStatus(d) === 'starting') await new Promise((resolve) => setTimeout(resolve, 5))
  const ok = performance.now() - spawnedAt
  const r = await d.call('POST', `/v1/data/${SCOPE}`, JSON.stringify({ username: 'start', bio: 'x'.repeat(1024 - 40) }))
  if (r.status !== 201) throw new Error(`the POST after the start answered ${r.status}: ${r.body}`)
  return { d, times: { first: d.startMs, ok, posted: performance.now() - spawnedAt } }
}

async function postMany (d: RunningDaemon, clients: number, total: number, body: string): Promise<PostBurst> {
  return await postBurst(d, `/v1/data/${SCOPE}`, body, clients, total)
}

async function storedCount (d: RunningDaemon): Promise<number> {
  for (;;) {
    // a daemon just restarted (the profiled phases) answers the starting shape, without counts
    const status = JSON.parse((await d.call('GET', '/v1/status')).body) as { files?: { counts: Record<string, number> } }
    if (status.files !== undefined) return (status.files.counts.stored ?? 0) + (status.files.counts.registered ?? 0)
    await new Promise((resolve) => setTimeout(resolve, 20))
  }
}

async function versionCount (d: RunningDaemon, scope = SCOPE): Promise<number> {
  return (JSON.parse((await d.call('GET', `/v1/data/${scope}/versions?limit=1`)).body) as { total: number }).total
}

async function waitForStored (d: RunningDaemon, count: number, timeoutMs: number, everyMs = 20): Promise<void> {
  const deadline = Date.now() + timeoutMs
  while ((await storedCount(d)) < count) {
    if (Date.now() > deadline) throw new Error(`only ${await storedCount(d)} of ${count} files indexed`)
    await new Promise((resolve) => setTimeout(resolve, everyMs))
  }
}

/**
 * Waits until the search has indexed every change of the file index (its `pending` 0): the CPU
 * read then also holds the search's share of the files, which the rows "until indexed" leave to
 * chance (a search step every ~100 ms may fall inside or after their window).
 */
async function waitForSearchable (d: RunningDaemon, timeoutMs = 300_000): Promise<void> {
  const deadline = Date.now() + timeoutMs
  for (;;) {
    const res = await d.call('GET', '/v1/search?q=bench&limit=1')
    if (res.status === 200 && (JSON.parse(res.body) as { pending: number }).pending === 0) return
    if (Date.now() > deadline) throw new Error(`the search still has changes to index: ${res.status} ${res.body.slice(0, 200)}`)
    await new Promise((resolve) => setTimeout(resolve, 20))
  }
}

function rssMb (pid: number): Promise<number> {
  return readFile(`/proc/${pid}/status`, 'utf8').then((s) => Number(/VmRSS:\s+(\d+)/.exec(s)?.[1] ?? 0) / 1024)
}

/** CPU time (user + system, ms) the process has used so far: per-file cost that load does not inflate. */
interface Result {
  post16?: number; post16Cpu?: number; post1p50?: number; post1p99?: number; post10mb?: number; dropped?: number; droppedCpu?: number; droppedSearchableCpu?: number
  moved?: number; movedCpu?: number; movedWarm?: number; movedWarmCpu?: number; movedSearchableCpu?: number; movedWarmSearchableCpu?: number; movedProfile?: string
  startEmpty?: StartTimes; start10k?: StartTimes; rssIdle?: number; rssIdleQuiet?: number; profile?: string; droppedProfile?: string
  /** The dropped files' CPU per file until indexed, by thread (threadCpuPerUnit). */
  droppedThreads?: string
  rssDefault?: number; rssDefaultQuiet?: number; heapDefaultQuiet?: number; rssDefaultSettled?: number; rssDefaultFile?: number; rssDefaultAnon?: number; heapDefault?: number; heapDefaultUsed?: number; newSpaceDefault?: number; externalDefault?: number
  startMillion?: number; readyMillion?: number; scanMillion?: number; healthMaxDuringScan?: number; rssMillion?: number
}

interface IdleMemory { rss: number; anon: number; file: number; heapTotal: number; heapUsed: number; newSpace: number; external: number }

const MEMORY_REPORT = fileURLToPath(new URL('./support/memory-report.cjs', import.meta.url))

/** RSS from /proc (anonymous and file-backed), then the V8 heap and external memory the daemon reports (MB). */
async function idleMemory (d: RunningDaemon): Promise<IdleMemory> {
  const status = await readFile(`/proc/${d.child.pid!}/status`, 'utf8')
  const kb = (field: string): number => Number(new RegExp(`${field}:\\s+(\\d+)`).exec(status)?.[1] ?? Number.NaN) / 1024
  const report = join(d.home, 'bench-memory.json')
  await rm(report, { force: true })
  process.kill(d.child.pid!, 'SIGUSR2')
  let v8 = { heapTotal: Number.NaN, heapUsed: Number.NaN, newSpace: Number.NaN, external: Number.NaN }
  for (let i = 0; i < 100 && !existsSync(report); i++) await new Promise((resolve) => setTimeout(resolve, 20))
  if (existsSync(report)) v8 = JSON.parse(await readFile(report, 'utf8')) as typeof v8
  const mb = (n: number): number => n / 1024 / 1024
  return { rss: kb('VmRSS'), anon: kb('RssAnon'), file: kb('RssFile'), heapTotal: mb(v8.heapTotal), heapUsed: mb(v8.heapUsed), newSpace: mb(v8.newSpace), external: mb(v8.external) }
}

const IDLE_MS = quick ? 3000 : 8000
/** Long enough for V8's memory reducer (it starts 8 s after a full GC, then waits for low allocation) to return start-up garbage. */
const SETTLED_MS = 30_000
/** Quiet for a while after the start: an idle daemon has returned its start-up garbage by then (src/daemon/memory-settle.ts). */
const QUIET_MS = 12_000
const withMemoryReport = (home: string): StartOptions => ({ env: { NODE_OPTIONS: `--require=${MEMORY_REPORT}`, HEARTH_BENCH_MEMORY: join(home, 'bench-memory.json') } })

/** Start on a home of 10,000 indexed files, then the RSS once the daemon has been idle a while. */
async function start10kIdle (dir: string, home: string): Promise<{ start10k: StartTimes; rssIdle: number; rssIdleQuiet: number }> {
  const { d, times } = await timedStart(dir, home, withMemoryReport(home))
  // idle means every part up and the initial scan over, as in the default configuration's row
  await waitForScan(d)
  await new Promise((resolve) => setTimeout(resolve, IDLE_MS))
  const rssIdle = (await idleMemory(d)).rss
  await new Promise((resolve) => setTimeout(resolve, QUIET_MS - IDLE_MS))
  const rssIdleQuiet = (await idleMemory(d)).rss
  await d.stop()
  return { start10k: times, rssIdle, rssIdleQuiet }
}

/** The default configuration (sync and mDNS on, the dashboard) on an empty home: RSS once idle after every part is up, what it is made of, and RSS 30 s after start. */
async function defaultIdle (dir: string): Promise<Pick<Result, 'rssDefault' | 'rssDefaultFile' | 'rssDefaultAnon' | 'heapDefault' | 'heapDefaultUsed' | 'newSpaceDefault' | 'externalDefault' | 'rssDefaultQuiet' | 'heapDefaultQuiet' | 'rssDefaultSettled'>> {
  const home = await mkdtemp(join(tmpdir(), 'hearth-bench-limits-defaults-'))
  try {
    const d = await startDaemon(dir, home, { ...withMemoryReport(home), defaults: true })
    // idle once every part is up (on a loaded machine that can take seconds after /health)
    while (await healthStatus(d) === 'starting') await new Promise((resolve) => setTimeout(resolve, 20))
    await new Promise((resolve) => setTimeout(resolve, IDLE_MS))
    const m = await idleMemory(d)
    await new Promise((resolve) => setTimeout(resolve, QUIET_MS - IDLE_MS))
    const quiet = await idleMemory(d)
    await new Promise((resolve) => setTimeout(resolve, SETTLED_MS - QUIET_MS))
    const settled = await idleMemory(d)
    await d.stop()
    return { rssDefaultSettled: settled.rss, rssDefaultQuiet: quiet.rss, heapDefaultQuiet: quiet.heapTotal, rssDefault: m.rss, rssDefaultFile: m.file, rssDefaultAnon: m.anon, heapDefault: m.heapTotal, heapDefaultUsed: m.heapUsed, newSpaceDefault: m.newSpace, externalDefault: m.external }
  } finally {
    await rm(home, { recursive: true, force: true })
  }
}

async function healthStatus (d: RunningDaemon): Promise<string> {
  return (JSON.parse((await d.call('GET', '/health')).body) as { status: string }).status
}

/** The start rows alone: an empty home, a prepared home of 10,000 files, idle RSS after that start (unless `idle` is false). */
async function runStartRows (name: string, dir: string, home10k: string, idle: boolean): Promise<Result> {
  ensureBuilt(dir)
  const home = await mkdtemp(join(tmpdir(), `hearth-bench-limits-${name}-`))
  try {
    const { d, times } = await timedStart(dir, home)
    await d.stop()
    if (idle) return { startEmpty: times, ...await start10kIdle(dir, home10k), ...await defaultIdle(dir) }
    const k10 = await timedStart(dir, home10k)
    await k10.d.stop()
    return { startEmpty: times, start10k: k10.times }
  } finally {
    await rm(home, { recursive: true, force: true })
  }
}

/** Start on the million-file home: to /health, to every part up, to the end of the initial scan. */
async function runMillion (dir: string, home: string): Promise<Result> {
  ensureBuilt(dir)
  const d = await startDaemon(dir, home)
  try {
    const since = performance.now() - d.startMs
    while (await healthStatus(d) === 'starting') await new Promise((resolve) => setTimeout(resolve, 10))
    const readyMillion = performance.now() - since
    // /health asked one after another through the scan: its slowest answer is how long the
    // event loop was held at a time
    let healthMaxDuringScan = 0
    let lastStatusAt = 0
    for (;;) {
      const t = performance.now()
      await d.call('GET', '/health')
      healthMaxDuringScan = Math.max(healthMaxDuringScan, performance.now() - t)
      if (performance.now() - lastStatusAt > 500) {
        lastStatusAt = performance.now()
        const status = JSON.parse((await d.call('GET', '/v1/status')).body) as { ingest: { scan: { done: boolean } } }
        if (status.ingest.scan.done) break
      }
      await new Promise((resolve) => setTimeout(resolve, 20))
    }
    const scanMillion = performance.now() - since
    return { startMillion: d.startMs, readyMillion, scanMillion, healthMaxDuringScan, rssMillion: await rssMb(d.child.pid!) }
  } finally {
    await d.stop()
  }
}

/**
 * 1,000 files dropped into the data folder of the running daemon `d`, timed until all are indexed.
 * With --prof the daemon is restarted under the profiler first (after its initial scan), and the
 * returned daemon is a fresh one without it.
 */
async function droppedPhase (name: string, dir: string, home: string, d: RunningDaemon, definitionUrl: string): Promise<{ d: RunningDaemon; dropped: number; droppedCpu: number; droppedSearchableCpu: number; droppedThreads: string; moved: Moved; profile?: string; movedProfile?: string }> {
  const profOut = profDir === null ? null : join(profDir, `${name}-dropped`)
  if (profOut !== null) {
    await d.stop()
    d = await startDaemon(dir, home, { nodeOptions: ['--cpu-prof', `--cpu-prof-dir=${profOut}`] })
    await waitForScan(d)
    await postMany(d, 4, 20, JSON.stringify({ username: 'warm', bio: 'x'.repeat(1024 - 40) })) // the schema's validator, as before the restart
  }
  const before = await storedCount(d)
  const versionsBefore = await versionCount(d)
  const from = monotonicMicros()
  const started = performance.now()
  const threadsBefore = await threadCpu(d.child.pid!)
  const cpuBefore = await cpuMs(d.child.pid!)
  await dropFiles(home, SCOPE, definitionUrl, DROPPED, 0)
  const droppedAt = performance.now()
  // polled through the scope's version count (one index read), not /v1/status, whose every part's
  // status costs the daemon more CPU than a file does
  while (await versionCount(d) < versionsBefore + DROPPED) await new Promise((resolve) => setTimeout(resolve, 10))
  await waitForStored(d, before + DROPPED, 300_000, 10)
  const dropped = DROPPED / ((performance.now() - started) / 1000)
  console.error(`  ${name}: dropping took ${(droppedAt - started).toFixed(0)} ms, indexing the last files ${(performance.now() - droppedAt).toFixed(0)} ms more`)
  const droppedCpu = (await cpuMs(d.child.pid!) - cpuBefore) / DROPPED
  const droppedThreads = threadCpuPerUnit(threadsBefore, await threadCpu(d.child.pid!), DROPPED)
  await waitForSearchable(d)
  const droppedSearchableCpu = (await cpuMs(d.child.pid!) - cpuBefore) / DROPPED
  const to = monotonicMicros()
  const moved = await movedPhase(dir, d)
  if (profOut === null) return { d, dropped, droppedCpu, droppedSearchableCpu, droppedThreads, moved }
  await d.stop()
  const profile = await summariseProfileDir(profOut, d.child.pid!, { from, to })
  const movedProfile = await summariseProfileDir(profOut, d.child.pid!, { from: moved.from, to: moved.to })
  return { d: await startDaemon(dir, home), dropped, droppedCpu, droppedSearchableCpu, droppedThreads, moved, profile, movedProfile }
}

/** The scopes the moved-in folders go to: the bench scope's schema under scopes whose folders do not exist yet. */
const MOVED_SCOPES = ['bench.moved1', 'bench.moved2', 'bench.moved3']

interface Moved { moved: number; movedCpu: number; movedWarm: number; movedWarmCpu: number; movedSearchableCpu: number; movedWarmSearchableCpu: number; from: number; to: number }

/**
 * The daemon's own rate, on the running daemon `d`: 1,000 files prepared outside the data folder
 * and moved in as one folder (one rename, what a user's `mv` does), timed from the rename until
 * all are indexed — three such folders one after another. The first comes right after the
 * dropped files; by the third the daemon is warm (its code optimised, its file-writer thread and
 * block folders made: a daemon's first few thousand files cost it up to twice the CPU of later
 * ones), which is what a long-running daemon pays. Each folder is a scope of its own, since a
 * rename cannot replace a folder with files in it; its schema is the bench scope's under that
 * scope, and an invalid POST first resolves it and compiles its validator without making the folder.
 */
async function movedPhase (dir: string, d: RunningDaemon): Promise<Moved> {
  const definition = JSON.parse(await readFile(join(dir, 'schemas', `${SCOPE}.json`), 'utf8')) as Record<string, unknown>
  const rounds: Array<{ perSecond: number; cpu: number; searchableCpu: number; from: number; to: number }> = []
  for (const scope of MOVED_SCOPES) {
    const added = await d.call('POST', '/v1/schemas', JSON.stringify({ ...definition, scope, name: `Bench ${scope}` }))
    if (added.status >= 300) throw new Error(`adding the moved folder's schema answered ${added.status}: ${added.body}`)
    const { definitionUrl } = (JSON.parse(added.body) as { schema: { definitionUrl: string } }).schema
    const warm = await d.call('POST', `/v1/data/${scope}`, JSON.stringify({ bio: 'no username: refused after validation' }))
    if (warm.status !== 400) throw new Error(`the moved folder's warm-up POST answered ${warm.status}: ${warm.body}`)
    const staging = await prepareFolder(d.home, scope, definitionUrl, DROPPED)
    const before = await storedCount(d)
    await new Promise((resolve) => setTimeout(resolve, 300)) // the previous files' checkpoint is over
    const from = monotonicMicros()
    const cpuBefore = await cpuMs(d.child.pid!)
    const started = performance.now()
    await rename(staging, join(d.home, 'data', scope))
    while (await versionCount(d, scope) < DROPPED) await new Promise((resolve) => setTimeout(resolve, 10))
    await waitForStored(d, before + DROPPED, 300_000, 10)
    const perSecond = DROPPED / ((performance.now() - started) / 1000)
    const cpu = (await cpuMs(d.child.pid!) - cpuBefore) / DROPPED
    const to = monotonicMicros()
    await waitForSearchable(d)
    rounds.push({ perSecond, cpu, searchableCpu: (await cpuMs(d.child.pid!) - cpuBefore) / DROPPED, from, to })
  }
  const first = rounds[0]!
  const last = rounds[rounds.length - 1]!
  return { moved: first.perSecond, movedCpu: first.cpu, movedWarm: last.perSecond, movedWarmCpu: last.cpu, movedSearchableCpu: first.searchableCpu, movedWarmSearchableCpu: last.searchableCpu, from: last.from, to: last.to }
}

/** Only the dropped-files rows (--dropped-only): a warm-up POST learns the schema, then the drop. */
async function runDroppedOnly (name: string, dir: string): Promise<Result> {
  ensureBuilt(dir)
  const home = await mkdtemp(join(tmpdir(), `hearth-bench-limits-${name}-`))
  try {
    const d = await startDaemon(dir, home)
    await postMany(d, 4, 50, JSON.stringify({ username: 'bench', bio: 'x'.repeat(1024 - 40) }))
    const latest = JSON.parse((await d.call('GET', `/v1/data/${SCOPE}`)).body) as { $schema: string }
    const drop = await droppedPhase(name, dir, home, d, latest.$schema)
    await drop.d.stop()
    return { dropped: drop.dropped, droppedCpu: drop.droppedCpu, droppedSearchableCpu: drop.droppedSearchableCpu, droppedThreads: drop.droppedThreads, droppedProfile: drop.profile, ...movedRows(drop.moved), movedProfile: drop.movedProfile }
  } finally {
    await rm(home, { recursive: true, force: true })
  }
}

function movedRows (m: Moved): Pick<Result, 'moved' | 'movedCpu' | 'movedWarm' | 'movedWarmCpu' | 'movedSearchableCpu' | 'movedWarmSearchableCpu'> {
  return { moved: m.moved, movedCpu: m.movedCpu, movedWarm: m.movedWarm, movedWarmCpu: m.movedWarmCpu, movedSearchableCpu: m.movedSearchableCpu, movedWarmSearchableCpu: m.movedWarmSearchableCpu }
}

async function waitForScan (d: RunningDaemon): Promise<void> {
  for (;;) {
    const status = JSON.parse((await d.call('GET', '/v1/status')).body) as { ingest?: { scan?: { done: boolean } } }
    if (status.ingest?.scan?.done === true) return
    await new Promise((resolve) => setTimeout(resolve, 20))
  }
}

async function runVariant (name: string, dir: string): Promise<Result> {
  ensureBuilt(dir)
  const home = await mkdtemp(join(tmpdir(), `hearth-bench-limits-${name}-`))
  const body1k = JSON.stringify({ username: 'bench', bio: 'x'.repeat(1024 - 40) })
  const body10mb = JSON.stringify({ username: 'big', bio: 'z'.repeat(10 * 1024 * 1024 - 40) })
  try {
    const first = await timedStart(dir, home)
    let d = first.d
    const startEmpty = first.times
    await postMany(d, 4, 50, body1k) // warm-up: schema resolution, JIT
    await d.stop()
    d = await startDaemon(dir, home, profDir !== null ? { nodeOptions: ['--cpu-prof', `--cpu-prof-dir=${join(profDir, name)}`] } : {})
    await postMany(d, 4, 50, body1k)
    const burstFrom = monotonicMicros()
    const cpuBefore = await cpuMs(d.child.pid!)
    const burst = await postMany(d, 16, N16, body1k)
    const burstTo = monotonicMicros()
    // the journal's checkpoint after the last 201 (up to ~200 ms later) is part of what the POSTs cost
    await checkpointSettled()
    const post16Cpu = (await cpuMs(d.child.pid!) - cpuBefore) / N16
    let profile: string | undefined
    if (profDir !== null) {
      await d.stop()
      profile = await summariseProfileDir(join(profDir, name), d.child.pid!, { from: burstFrom, to: burstTo })
      d = await startDaemon(dir, home)
    }
    const one = await postMany(d, 1, N1, body1k)
    if (postOnly) {
      await d.stop()
      return { post16: burst.perSecond, post16Cpu, post1p50: one.p50, post1p99: one.p99, startEmpty, profile }
    }
    const big: number[] = []
    for (let i = 0; i < 5; i++) big.push((await postMany(d, 1, 1, body10mb)).p50)
    const latest = JSON.parse((await d.call('GET', `/v1/data/${SCOPE}`)).body) as { $schema: string }
    const drop = await droppedPhase(name, dir, home, d, latest.$schema)
    d = drop.d
    const have = await storedCount(d)
    if (have < START_FILES) {
      await dropFiles(home, SCOPE, latest.$schema, START_FILES - have, DROPPED)
      await waitForStored(d, START_FILES, 600_000)
    }
    await d.stop()
    return { post16: burst.perSecond, post16Cpu, droppedCpu: drop.droppedCpu, droppedSearchableCpu: drop.droppedSearchableCpu, post1p50: one.p50, post1p99: one.p99, post10mb: median(big), dropped: drop.dropped, ...movedRows(drop.moved), startEmpty, ...await start10kIdle(dir, home), ...await defaultIdle(dir), profile, droppedProfile: drop.profile, movedProfile: drop.movedProfile }
  } finally {
    await rm(home, { recursive: true, force: true })
  }
}

// ── the run ─────────────────────────────────────────────────────────────────────────────────

const variants: Array<[string, string]> = [['current', REPO]]
// --also NAME=DIR (repeatable): more checkouts between the base and this one (e.g. one lever each), in the same interleaved reps
const also = args.flatMap((a, i) => a === '--also' && args[i + 1] !== undefined ? [args[i + 1]!] : [])
for (const spec of also.reverse()) variants.unshift([spec.slice(0, spec.indexOf('=')), resolve(spec.slice(spec.indexOf('=') + 1))])
if (base !== null) variants.unshift(['base', resolve(base)])
const selected = variants.filter(([name]) => onlyVariant === null || name === onlyVariant)

// the start rows have no floor to compare with
if (!startOnly && !droppedOnly) console.error('floors …')
const floors = startOnly || droppedOnly
  ? { fsync16: Number.NaN, fdatasync: Number.NaN, openpgp: Number.NaN, writer: Number.NaN, aesSha10mb: Number.NaN }
  : {
      fsync16: await floorWriteFsync(16, N16),
      fdatasync: await floorFdatasync(N1),
      openpgp: await floorOpenpgp(quick ? 500 : 2000),
      writer: floorHearthWriter(quick ? 2000 : 8000),
      aesSha10mb: postOnly ? Number.NaN : floorAesSha(10 * 1024 * 1024, 5)
    }
// the dropped-files row cannot beat the bench's own writing of those files
const dropFloor = startOnly || postOnly ? Number.NaN : await floorDropFiles(SCOPE, DROPPED)
const results = new Map<string, Result>()
/** Every run of a variant's rows (--dropped-only --reps N: N of them), the first being `results`'. */
const runs = new Map<string, Result[]>(selected.map(([name]) => [name, []]))
/** The same floors again once the Hearth rows are done. */
let floorsAfter = { fsync16: Number.NaN, fdatasync: Number.NaN }
/** Every start measured, by variant (--reps adds to the first run's). */
const starts = new Map<string, { empty: StartTimes[]; k10: StartTimes[] }>(selected.map(([name]) => [name, { empty: [], k10: [] }]))
const prepared: string[] = []
try {
  let home10k: string | null = null
  if (startOnly) {
    home10k = await mkdtemp(join(tmpdir(), 'hearth-bench-10k-'))
    prepared.push(home10k)
    console.error(`building a home of ${START_FILES} indexed files${bulkHome ? ' in bulk' : ' through the daemon'} …`)
    if (bulkHome) await buildMillionHome(home10k, START_FILES)
    else {
      ensureBuilt(REPO)
      await buildOwnerHome(REPO, home10k, START_FILES, (done) => { if (done % 5000 === 0) console.error(`  ${done} files posted`) })
    }
  }
  for (const [i, [name, dir]] of selected.entries()) {
    // the variant before left the disk busy (its home's deletion, dirty pages): flushed and let be,
    // so the next one does not pay it (the dropped rows' block creates and syncs are sensitive to it)
    if (i > 0) { execFileSync('sync'); await new Promise((resolve) => setTimeout(resolve, 2000)) }
    console.error(`${name} (${dir}) …`)
    results.set(name, home10k !== null ? await runStartRows(name, dir, home10k, !noIdle) : droppedOnly ? await runDroppedOnly(name, dir) : await runVariant(name, dir))
    runs.get(name)!.push(results.get(name)!)
  }
  // the dropped rows' repetitions, the variants interleaved, their order alternating (base, current,
  // current, base, base, …): a variant that runs second (after the other's home was deleted) or a
  // load that drifts through the run weighs on each alike
  for (let r = 1; droppedOnly && r < reps; r++) {
    for (const [name, dir] of r % 2 === 0 ? selected : [...selected].reverse()) {
      execFileSync('sync'); await new Promise((resolve) => setTimeout(resolve, 2000))
      console.error(`${name}, dropped rows, repetition ${r + 1} of ${reps} …`)
      runs.get(name)!.push(await runDroppedOnly(name, dir))
    }
  }
  // the repetitions of the start rows, the variants' order alternating (a changing load weighs on each alike)
  for (let r = 1; home10k !== null && r < reps; r++) {
    for (const [name, dir] of r % 2 === 0 ? selected : [...selected].reverse()) {
      console.error(`${name}, start rows, repetition ${r + 1} of ${reps} …`)
      const again = await runStartRows(name, dir, home10k, false)
      starts.get(name)!.empty.push(again.startEmpty!)
      starts.get(name)!.k10.push(again.start10k!)
    }
  }
  if (!startOnly && !droppedOnly) floorsAfter = { fsync16: await floorWriteFsync(16, N16), fdatasync: await floorFdatasync(N1) }
  if (million) {
    const homeM = await mkdtemp(join(tmpdir(), 'hearth-bench-million-'))
    prepared.push(homeM)
    const buildStarted = performance.now()
    await buildMillionHome(homeM, MILLION, (done) => { if (done % 100_000 === 0) console.error(`  ${done} files written and indexed (${((performance.now() - buildStarted) / 1000).toFixed(0)} s)`) })
    for (const [name, dir] of selected) {
      console.error(`${name}, ${MILLION} files …`)
      Object.assign(results.get(name)!, await runMillion(dir, homeM))
    }
  }
} finally {
  for (const home of prepared) await rm(home, { recursive: true, force: true })
}

const f = (n: number | undefined, digits = 0): string => n === undefined || Number.isNaN(n) ? '' : n.toFixed(digits)
/** With --prof the burst's and the dropped and moved files' CPU rows include the profiler's own cost. */
const cpuRow = `  daemon CPU per file (ms, user+sys${profDir !== null ? ', with the profiler' : ''})`
const searchableRow = `    … until the search has indexed them too (ms${profDir !== null ? ', with the profiler' : ''})`
const rows = [
  { what: '1 KB POST, 16 concurrent (files/s)', budget: '≥ 3000', floor: `create+write+fsync+close ${f(floors.fsync16)} before, ${f(floorsAfter.fsync16)} after · openpgp ${f(floors.openpgp)} · ours ${f(floors.writer)}`, key: 'post16' as const, digits: 0 },
  { what: cpuRow, budget: '', floor: '', key: 'post16Cpu' as const, digits: 2 },
  { what: '1 KB POST, one client, p50 (ms)', budget: '≤ 1', floor: `fdatasync ${f(floors.fdatasync, 2)} before, ${f(floorsAfter.fdatasync, 2)} after · openpgp ${f(1000 / floors.openpgp, 2)} · ours ${f(1000 / floors.writer, 2)}`, key: 'post1p50' as const, digits: 2 },
  { what: '1 KB POST, one client, p99 (ms)', budget: '', floor: '', key: 'post1p99' as const, digits: 2 },
  { what: '10 MB POST (ms, median of 5)', budget: '≤ 100', floor: `AES-CFB+SHA-256 ${f(floors.aesSha10mb, 1)}`, key: 'post10mb' as const, digits: 1 },
  { what: '1,000 dropped 1 KB files until indexed (files/s)', budget: '≥ 3000', floor: `dropping alone ${f(dropFloor)}`, key: 'dropped' as const, digits: 0 },
  { what: cpuRow, budget: '', floor: '', key: 'droppedCpu' as const, digits: 2 },
  { what: searchableRow, budget: '', floor: '', key: 'droppedSearchableCpu' as const, digits: 2 },
  { what: 'the same 1,000 files moved in as one folder (one rename) until indexed (files/s)', budget: '≥ 3000', floor: '', key: 'moved' as const, digits: 0 },
  { what: cpuRow, budget: '', floor: '', key: 'movedCpu' as const, digits: 2 },
  { what: searchableRow, budget: '', floor: '', key: 'movedSearchableCpu' as const, digits: 2 },
  { what: '  the third such folder, the daemon warm (files/s)', budget: '≥ 3000', floor: '', key: 'movedWarm' as const, digits: 0 },
  { what: cpuRow, budget: '', floor: '', key: 'movedWarmCpu' as const, digits: 2 },
  { what: searchableRow, budget: '', floor: '', key: 'movedWarmSearchableCpu' as const, digits: 2 },
  { what: `idle RSS after start, ${START_FILES} files, sync and dashboard off (MB)`, budget: '≤ 100', floor: '', key: 'rssIdle' as const, digits: 0 },
  { what: `  the same daemon ${QUIET_MS / 1000} s after its initial scan (MB)`, budget: '', floor: '', key: 'rssIdleQuiet' as const, digits: 0 },
  { what: 'idle RSS, default configuration (sync, mDNS, dashboard), empty home (MB)', budget: '≤ 100', floor: '', key: 'rssDefault' as const, digits: 0 },
  { what: '  file-backed: node binary, libraries (MB)', budget: '', floor: '', key: 'rssDefaultFile' as const, digits: 1 },
  { what: '  anonymous (MB)', budget: '', floor: '', key: 'rssDefaultAnon' as const, digits: 1 },
  { what: '    V8 heap committed (MB)', budget: '', floor: '', key: 'heapDefault' as const, digits: 1 },
  { what: '      of which new space (MB)', budget: '', floor: '', key: 'newSpaceDefault' as const, digits: 1 },
  { what: '    V8 heap used (MB)', budget: '', floor: '', key: 'heapDefaultUsed' as const, digits: 1 },
  { what: '    external: buffers, WASM (MB)', budget: '', floor: '', key: 'externalDefault' as const, digits: 1 },
  { what: `  the same daemon ${QUIET_MS / 1000} s after every part was up (MB)`, budget: '', floor: '', key: 'rssDefaultQuiet' as const, digits: 0 },
  { what: '    V8 heap committed then (MB)', budget: '', floor: '', key: 'heapDefaultQuiet' as const, digits: 1 },
  { what: '  the same daemon ~30 s after start (MB)', budget: '', floor: '', key: 'rssDefaultSettled' as const, digits: 0 },
  ...(million
    ? [
        { what: `start to /health, ${MILLION} files (ms)`, budget: '≤ 2000', floor: '', key: 'startMillion' as const, digits: 0 },
        { what: `start to every part up, ${MILLION} files (ms)`, budget: '', floor: '', key: 'readyMillion' as const, digits: 0 },
        { what: `start to initial scan done, ${MILLION} files (ms)`, budget: '', floor: '', key: 'scanMillion' as const, digits: 0 },
        { what: 'slowest /health during that scan (ms)', budget: '', floor: '', key: 'healthMaxDuringScan' as const, digits: 0 },
        { what: 'RSS after that scan (MB)', budget: '', floor: '', key: 'rssMillion' as const, digits: 0 }
      ]
    : [])
].filter((r) => [...results.values()].some((res) => res[r.key] !== undefined))
for (const [name, r] of results) {
  if (r.startEmpty !== undefined) starts.get(name)!.empty.unshift(r.startEmpty)
  if (r.start10k !== undefined) starts.get(name)!.k10.unshift(r.start10k)
}
/** One value, or the median [min–max] of several. */
const spread = (xs: number[], digits = 0): string => xs.length === 0 ? '' : xs.length === 1 ? f(xs[0], digits) : `${f(median(xs), digits)} [${f(Math.min(...xs), digits)}–${f(Math.max(...xs), digits)}]`
/** A row's value for a variant: over its runs (one, or --reps of the dropped rows). */
const cell = (name: string, key: keyof Result, digits: number): string => spread((runs.get(name) ?? []).map((r) => r[key]).filter((v): v is number => typeof v === 'number'), digits)
const startRows = [
  { what: 'start to first /health answer, empty home (ms)', budget: '', home: 'empty' as const, moment: 'first' as const },
  { what: 'start to /health "ok" (every part up), empty home (ms)', budget: '≤ 500', home: 'empty' as const, moment: 'ok' as const },
  { what: '  and a 1 KB POST sent then stored (ms)', budget: '', home: 'empty' as const, moment: 'posted' as const },
  { what: `start to first /health answer, ${START_FILES} files (ms)`, budget: '', home: 'k10' as const, moment: 'first' as const },
  { what: `start to /health "ok", ${START_FILES} files (ms)`, budget: '≤ 500', home: 'k10' as const, moment: 'ok' as const },
  { what: '  and a 1 KB POST sent then stored (ms)', budget: '', home: 'k10' as const, moment: 'posted' as const }
].filter((r) => [...starts.values()].some((s) => s[r.home].length > 0))
console.table([
  ...rows.map((r) => ({
    what: r.what,
    budget: r.budget,
    'floor (same run)': r.floor,
    ...Object.fromEntries(selected.map(([name]) => [name, cell(name, r.key, r.digits)]))
  })),
  ...startRows.map((r) => ({
    what: r.what,
    budget: r.budget,
    'floor (same run)': '',
    ...Object.fromEntries(selected.map(([name]) => [name, spread(starts.get(name)![r.home].map((t) => t[r.moment]))]))
  }))
])
for (const [name, all] of runs) {
  all.forEach((r, i) => {
    if (r.droppedThreads === undefined) return
    console.log(`${name}, run ${i + 1}: dropped ${f(r.dropped)} files/s, CPU ${f(r.droppedCpu, 2)} / ${f(r.droppedSearchableCpu, 2)} ms per file (until indexed / searchable); moved ${f(r.movedCpu, 2)} / ${f(r.movedSearchableCpu, 2)}, warm ${f(r.movedWarmCpu, 2)} / ${f(r.movedWarmSearchableCpu, 2)}`)
    console.log(`  the dropped files' CPU per file until indexed (ms) by thread: ${r.droppedThreads}`)
  })
}
for (const [name, r] of results) if (r.profile !== undefined) console.log(`\nCPU profile of the 1 KB burst, ${name}:\n${r.profile}`)
for (const [name, r] of results) if (r.droppedProfile !== undefined) console.log(`\nCPU profile of the 1,000 dropped files, ${name}:\n${r.droppedProfile}`)
for (const [name, r] of results) if (r.movedProfile !== undefined) console.log(`\nCPU profile of the third 1,000 files moved in as one folder, ${name}:\n${r.movedProfile}`)
