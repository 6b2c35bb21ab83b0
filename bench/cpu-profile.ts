// Summarises a V8 `.cpuprofile` (node --cpu-prof): self time per package / source area and the
// top functions, as shares of the busy (non-idle) time. Used by bench/limits.ts.
import { readdir, readFile } from 'node:fs/promises'
import { join } from 'node:path'

export interface ProfileNode { id: number; callFrame: { functionName: string; url: string; lineNumber: number }; children?: number[] }
export interface CpuProfile { nodes: ProfileNode[]; samples: number[]; timeDeltas: number[]; startTime: number; endTime: number }

/** Where a function belongs: a package, a node: module, a folder of Hearth's sources, or native code. */
export function areaOf (url: string, fn: string): string {
  if (url === '') return fn === '(garbage collector)' ? 'gc' : fn === '(idle)' ? 'idle' : fn === '(program)' ? 'native/program' : `native ${fn}`
  if (url.startsWith('node:')) return url.replace(/^node:(internal\/)?/, 'node:').split('/').slice(0, 2).join('/')
  const m = /node_modules\/((?:@[^/]+\/)?[^/]+)/.exec(url)
  if (m !== null) return m[1]!
  const src = /\/(src|dist)\/(.+?)\.(js|ts)$/.exec(url)
  return src !== null ? `hearth ${src[2]!.split('/').slice(0, 2).join('/')}` : url
}

/** Monotonic-clock microseconds now: the clock V8 stamps profile samples with, in every process. */
export function monotonicMicros (): number {
  return Number(process.hrtime.bigint() / 1000n)
}

/** `window` (monotonicMicros() values) keeps only the samples taken inside it, e.g. one burst. */
export function summariseCpuProfile (profile: CpuProfile, opts: { top?: number; window?: { from: number; to: number } } = {}): string {
  const top = opts.top ?? Number(process.env.PROF_TOP ?? 15)
  const byId = new Map(profile.nodes.map((n) => [n.id, n]))
  const self = new Map<number, number>()
  let at = profile.startTime
  profile.samples.forEach((id, i) => {
    const delta = profile.timeDeltas[i] ?? 0
    at += delta
    if (opts.window !== undefined && (at < opts.window.from || at > opts.window.to)) return
    self.set(id, (self.get(id) ?? 0) + delta)
  })
  const areas = new Map<string, number>()
  const fns = new Map<string, number>()
  let busy = 0
  let idle = 0
  for (const [id, us] of self) {
    const node = byId.get(id)!
    const a = areaOf(node.callFrame.url, node.callFrame.functionName)
    if (a === 'idle') { idle += us; continue }
    busy += us
    areas.set(a, (areas.get(a) ?? 0) + us)
    const fn = `${node.callFrame.functionName || '(anonymous)'} ${a}`
    fns.set(fn, (fns.get(fn) ?? 0) + us)
  }
  const pct = (us: number): string => `${(100 * us / busy).toFixed(1).padStart(5)} %`
  const lines = [`busy ${(busy / 1000).toFixed(0)} ms, idle ${(idle / 1000).toFixed(0)} ms of the main thread`, 'self time by area:']
  for (const [a, us] of [...areas].sort((x, y) => y[1] - x[1]).slice(0, top)) lines.push(`  ${pct(us)}  ${a}`)
  lines.push('top functions (self):')
  for (const [fn, us] of [...fns].sort((x, y) => y[1] - x[1]).slice(0, top)) lines.push(`  ${pct(us)}  ${fn}`)
  return lines.join('\n')
}

/**
 * Every thread's profile that process `pid` wrote into `dir` (node --cpu-prof names them
 * CPU.<date>.<time>.<pid>.<thread>.<seq>.cpuprofile; the main thread is thread 0), summarised for
 * `window`: the main thread in full, the others (file writer, encryption workers) after it, shorter.
 */
export async function summariseProfileDir (dir: string, pid: number, window: { from: number; to: number }): Promise<string> {
  const files = (await readdir(dir)).sort().filter((f) => f.split('.')[3] === String(pid))
  const summaries: string[] = []
  for (const f of files) {
    const thread = f.split('.')[4]
    const text = summariseCpuProfile(JSON.parse(await readFile(join(dir, f), 'utf8')) as CpuProfile, { window, ...(thread === '0' ? {} : { top: 5 }) })
    summaries.push(thread === '0' ? text : `thread ${thread}: ${text}`)
  }
  return summaries.join('\n')
}
