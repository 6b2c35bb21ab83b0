// LevelDB operations per file on each ingest path, counted in real daemon processes (the calls
// into classic-level, by database: `index` is the home's index, `datastore` the embedded node's
// pins and small blocks): keys read, read calls, operations written and write calls, synced
// writes, per file, including each path's journal checkpoint (the small blocks and their pins).
//   POST:     1 KB POSTs at 16 clients
//   dropped:  1,000 × 1 KB envelopes written into the data folder one by one
//   received: as many POSTed files pulled by a fresh daemon of the same owner (its counts)
// Counts do not depend on the machine's load, so one run answers; `--base DIR` counts an older
// checkout (compiled `dist/`) side by side. A preload (support/level-ops.cjs) does the counting.
// Run: node --import tsx bench/level-ops.ts [--quick] [--base DIR] [--only post|dropped|received] [--namespaces] [--stacks]
import '../src/polyfill.js'
import { mkdtemp, readFile, rm } from 'node:fs/promises'
import { existsSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join, resolve } from 'node:path'
import { fileURLToPath } from 'node:url'
import { createIdentity } from '../src/identity/identity.js'
import { homeLayout } from '../src/home.js'
import { ensureBuilt, startDistDaemon } from './support/dist-daemon.js'
import type { RunningDaemon } from './support/daemon.js'
import { dropFiles } from './support/dropped-files.js'
import { CHECKPOINT_SETTLE_MS } from './support/cpu-time.js'

const args = process.argv.slice(2)
const opt = (name: string): string | null => { const i = args.indexOf(name); return i >= 0 ? args[i + 1] ?? null : null }
const quick = args.includes('--quick')
/** Also per namespace (sublevel, or Helia's key prefix): which reads and writes make the counts. */
const byNamespace = args.includes('--namespaces') || args.includes('--stacks')
/** And by the functions that made them. */
const byStack = args.includes('--stacks')
const base = opt('--base')
const only = opt('--only')
const N = quick ? 300 : 1000
const SCOPE = 'instagram.profile'
const PRIVATE_KEY = '0x0123456789abcdef0123456789abcdef0123456789abcdef0123456789abcdef'
const PRELOAD = fileURLToPath(new URL('./support/level-ops.cjs', import.meta.url))
const SYNC_ENV = { HEARTH_SYNC: 'true', HEARTH_MDNS: 'false', HEARTH_SYNC_LISTEN: '/ip4/127.0.0.1/tcp/0' }

type Counts = Record<string, Record<string, number>>

interface Counted { d: RunningDaemon; file: string }

async function start (dir: string, home: string, env: Record<string, string> = {}): Promise<Counted> {
  const file = join(home, 'level-ops.json')
  const d = await startDistDaemon(dir, home, { env: { NODE_OPTIONS: `--require=${PRELOAD}`, HEARTH_BENCH_LEVEL_OPS: file, ...(byNamespace ? { HEARTH_BENCH_LEVEL_OPS_BY_NAMESPACE: '1' } : {}), ...(byStack ? { HEARTH_BENCH_LEVEL_OPS_STACKS: '1' } : {}), ...env } })
  return { d, file }
}

async function snapshot ({ d, file }: Counted): Promise<Counts> {
  await rm(file, { force: true })
  process.kill(d.pid, 'SIGUSR2')
  // the daemon renames the counts into place whole (level-ops.cjs): there once it exists
  for (let i = 0; i < 200 && !existsSync(file); i++) await sleep(10)
  return JSON.parse(await readFile(file, 'utf8')) as Counts
}

const sleep = async (ms: number): Promise<void> => { await new Promise((resolve) => setTimeout(resolve, ms)) }

function perFile (before: Counts, after: Counts, n: number): Counts {
  const out: Counts = {}
  for (const [db, c] of Object.entries(after)) {
    for (const [what, v] of Object.entries(c)) {
      const d = (v - (before[db]?.[what] ?? 0)) / n
      if (d !== 0) (out[db] ??= {})[what] = d
    }
  }
  return out
}

async function versions (d: RunningDaemon): Promise<number> {
  const r = await d.call('GET', `/v1/data/${SCOPE}/versions?limit=1`)
  return r.status === 200 ? (JSON.parse(r.body) as { total: number }).total : 0
}

async function until (check: () => Promise<boolean>, label: string): Promise<void> {
  const deadline = Date.now() + 10 * 60_000
  while (!(await check())) {
    if (Date.now() > deadline) throw new Error(`timed out: ${label}`)
    await sleep(20)
  }
}

async function post (d: RunningDaemon, count: number, clients: number): Promise<void> {
  let next = 0
  await Promise.all(Array.from({ length: clients }, async () => {
    while (next < count) {
      const i = next++
      await d.json('POST', `/v1/data/${SCOPE}`, { username: `u${i}`, bio: `${i}-`.padEnd(980, 'x') })
    }
  }))
}

async function newHome (name: string): Promise<string> {
  const home = await mkdtemp(join(tmpdir(), `hearth-bench-level-ops-${name}-`))
  await createIdentity(homeLayout(home), { privateKey: PRIVATE_KEY })
  return home
}

async function variant (name: string, dir: string): Promise<Record<string, Counts>> {
  ensureBuilt(dir)
  const rows: Record<string, Counts> = {}
  if (only === null || only === 'post' || only === 'dropped') await local(dir, name, rows)
  if (only === null || only === 'received') await received(dir, name, rows)
  return rows
}

/** POSTs and dropped files on a daemon with sync off (as bench/limits.ts runs them). */
async function local (dir: string, name: string, rows: Record<string, Counts>): Promise<void> {
  const home = await newHome(`${name}-local`)
  const c = await start(dir, home, { HEARTH_SYNC: 'false' })
  try {
    await post(c.d, 20, 4) // the schema learnt, code warm
    await sleep(CHECKPOINT_SETTLE_MS)
    if (only !== 'dropped') {
      const before = await snapshot(c)
      await post(c.d, N, 16)
      await sleep(CHECKPOINT_SETTLE_MS)
      rows.POST = perFile(before, await snapshot(c), N)
    }
    if (only !== 'post') {
      const definitionUrl = (JSON.parse((await c.d.call('GET', `/v1/data/${SCOPE}`)).body) as { $schema: string }).$schema
      const have = await versions(c.d)
      const before = await snapshot(c)
      await dropFiles(home, SCOPE, definitionUrl, N, 0)
      await until(async () => (await versions(c.d)) >= have + N, 'dropped files indexed')
      await sleep(CHECKPOINT_SETTLE_MS)
      rows.dropped = perFile(before, await snapshot(c), N)
    }
  } finally {
    await c.d.stop()
    await rm(home, { recursive: true, force: true })
  }
}

/** N POSTed files pulled by a fresh daemon of the same owner: the receiver's counts. */
async function received (dir: string, name: string, rows: Record<string, Counts>): Promise<void> {
  const home = await newHome(`${name}-src`)
  const c = await start(dir, home, SYNC_ENV)
  const targetHome = await newHome(`${name}-dst`)
  try {
    await post(c.d, N, 16)
    const t = await start(dir, targetHome, SYNC_ENV)
    try {
      const before = await snapshot(t)
      const address = /sync\s+peer \S+ on (\S+)/.exec(c.d.output())?.[1]
      if (address === undefined) throw new Error(`no sync address printed:\n${c.d.output()}`)
      await t.d.json('POST', '/v1/peers', { multiaddr: address })
      await until(async () => (await versions(t.d)) >= N, 'received files indexed')
      await sleep(CHECKPOINT_SETTLE_MS)
      rows.received = perFile(before, await snapshot(t), N)
    } finally {
      await t.d.stop()
    }
  } finally {
    await c.d.stop()
    await rm(home, { recursive: true, force: true })
    await rm(targetHome, { recursive: true, force: true })
  }
}

const variants: Array<[string, string]> = [['current', fileURLToPath(new URL('../', import.meta.url))]]
if (base !== null) variants.unshift(['base', resolve(base)])
const results = new Map<string, Record<string, Counts>>()
for (const [name, dir] of variants) results.set(name, await variant(name, dir))

const fmt = (n: number | undefined): string => n === undefined ? '0' : Number.isInteger(n) ? String(n) : n.toFixed(2)
console.log(`LevelDB operations per file (${N} files per path)`)
for (const path of Object.keys(results.get('current')!)) {
  console.log(`\n${path}`)
  const dbs = new Set([...results.values()].flatMap((r) => Object.keys(r[path] ?? {})))
  for (const db of [...dbs].sort()) {
    const whats = new Set([...results.values()].flatMap((r) => Object.keys(r[path]?.[db] ?? {})))
    for (const what of [...whats].sort()) {
      const cols = variants.map(([name]) => `${name} ${fmt(results.get(name)![path]?.[db]?.[what]).padStart(8)}`)
      console.log(`  ${db.padEnd(10)} ${what.padEnd(15)} ${cols.join('   ')}`)
    }
  }
}
