// Bench of the file index (docs/protocol.md §5: a million files without memory growing with the count,
// restart in seconds). Usage: node --import tsx bench/index.ts [N]   (or HEARTH_BENCH_N=N;
// HEARTH_BENCH_SKIP_VERIFY=1 skips the full verify). Prints insert throughput for four write
// styles, memory at checkpoints, then restarts (a fresh process) on the database at 100k and at N
// records: open time, query latencies, change-log and rescan walks, verify, and memory of each.
// The temp folders are removed at the end.
// --write-path [--base DIR] [--rounds R] [--count N]: the write of one ingested small file alone
// (its record and journal entry, group-committed) at 1, 4 and 16 writers at once, side by side
// with an older checkout (support/index-write-path.ts).
import '../src/polyfill.js'
import { cp, mkdtemp, rm, readdir, readFile, stat } from 'node:fs/promises'
import { spawnSync } from 'node:child_process'
import { fileURLToPath } from 'node:url'
import os, { tmpdir } from 'node:os'
import { join } from 'node:path'
import { performance } from 'node:perf_hooks'
import { openDatabase, type HearthDatabase } from '../src/db/database.js'
import { openFileIndex, type FileIndex } from '../src/db/file-index.js'
import type { FileRecord } from '../src/db/types.js'
import { writePathChild } from './support/index-write-path.js'

const N = Number((process.argv[2]?.startsWith('--') !== true ? process.argv[2] : undefined) ?? process.env.HEARTH_BENCH_N ?? 1_000_000)
const SCOPES = 50
const BATCH = 1000
const QUERIES = 2000
const T0 = Date.UTC(2024, 0, 1)

const scopeOf = (i: number): string => `bench.scope${String(i % SCOPES).padStart(2, '0')}`
// Every 4th record lands on a whole second (no fraction), the rest carry milliseconds.
const collectedAtOf = (i: number): string => {
  const iso = new Date(T0 + i * 250).toISOString()
  return i % 4 === 0 ? iso.replace('.000Z', 'Z') : iso
}
const pathOf = (i: number): string => `${scopeOf(i)}/${collectedAtOf(i).replaceAll(':', '-')}-${i}.json`
const cidOf = (i: number): string => `bafkreibench${i.toString(36).padStart(8, '0')}`

function recordOf (i: number): FileRecord {
  return {
    path: pathOf(i),
    scope: scopeOf(i),
    collectedAt: collectedAtOf(i),
    schemaId: String(1 + (i % SCOPES)),
    cid: cidOf(i),
    size: 1024,
    encryptedSize: 1300,
    sha256: (i * 2654435761 >>> 0).toString(16).padStart(8, '0').repeat(8),
    mtimeMs: T0 + i,
    state: i % 10 === 0 ? 'registered' : 'stored',
    fileId: i % 10 === 0 ? String(i) : null,
    origin: 'local',
    updatedAt: T0 + i
  }
}

const mb = (n: number): string => `${(n / 1048576).toFixed(1)} MB`
/**
 * LevelDB reads its table files through mmap, so pages of the files a walk touched count in RSS
 * as file-backed memory (page cache the kernel reclaims at will). RssAnon is the process's own
 * memory (JS heap, malloc, LevelDB caches): that is the number that must not grow with the count.
 */
async function rssParts (): Promise<string> {
  try {
    const status = await readFile('/proc/self/status', 'utf8')
    const kb = (name: string): number => Number(new RegExp(`^${name}:\\s+(\\d+) kB`, 'm').exec(status)?.[1] ?? Number.NaN) * 1024
    return `anon ${mb(kb('RssAnon')).padStart(9)}  file ${mb(kb('RssFile')).padStart(9)}`
  } catch {
    return ''
  }
}

async function memory (label: string): Promise<void> {
  const m = process.memoryUsage()
  console.log(`  memory ${label.padEnd(28)} rss ${mb(m.rss).padStart(9)} (${await rssParts()})  heapUsed ${mb(m.heapUsed).padStart(8)}`)
}
const rate = (count: number, ms: number): string => `${Math.round(count / (ms / 1000)).toLocaleString('en-US')}/s`
// CPU of the whole process (JS thread plus LevelDB's threads): on a shared, busy machine this is
// the steadier number; wall-clock rates are printed beside it.
const cpuNow = (): number => { const c = process.cpuUsage(); return (c.user + c.system) / 1000 }
const cpuPer = (ms: number, count: number): string => `${((ms * 1000) / count).toFixed(1)} µs CPU/record`

async function dirSize (dir: string): Promise<number> {
  let total = 0
  for (const name of await readdir(dir)) total += (await stat(join(dir, name))).size
  return total
}

async function latency (label: string, fn: (i: number) => Promise<unknown>): Promise<void> {
  const times: number[] = []
  for (let i = 0; i < QUERIES; i++) {
    const t = performance.now()
    await fn(i)
    times.push(performance.now() - t)
  }
  times.sort((a, b) => a - b)
  const p = (q: number): string => `${times[Math.min(times.length - 1, Math.floor(q * times.length))].toFixed(3)} ms`
  console.log(`    ${label.padEnd(40)} p50 ${p(0.5).padStart(9)}  p99 ${p(0.99).padStart(9)}`)
}

// Deterministic pseudo-random indexes, so runs are comparable.
let seed = 42
const randomIndex = (n: number): number => { seed = (seed * 1103515245 + 12345) & 0x7fffffff; return seed % n }

async function insertVariant (label: string, count: number, write: (index: FileIndex, from: number, to: number) => Promise<void>, step: number): Promise<void> {
  const dir = await mkdtemp(join(tmpdir(), 'hearth-bench-index-'))
  const db = await openDatabase(dir)
  const index = await openFileIndex({ db })
  const t = performance.now()
  const c = cpuNow()
  for (let i = 0; i < count; i += step) await write(index, i, Math.min(count, i + step))
  const ms = performance.now() - t
  console.log(`  ${label.padEnd(40)} ${rate(count, ms).padStart(12)}  ${cpuPer(cpuNow() - c, count).padStart(22)}  (${count.toLocaleString('en-US')} records)`)
  await db.close()
  await rm(dir, { recursive: true, force: true })
}

async function main (): Promise<void> {
  console.log(`file index bench: N=${N.toLocaleString('en-US')} records in ${SCOPES} scopes (node ${process.version}, load average ${os.loadavg()[0].toFixed(1)} on ${os.cpus().length} cores)`)
  await memory('start')

  console.log('\ninsert, write styles side by side (fresh database each):')
  const side = Math.min(N, 20_000)
  await insertVariant('put(), 1 at a time', side, async (ix, from) => { await ix.put(recordOf(from)) }, 1)
  await insertVariant('put(), 32 concurrent', side, async (ix, from, to) => {
    await Promise.all(Array.from({ length: to - from }, async (_, k) => await ix.put(recordOf(from + k))))
  }, 32)
  await insertVariant('putMany(100)', side, async (ix, from, to) => {
    await ix.putMany(Array.from({ length: to - from }, (_, k) => recordOf(from + k)))
  }, 100)
  await insertVariant(`putMany(${BATCH})`, side, async (ix, from, to) => {
    await ix.putMany(Array.from({ length: to - from }, (_, k) => recordOf(from + k)))
  }, BATCH)

  const dir = await mkdtemp(join(tmpdir(), 'hearth-bench-index-'))
  const small = `${dir}-at-100k`
  const smallN = Math.min(N, 100_000)
  try {
    let db: HearthDatabase = await openDatabase(dir)
    let index = await openFileIndex({ db })
    console.log(`\nmain insert: ${N.toLocaleString('en-US')} records with putMany(${BATCH})`)
    const checkpoints = new Set([smallN, Math.floor(N / 2), N])
    const t = performance.now()
    const c = cpuNow()
    for (let i = 0; i < N; i += BATCH) {
      const to = Math.min(N, i + BATCH)
      await index.putMany(Array.from({ length: to - i }, (_, k) => recordOf(i + k)))
      if (checkpoints.has(to)) {
        const ms = performance.now() - t
        console.log(`  ${to.toLocaleString('en-US').padStart(10)} records  ${(ms / 1000).toFixed(1).padStart(6)} s  ${rate(to, ms).padStart(10)}  ${cpuPer(cpuNow() - c, to)}`)
        await memory(`after ${to.toLocaleString('en-US')} inserts`)
      }
      if (to === smallN && smallN < N) {
        // Keep a copy of the database as it was at 100k, to restart on it below.
        await db.close()
        await cp(dir, small, { recursive: true })
        db = await openDatabase(dir)
        index = await openFileIndex({ db })
      }
    }
    console.log(`  database on disk: ${mb(await dirSize(dir))} (${(await dirSize(dir) / N).toFixed(0)} bytes/record)`)
    await db.close()

    // A restarted daemon is a fresh process: measure reads there, at 100k and at N records, so
    // memory that depends on the count would show as a difference between the two.
    const runs = smallN < N ? [[small, smallN], [dir, N]] as const : [[dir, N]] as const
    for (const [where, count] of runs) {
      console.log(`\n── fresh process on the database of ${count.toLocaleString('en-US')} records ──`)
      const child = spawnSync(process.execPath, ['--import', 'tsx', fileURLToPath(import.meta.url), '--read', where, String(count)], { stdio: 'inherit', env: process.env })
      if (child.status !== 0) throw new Error(`read phase failed with ${String(child.status ?? child.signal)}`)
    }
  } finally {
    await rm(dir, { recursive: true, force: true })
    await rm(small, { recursive: true, force: true })
  }
}

/** Reopen a database of `n` bench records and measure what a restarted daemon does with it. */
async function readPhase (dir: string, n: number): Promise<void> {
  await memory('process start')
  const tr = performance.now()
  const db = await openDatabase(dir)
  const index = await openFileIndex({ db })
  const opened = performance.now() - tr
  const first = await index.latest(scopeOf(7))
  console.log(`  open database + index: ${opened.toFixed(0)} ms; first query after: ${(performance.now() - tr - opened).toFixed(1)} ms (${first?.path})`)
  console.log(`  counts: ${JSON.stringify(await index.countsByState())}, seq ${await index.currentSeq()}`)
  await memory('after open')

  console.log(`  query latency (${QUERIES} sequential queries each, random targets):`)
  await latency('get(path)', async () => await index.get(pathOf(randomIndex(n))))
  await latency('latest(scope)', async (i) => await index.latest(scopeOf(i)))
  await latency('latest(scope, {states:[registered]})', async (i) => await index.latest(scopeOf(i * 10), { states: ['registered'] }))
  await latency('atOrBefore(scope, random instant)', async (i) => await index.atOrBefore(scopeOf(i), new Date(T0 + randomIndex(n) * 250 + 100).toISOString()))
  await latency('versions(scope, limit 50)', async (i) => await index.versions(scopeOf(i), { limit: 50 }))
  await latency('versions(scope, limit 50, offset 1000)', async (i) => await index.versions(scopeOf(i), { limit: 50, offset: 1000, order: 'asc' }))
  await latency('byCid(cid)', async () => await index.byCid(cidOf(randomIndex(n))))
  await latency('byFileId(id)', async () => await index.byFileId(String(randomIndex(n / 10) * 10)))
  await latency('countVersions(scope)', async (i) => await index.countVersions(scopeOf(i)))
  await latency(`scopes({prefix, limit 100}) over ${SCOPES} scopes`, async () => await index.scopes({ prefix: 'bench.', limit: 100 }))
  await latency('byState(registered, limit 100, after)', async () => await index.byState('registered', { limit: 100, after: pathOf(randomIndex(n)) }))
  await latency('countsByState()', async () => await index.countsByState())
  await latency('put (update one record to registered)', async () => {
    const i = randomIndex(n)
    await index.put({ ...recordOf(i), state: 'registered', fileId: `u${i}` })
  })
  await memory('after queries')

  const tc = performance.now()
  let since = 0
  let read = 0
  for (;;) {
    const page = await index.changesSince(since, 1000)
    if (page.length === 0) break
    read += page.length
    since = page[page.length - 1].seq
  }
  console.log(`  changesSince (sync cursor, pages of 1000): ${read.toLocaleString('en-US')} changes in ${((performance.now() - tc) / 1000).toFixed(1)} s, ${rate(read, performance.now() - tc)}`)
  const tp = performance.now()
  let rows = 0
  let after: string | undefined
  for (;;) {
    const page = await index.all({ after, limit: 1000 })
    if (page.length === 0) break
    rows += page.length
    after = page[page.length - 1].path
  }
  console.log(`  all() (rescan walk, pages of 1000): ${rows.toLocaleString('en-US')} records, ${rate(rows, performance.now() - tp)}`)
  await memory('after full walks')

  if (process.env.HEARTH_BENCH_SKIP_VERIFY !== '1') {
    const tv = performance.now()
    const check = await index.verify()
    console.log(`  verify(): ok=${check.ok} records=${check.records} scopes=${check.scopes} in ${((performance.now() - tv) / 1000).toFixed(1)} s (load average ${os.loadavg()[0].toFixed(1)})`)
    await memory('after verify')
  }
  await db.close()
}

/**
 * The write path of one ingested small file alone (--write-path): a new record with its journal
 * entry, group-committed, at 1, 4 and 16 writers at once; with `--base DIR` an older checkout's
 * index side by side, in alternating fresh processes (--rounds, median; --count records each).
 */
async function writePath (): Promise<void> {
  const opt = (name: string): string | undefined => { const i = process.argv.indexOf(name); return i >= 0 ? process.argv[i + 1] : undefined }
  const base = opt('--base')
  const rounds = Number(opt('--rounds') ?? 3)
  const count = Number(opt('--count') ?? 10_000)
  const here = fileURLToPath(new URL('../', import.meta.url))
  const variants: Array<[string, string]> = base === undefined ? [['current', here]] : [['base', base], ['current', here]]
  console.log(`index write path: ${count.toLocaleString('en-US')} new records, each with a ~2.2 KB journal entry, per record (µs; median of ${rounds} alternating runs; load average ${os.loadavg()[0].toFixed(1)})`)
  for (const clients of [1, 4, 16]) {
    const runs = new Map<string, Array<{ mainUs: number; cpuUs: number; wallUs: number }>>(variants.map(([name]) => [name, []]))
    for (let r = 0; r < rounds; r++) {
      for (const [name, dir] of variants) {
        const child = spawnSync(process.execPath, ['--import', 'tsx', fileURLToPath(import.meta.url), '--write-child', dir, String(clients), String(count)], { encoding: 'utf8', env: process.env })
        if (child.status !== 0) throw new Error(`write path of ${name} failed: ${child.stderr}`)
        runs.get(name)!.push(JSON.parse(child.stdout.trim().split('\n').at(-1)!))
      }
    }
    const med = (xs: number[]): number => [...xs].sort((a, b) => a - b)[Math.floor((xs.length - 1) / 2)]!
    const cols = variants.map(([name]) => {
      const rs = runs.get(name)!
      return `${name}: main thread ${med(rs.map((x) => x.mainUs)).toFixed(1).padStart(6)}, process ${med(rs.map((x) => x.cpuUs)).toFixed(1).padStart(6)}, wall ${med(rs.map((x) => x.wallUs)).toFixed(1).padStart(7)}`
    })
    console.log(`  ${String(clients).padStart(2)} at once   ${cols.join('   ')}`)
  }
}

if (process.argv[2] === '--read') await readPhase(process.argv[3], Number(process.argv[4]))
else if (process.argv[2] === '--write-child') await writePathChild(process.argv[3]!, Number(process.argv[4]), Number(process.argv[5]))
else if (process.argv.includes('--write-path')) await writePath()
else await main()
