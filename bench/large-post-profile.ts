// Where a 10 MB POST's CPU goes, thread by thread (issue #28's 10 MB row): real daemons (this
// checkout and, with --base DIR, an older one) under `node --cpu-prof` (every thread writes a
// profile), POSTs of the same 10 MB body as bench/large-post.ts, one at a time after a warm-up;
// then per POST: each thread's CPU from /proc (user + system, by thread name: the main thread,
// the encryption worker, the file writer, libuv's pool), and each profiled thread's self time by
// area and top functions inside the window of the measured POSTs. The profiler costs CPU too
// (a few %): the CPU rows of bench/large-post.ts, not these, are the figures to compare.
// Run: node --import tsx bench/large-post-profile.ts [--base DIR] [--posts N] [--out DIR]
import '../src/polyfill.js'
import { mkdtemp, readdir, readFile, rm } from 'node:fs/promises'
import { tmpdir } from 'node:os'
import { join, resolve } from 'node:path'
import { daemonRequest } from '../src/client/daemon-client.js'
import { REPO, launchDaemon } from './support/daemon.js'
import { ensureBuilt } from './support/dist-daemon.js'
import { monotonicMicros, summariseCpuProfile, type CpuProfile } from './cpu-profile.js'

const args = process.argv.slice(2)
const opt = (name: string): string | null => { const i = args.indexOf(name); return i >= 0 ? args[i + 1] ?? null : null }
const base = opt('--base')
const posts = Number(opt('--posts') ?? 10)
const out = opt('--out') ?? await mkdtemp(join(tmpdir(), 'hearth-large-prof-'))
const MB = 1024 * 1024
const body = Buffer.from(JSON.stringify({ username: 'big', bio: 'z'.repeat(10 * MB - 40) }))

/**
 * CPU ms so far of each thread of `pid` (/proc/<pid>/task/<tid>: Node 20 names them all `node`, so
 * by thread id; the main thread's is the pid). Off-CPU waits (a blocked open, an fsync) are not in
 * it, which the profiles (wall-clock samples of each JavaScript thread) count as busy.
 */
async function threadCpu (pid: number): Promise<Map<string, number>> {
  const byThread = new Map<string, number>()
  for (const tid of await readdir(`/proc/${pid}/task`).catch(() => [])) {
    try {
      const name = (await readFile(`/proc/${pid}/task/${tid}/comm`, 'utf8')).trim()
      const fields = (await readFile(`/proc/${pid}/task/${tid}/stat`, 'utf8')).split(') ')[1]!.split(' ')
      byThread.set(tid === String(pid) ? 'main' : `${name}:${tid}`, (Number(fields[11]) + Number(fields[12])) * 10)
    } catch {} // a thread that ended meanwhile
  }
  return byThread
}

async function post (socketPath: string): Promise<number> {
  const started = performance.now()
  const r = await daemonRequest(socketPath, { method: 'POST', path: '/v1/data/instagram.profile', headers: { 'content-type': 'application/json' }, body })
  if (r.status !== 201) throw new Error(`POST answered ${r.status}`)
  return performance.now() - started
}

async function profileOne (name: string, checkout: string): Promise<string> {
  const dir = join(out, name)
  const home = await mkdtemp(join(tmpdir(), `hearth-bench-large-prof-${name}-`))
  const d = await launchDaemon({ checkout, run: 'dist', home, env: { HEARTH_SYNC: 'false', HEARTH_MDNS: 'false', HEARTH_UI: 'false' }, nodeArgs: ['--cpu-prof', `--cpu-prof-dir=${dir}`], until: 'ready' })
  let window: { from: number; to: number }
  const ms: number[] = []
  let cpu: Array<[string, number]>
  try {
    for (let i = 0; i < 3; i++) await post(d.socketPath) // warm-up, as bench/large-post.ts
    const before = await threadCpu(d.pid)
    const from = monotonicMicros()
    for (let i = 0; i < posts; i++) ms.push(await post(d.socketPath))
    await new Promise((resolve) => setTimeout(resolve, 300)) // each POST's work after its 201 (search)
    window = { from, to: monotonicMicros() }
    const after = await threadCpu(d.pid)
    cpu = [...after].map(([thread, total]): [string, number] => [thread, (total - (before.get(thread) ?? 0)) / posts]).filter(([, v]) => v > 0).sort((a, b) => b[1] - a[1])
  } finally {
    await d.stop()
    await rm(home, { recursive: true, force: true })
  }
  const sorted = [...ms].sort((a, b) => a - b)
  const lines = [`## ${name}: ${posts} POSTs of 10 MB, to 201 median ${sorted[Math.floor(posts / 2)]!.toFixed(1)} ms [${sorted[0]!.toFixed(1)}–${sorted[posts - 1]!.toFixed(1)}] (under the profiler)`]
  lines.push(`CPU per POST by thread (/proc, user + system, ms): ${cpu.slice(0, 6).map(([t, v]) => `${t} ${v.toFixed(1)}`).join(' · ')}${cpu.length > 6 ? ` · ${cpu.length - 6} more ${cpu.slice(6).reduce((n, [, v]) => n + v, 0).toFixed(1)}` : ''} · all ${cpu.reduce((n, [, v]) => n + v, 0).toFixed(1)}`)
  const files = (await readdir(dir)).sort().filter((f) => f.split('.')[3] === String(d.pid))
  for (const f of files) {
    const profile = JSON.parse(await readFile(join(dir, f), 'utf8')) as CpuProfile
    const text = summariseCpuProfile(profile, { window, top: f.split('.')[4] === '0' ? 14 : 6 })
      .replace(/^busy (\d+) ms, idle (\d+) ms of the main thread/, (_, b: string, i: string) => `busy ${(Number(b) / posts).toFixed(1)} ms, idle ${(Number(i) / posts).toFixed(1)} ms per POST`)
    if (/^busy 0\.0 ms/.test(text)) continue // a thread that did nothing in the window
    lines.push(`### thread ${f.split('.')[4]!}${f.split('.')[4] === '0' ? ' (main)' : ''}`, text)
  }
  return lines.join('\n')
}

const variants: Array<[string, string]> = [['current', REPO]]
if (base !== null) variants.unshift(['base', resolve(base)])
for (const [, checkout] of variants) ensureBuilt(checkout)
for (const [name, checkout] of variants) console.log(await profileOne(name, checkout))
console.log(`(profiles in ${out})`)
