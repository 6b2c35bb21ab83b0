// An on-CPU profile of a whole process (every thread, kernel included) from `perf record -g`,
// summarised by thread kind and by area: what V8's --cpu-prof cannot show (it samples JS threads
// by wall time, so a blocked system call or a descheduled thread counts as busy, and it never sees
// V8's compiler and GC threads, libuv's pool or LevelDB's own thread). JIT frames are named through
// the map node writes with --perf-basic-prof. Areas are matched on the whole call stack, first
// match in AREAS' order (so GC inside an ingest call counts as GC).
import { execFileSync } from 'node:child_process'

interface Sample { tid: string; ns: number; frames: string[] }

/** Thread kinds, from a frame any of the thread's samples has at its root. */
const THREADS: Array<[string, RegExp]> = [
  ['V8 helpers (compiler, GC)', /PlatformWorkerThread|DefaultJobWorker/],
  ['libuv pool and LevelDB\'s own thread (LevelDB reads, writes, syncs, compaction)', /uv__work_|ThreadPoolWork|uv__queue_work|worker \(|BackgroundThread|BackgroundCall|BGWork|CompactMemTable|DoCompactionWork/]
]

/** Areas, first match over the whole stack wins. */
const AREAS: Array<[string, RegExp]> = [
  ['JIT: optimising compiles', /OptimizingCompileDispatcher|compiler::Pipeline|Compiler::Compile|BaselineBatchCompiler|Maglev/],
  ['GC', /Heap::|Scavenge|ConcurrentMarking|MarkCompact|Sweeper|ArrayBufferSweeper|IncrementalMarking|MinorMC/],
  ['file system, fsync and disk (kernel)', /ext4_|jbd2|blk_|submit_bio|fdatasync|fsync|vfs_|do_sys_open|path_openat|filemap_/],
  ['watch events (inotify, the watcher)', /uv__inotify_read|FSEventWrap|watcher\.js|node:internal\/fs\/watchers/],
  ['encryption (OpenPGP writer, AES, SHA-1)', /encryptEnvelopeBytes|openpgp-writer|openpgp-packets/],
  ['ciphertext block (CID, staged block, pins)', /deferred-blocks|raw-blocks|multiformats|storage\/cid|blockstore|datastore/],
  ['index write (records, keys, batch, group commit)', /file-index-write|file-index\.js|applyChanges|db\/keys|database\.js|abstract-level|classic-level\/index|index-health|level-transcoder|ingest\/journal/],
  ['LevelDB native (memtable, log, sync)', /leveldb::|classic-level\.node/],
  ['read, parse, validate, hash (ingest)', /ingest-many|ingest-file|data-file|bounded-json|envelope|validators|ajv|pipeline\.js|Hash|crypto\/hash/],
  ['search (change log, SQLite)', /search\/|better_sqlite3|better-sqlite3/],
  ['timers, queues, promises (hand-offs)', /node:internal\/timers|work-queue|path-locks|RunMicrotasks|PromiseFulfill|uv__run_timers|uv__async|uv__work_done|service\.js|mutex\.js/],
  ['HTTP (the bench\'s polls)', /node:_http|node:http|api\/|llhttp|node:net|stream_base/],
  ['epoll, scheduling, other kernel', /epoll|schedule|\[kernel|irq|syscall/],
  ['malloc and free (libc)', /malloc|_int_free|unlink_chunk|cfree|calloc/]
]

function samples (data: string): Sample[] {
  const out = execFileSync('perf', ['script', '-i', data, '-F', 'tid,period,ip,sym,dso'], { maxBuffer: 1 << 30, encoding: 'utf8', stdio: ['ignore', 'pipe', 'ignore'] })
  const list: Sample[] = []
  let cur: Sample | null = null
  for (const line of out.split('\n')) {
    if (line === '') continue
    if (!line.startsWith('\t')) {
      const [tid, period] = line.trim().split(/\s+/)
      cur = { tid: tid!, ns: Number(period), frames: [] }
      list.push(cur)
    } else if (cur !== null) {
      const m = /^\s*[0-9a-f]+\s+(.*)$/.exec(line)
      if (m !== null) cur.frames.push(m[1]!)
    }
  }
  return list
}

/** The summary, in ms per `units` (files), by thread kind and by area within each kind. */
export function summarisePerf (data: string, mainTid: number, units: number): string {
  const all = samples(data)
  const kindOf = new Map<string, string>()
  for (const s of all) {
    if (kindOf.get(s.tid) !== undefined && kindOf.get(s.tid) !== 'other threads') continue
    const stack = s.frames.join('\n')
    kindOf.set(s.tid, s.tid === String(mainTid) ? 'main thread' : THREADS.find(([, re]) => re.test(stack))?.[0] ?? 'other threads')
  }
  const byKind = new Map<string, Map<string, number>>()
  let total = 0
  for (const s of all) {
    const kind = kindOf.get(s.tid)!
    const stack = s.frames.join('\n')
    const area = AREAS.find(([, re]) => re.test(stack))?.[0] ?? 'other'
    const areas = byKind.get(kind) ?? new Map<string, number>()
    areas.set(area, (areas.get(area) ?? 0) + s.ns)
    byKind.set(kind, areas)
    total += s.ns
  }
  if (process.env.PERF_DEBUG !== undefined) {
    const other = new Map<string, number>()
    for (const s of all) if (!AREAS.some(([, re]) => re.test(s.frames.join('\n')))) other.set(s.frames[0] ?? '?', (other.get(s.frames[0] ?? '?') ?? 0) + s.ns)
    console.log([...other].sort((a, b) => b[1] - a[1]).slice(0, 25).map(([f, ns]) => `${(ns / 1e6).toFixed(1)} ${f}`).join('\n'))
    const roots = new Map<string, string>()
    for (const s of all) roots.set(s.tid, s.frames.slice(-4).join(' < '))
    console.log([...roots].map(([t, r]) => `${t} ${kindOf.get(t)} ${r}`).join('\n'))
  }
  const ms = (ns: number): string => (ns / 1e6 / units).toFixed(3)
  const lines = [`on-CPU ${ms(total)} ms per file (${(total / 1e6).toFixed(0)} ms, ${all.length} samples, every thread)`]
  const sum = (m: Map<string, number>): number => [...m.values()].reduce((a, b) => a + b, 0)
  for (const [kind, areas] of [...byKind].sort((a, b) => sum(b[1]) - sum(a[1]))) {
    lines.push(`  ${kind}: ${ms(sum(areas))}`)
    for (const [area, ns] of [...areas].sort((a, b) => b[1] - a[1])) if (ns / 1e6 / units >= 0.0005) lines.push(`    ${ms(ns)}  ${area}`)
  }
  return lines.join('\n')
}
