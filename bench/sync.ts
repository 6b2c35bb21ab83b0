// The sync budgets (docs/protocol.md §5) between two real daemon processes of one owner over real
// libp2p on 127.0.0.1 (TCP + pnet + Noise + Yamux), for the current checkout and (with --base DIR,
// an older checkout whose dependencies match) the old code side by side in the same run:
//   sets:  1,000 files of 1 KB, and 10 files of 10 MB, POSTed to a source daemon first
//   time:  from `POST /v1/peers` on a fresh, running, empty receiver until its index holds every
//          file (stored), i.e. connect, list, fetch, store, decrypt, validate, write, index
//   idle:  then a second round (`POST /v1/sync`) when nothing changed: time and bytes on the wire
//   pnet:  the private network's XSalsa20 per implementation, alone and under one stream between
//          two nodes in this process (bench/support/pnet-transport.ts), side by side
// Each row is the median of --rounds fresh receivers (default 3; 1 with --quick). Both daemons
// run the compiled JavaScript (`dist/`, built here when older than `src/`).
// bench/sync-engine.ts compares the engine's own knobs (fetch window, receives at once) in-process.
// Run: node --import tsx bench/sync.ts [--quick] [--base DIR] [--variant base|current] [--rounds N] [--only small|large|pnet]
//      [--prof DIR]  (CPU profiles of both daemons during the last round, summarised)
import '../src/polyfill.js'
import { randomBytes } from 'node:crypto'
import { mkdtemp, readdir, readFile, rm } from 'node:fs/promises'
import { tmpdir } from 'node:os'
import { join, resolve } from 'node:path'
import { createIdentity } from '../src/identity/identity.js'
import { homeLayout } from '../src/home.js'
import { monotonicMicros, summariseCpuProfile } from './cpu-profile.js'
import { REPO, type RunningDaemon } from './support/daemon.js'
import { ensureBuilt, startDistDaemon } from './support/dist-daemon.js'
import { bareCipherRow, streamRows, type CipherRow } from './support/pnet-transport.js'
import { cpuMs } from './support/cpu-time.js'

const args = process.argv.slice(2)
const opt = (name: string): string | null => { const i = args.indexOf(name); return i >= 0 ? args[i + 1] ?? null : null }
const quick = args.includes('--quick')
const base = opt('--base')
const only = opt('--only')
const onlyVariant = opt('--variant')
const profDir = opt('--prof')
const rounds = Number(opt('--rounds') ?? (quick ? 1 : 3))
const SCOPE = 'instagram.profile'
const PRIVATE_KEY = '0x0123456789abcdef0123456789abcdef0123456789abcdef0123456789abcdef'
const SYNC_ENV = { HEARTH_SYNC: 'true', HEARTH_MDNS: 'false', HEARTH_SYNC_LISTEN: '/ip4/127.0.0.1/tcp/0' }

interface FileSet { key: 'small' | 'large'; label: string; count: number; bytes: number; clients: number }
const SETS: FileSet[] = [
  { key: 'small', label: quick ? '250 × 1 KB' : '1,000 × 1 KB', count: quick ? 250 : 1000, bytes: 1024, clients: 16 },
  { key: 'large', label: quick ? '3 × 10 MB' : '10 × 10 MB', count: quick ? 3 : 10, bytes: 10 * 1024 * 1024, clients: 1 }
].filter((s) => only === null || s.key === only) as FileSet[]

interface Round { seconds: number; cpu: { receiver: number; source: number }; idleMs: number; idleBytes: number; profile?: string; window?: { from: number; to: number } }

async function newHome (name: string): Promise<string> {
  const root = await mkdtemp(join(tmpdir(), `hearth-bench-sync-${name}-`))
  await createIdentity(homeLayout(root), { privateKey: PRIVATE_KEY })
  return root
}

function syncAddress (d: RunningDaemon): string {
  const m = /sync\s+peer \S+ on (\S+)/.exec(d.output())
  if (m === null) throw new Error(`no sync address printed:\n${d.output()}`)
  return m[1]!
}

/**
 * Files of the set the receiver has indexed (received files are indexed stored at once). The
 * scope's version count, not /v1/status: polled every 10 ms, the status of every part cost the
 * receiver ~8 % of its CPU during the transfer (its file counts walk the index by state).
 */
async function storedCount (d: RunningDaemon): Promise<number> {
  const r = await d.call('GET', `/v1/data/${SCOPE}/versions?limit=1`)
  if (r.status === 404) return 0 // the scope is not known here before the first file arrives
  if (r.status !== 200) throw new Error(`versions answered ${r.status}: ${r.body.slice(0, 300)}`)
  return (JSON.parse(r.body) as { total: number }).total
}

/** CPU time (user + system, ms, every thread) the daemon has used so far: load inflates it far less than time. */
async function fill (source: RunningDaemon, set: FileSet): Promise<number> {
  let next = 0
  let cipherBytes = 0
  await Promise.all(Array.from({ length: set.clients }, async () => {
    while (next < set.count) {
      const i = next++
      // base64 of random bytes: incompressible and distinct
      const bio = randomBytes(Math.floor((set.bytes - 60) * 3 / 4)).toString('base64')
      const r = await source.json<{ record?: { encryptedSize?: number } }>('POST', `/v1/data/${SCOPE}`, { username: `u${i}`, bio })
      cipherBytes += r.record?.encryptedSize ?? set.bytes
    }
  }))
  return cipherBytes
}

interface SyncStats { bytesSent: number; bytesReceived: number }
async function wireBytes (d: RunningDaemon): Promise<number> {
  const s = await d.json<{ stats?: SyncStats }>('GET', '/v1/peers')
  return (s.stats?.bytesSent ?? 0) + (s.stats?.bytesReceived ?? 0)
}

async function idle (d: RunningDaemon): Promise<boolean> {
  const s = await d.json<{ peers?: Array<{ syncing?: boolean }> }>('GET', '/v1/peers')
  return (s.peers ?? []).every((p) => p.syncing !== true)
}

async function waitUntil (label: string, check: () => Promise<boolean>, timeoutMs: number, everyMs = 10): Promise<void> {
  const deadline = Date.now() + timeoutMs
  while (!(await check())) {
    if (Date.now() > deadline) throw new Error(`timed out: ${label}`)
    await new Promise((resolve) => setTimeout(resolve, everyMs))
  }
}

/**
 * The newest daemon's profiles (node writes CPU.<date>.<time>.<pid>.<thread>.<seq>.cpuprofile, one per
 * thread), summarised within `window`: its main thread, then each worker thread it ran.
 */
async function summariseNewest (dir: string, window: { from: number; to: number }): Promise<string> {
  const files = (await readdir(dir)).filter((f) => f.endsWith('.cpuprofile')).sort()
  const pid = /^CPU\.\d+\.\d+\.(\d+)\./.exec(files.at(-1)!)?.[1]
  const own = files.filter((f) => f.split('.')[3] === pid)
  const parts: string[] = []
  for (const f of own) {
    const thread = f.split('.')[4]
    const text = summariseCpuProfile(JSON.parse(await readFile(join(dir, f), 'utf8')) as never, { window })
    parts.push(thread === '0' ? text : `worker thread ${thread}:\n${text}`)
  }
  return parts.join('\n')
}

async function receiveRound (dir: string, variant: string, source: RunningDaemon, set: FileSet, prof: string | null): Promise<Round> {
  const home = await newHome(`${variant}-dst`)
  const nodeArgs = prof !== null ? ['--cpu-prof', '--cpu-prof-dir', join(prof, 'receiver')] : []
  const target = await startDistDaemon(dir, home, { env: SYNC_ENV, nodeArgs })
  try {
    const from = monotonicMicros()
    const cpuBefore = { receiver: await cpuMs(target.child.pid!), source: await cpuMs(source.child.pid!) }
    const started = performance.now()
    await target.json('POST', '/v1/peers', { multiaddr: syncAddress(source) })
    await waitUntil(`${set.label} on the receiver`, async () => (await storedCount(target)) >= set.count, 30 * 60_000)
    const seconds = (performance.now() - started) / 1000
    const cpu = { receiver: await cpuMs(target.child.pid!) - cpuBefore.receiver, source: await cpuMs(source.child.pid!) - cpuBefore.source }
    const to = monotonicMicros()
    // the reverse pull (the source reading the receiver's log) and the last cursor writes settle;
    // the receiver pokes the source only once its pull has ended (after the 100 ms poke window)
    await waitUntil('both sides idle', async () => await idle(target) && await idle(source), 60_000, 50)
    await new Promise((resolve) => setTimeout(resolve, 300))
    await waitUntil('both sides idle after the last poke', async () => await idle(target) && await idle(source), 60_000, 50)
    const before = await wireBytes(target)
    const idleStarted = performance.now()
    await target.json('POST', '/v1/sync')
    const idleMs = performance.now() - idleStarted
    const idleBytes = await wireBytes(target) - before
    await target.stop()
    let profile: string | undefined
    if (prof !== null) profile = await summariseNewest(join(prof, 'receiver'), { from, to })
    return { seconds, cpu, idleMs, idleBytes, ...(profile !== undefined ? { profile: `receiver:\n${profile}`, window: { from, to } } : {}) }
  } finally {
    await target.stop()
    await rm(home, { recursive: true, force: true })
  }
}

interface Result { seconds: number; perFileMs: number; mbPerSec: number; cpu: { receiver: number; source: number }; idleMs: number; idleBytes: number; all: number[]; profiles: string[] }

function median (xs: number[]): number {
  const s = [...xs].sort((a, b) => a - b)
  return s[Math.floor((s.length - 1) / 2)]!
}

async function runSet (variant: string, dir: string, set: FileSet): Promise<Result> {
  const home = await newHome(`${variant}-src`)
  const sourceProf = profDir !== null ? join(profDir, variant, set.key) : null
  let source = await startDistDaemon(dir, home, { env: SYNC_ENV })
  try {
    const filled = performance.now()
    const cipherBytes = await fill(source, set)
    console.error(`  ${variant}: ${set.label} POSTed in ${((performance.now() - filled) / 1000).toFixed(1)} s`)
    const done: Round[] = []
    for (let r = 0; r < rounds; r++) {
      const last = r === rounds - 1
      if (last && sourceProf !== null) {
        // profile the source during the last round only: restart it under --cpu-prof
        await source.stop()
        source = await startDistDaemon(dir, home, { env: SYNC_ENV, nodeArgs: ['--cpu-prof', '--cpu-prof-dir', join(sourceProf, 'source')] })
      }
      const round = await receiveRound(dir, variant, source, set, last ? sourceProf : null)
      console.error(`  ${variant}: ${set.label} round ${r + 1}: ${round.seconds.toFixed(2)} s`)
      done.push(round)
    }
    const lastRound = done.at(-1)!
    await source.stop()
    const profiles: string[] = []
    if (sourceProf !== null && lastRound.window !== undefined) {
      profiles.push(lastRound.profile!)
      profiles.push(`source:\n${await summariseNewest(join(sourceProf, 'source'), lastRound.window)}`)
    }
    const seconds = median(done.map((d) => d.seconds))
    return {
      seconds,
      perFileMs: seconds * 1000 / set.count,
      mbPerSec: cipherBytes / 1e6 / seconds,
      idleMs: median(done.map((d) => d.idleMs)),
      idleBytes: median(done.map((d) => d.idleBytes)),
      cpu: { receiver: median(done.map((d) => d.cpu.receiver)), source: median(done.map((d) => d.cpu.source)) },
      all: done.map((d) => d.seconds),
      profiles
    }
  } finally {
    await source.stop()
    await rm(home, { recursive: true, force: true })
  }
}

let pnetRows: CipherRow[] = []
if (only === null || only === 'pnet') {
  console.error('pnet: XSalsa20 implementations …')
  pnetRows = [await bareCipherRow(quick ? 100 : 300), ...await streamRows(quick ? 50 : 100, quick ? 1 : 3)]
}

const variants: Array<[string, string]> = [['current', REPO]]
if (base !== null) variants.unshift(['base', resolve(base)])
const selected = variants.filter(([name]) => onlyVariant === null || name === onlyVariant)
const results = new Map<string, Map<string, Result>>()
for (const [name, dir] of selected) {
  ensureBuilt(dir)
  const bySet = new Map<string, Result>()
  for (const set of SETS) {
    console.error(`${name} (${dir}): ${set.label} …`)
    bySet.set(set.key, await runSet(name, dir, set))
  }
  results.set(name, bySet)
}

const f = (n: number | undefined, digits = 0): string => n === undefined ? '' : n.toFixed(digits)
const rows: Array<Record<string, string>> = []
for (const set of SETS) {
  const budget = set.key === 'small' ? '≤ 3 s (1,000 files)' : '≥ 60 MB/s'
  const pick = (name: string): Result | undefined => results.get(name)?.get(set.key)
  rows.push({ what: `sync ${set.label} until indexed (s)`, budget: set.key === 'small' ? budget : '', ...Object.fromEntries(selected.map(([n]) => [n, `${f(pick(n)?.seconds, 2)} (${pick(n)?.all.map((s) => s.toFixed(2)).join(' / ')})`])) })
  rows.push({ what: `sync ${set.label}: ms per file / MB/s of ciphertext`, budget: set.key === 'large' ? budget : '', ...Object.fromEntries(selected.map(([n]) => [n, `${f(pick(n)?.perFileMs, 1)} / ${f(pick(n)?.mbPerSec, 1)}`])) })
  rows.push({ what: `sync ${set.label}: CPU s, receiver / source (user+sys, all threads)`, budget: '', ...Object.fromEntries(selected.map(([n]) => [n, `${f((pick(n)?.cpu.receiver ?? 0) / 1000, 2)} / ${f((pick(n)?.cpu.source ?? 0) / 1000, 2)}`])) })
  rows.push({ what: `second round, nothing new (${set.label}): ms / bytes on the wire`, budget: '', ...Object.fromEntries(selected.map(([n]) => [n, `${f(pick(n)?.idleMs, 1)} / ${f(pick(n)?.idleBytes)}`])) })
}
if (pnetRows.length > 0) {
  console.table(pnetRows)
  console.log('pnet: wasm is the `xsalsa20` package @libp2p/pnet uses, sodium is libsodium (sodium-native); both with Noise\'s own node:crypto ChaCha20-Poly1305 (the code before); the default now is libsodium for both (src/sync/noise-crypto.ts).')
}
if (rows.length > 0) console.table(rows)
console.log('time: from `POST /v1/peers` on a fresh running receiver until it has indexed every file; median of the rounds (each round in parentheses).')
console.log('CPU: what each daemon used in that time, all threads (the receiver\'s decryption worker included): on a shared machine compare these more than the times.')
for (const [name, bySet] of results) {
  for (const [key, r] of bySet) for (const p of r.profiles) console.log(`\nCPU profile, ${name}, ${key} set, during the last round, ${p}`)
}
