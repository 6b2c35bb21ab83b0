// A bounded pool of worker threads for CPU-heavy jobs (encrypting a large file, hashing), so the
// main thread keeps answering requests (`/health` included) while a second core does the work.
// It has the service shape: built without side effects, started and stopped by the composition
// root, and its status (workers, busy, queued, finished, failed) shows in `GET /v1/status`.
//
// Bounds, so a burst cannot take the daemon's memory: at most `size` workers, each running one
// job at a time; at most `maxQueued` jobs waiting behind them (one more is WORKERS_BUSY, 503); a
// job declaring more than `maxJobBytes` is FILE_TOO_LARGE (413) before it is queued.
// A worker that dies mid-job (crash, out of memory, process.exit) fails that job with
// WORKER_FAILED (503) at once, never a hang; the worker is replaced for the next job. Workers
// start on first use and end after `idleMs` without work, so an idle daemon holds none.
//
// The worker side of the protocol is `serveWorkerJobs` (worker-job.ts): one message in per job,
// any number of parts out, then an end or an error.
import { Worker } from 'node:worker_threads'
import type { Transferable } from 'node:worker_threads'
import { ERROR_CODES, HearthError, type ErrorCode } from '../errors.js'
import type { Logger } from '../log.js'
import type { Service } from './service.js'
import { CANCEL, nextJobId, TAKEN, workerControl, type JobRequest, type JobReply } from './worker-job.js'

export interface WorkerPoolOptions {
  /** The service name, also in messages. */
  name: string
  /** The worker's module (a .js file; a .ts one is loaded through tsx, for tests and benches). */
  script: URL
  /** Workers at most (each runs one job at a time). */
  size: number
  /** Jobs waiting for a worker at most; one more is refused with WORKERS_BUSY. */
  maxQueued: number
  /** The largest job (the `bytes` it declares); a larger one is refused with FILE_TOO_LARGE. */
  maxJobBytes: number
  /** A worker without a job this long is ended (default 30 s). */
  idleMs?: number
  /** V8 heap limit of each worker, in MB (default 512): a runaway job ends its worker, not the daemon. */
  maxHeapMb?: number
  logger?: Logger
}

export interface JobOptions {
  /** The job's size in bytes, checked against maxJobBytes. */
  bytes: number
  /** Buffers moved to the worker instead of copied (they are unusable here afterwards). */
  transfer?: Transferable[]
  /** Cancels the job as a consumer leaving does, also while the consumer waits for a part (which then throws). */
  signal?: AbortSignal
}

export interface WorkerPoolStatus {
  workers: number
  busy: number
  queued: number
  finished: number
  failed: number
  /** Workers that died mid-job since start. */
  crashed: number
  /** Jobs whose consumer left before their end: stopped on their worker, their later parts dropped. */
  cancelled: number
}

export interface WorkerPool extends Service {
  /**
   * Runs one job: its parts in order, ending when the job ends; throws the job's error (its code
   * kept when it was a HearthError), WORKER_FAILED when the worker died, WORKERS_BUSY or
   * FILE_TOO_LARGE when refused. Breaking off early (`return()`, a thrown consumer) cancels the
   * job: parts that were waiting and any still coming are dropped, and the worker stops it at its
   * next part.
   */
  run<Part = unknown> (input: unknown, opts: JobOptions): AsyncIterable<Part>
  /** Starts a worker now when none is idle and there is room, so a job expected soon does not wait for one to load. */
  warm (): void
  /** Whether a job given now would start at once: nothing waiting, and a worker idle or room for one. */
  free (): boolean
  status (): Promise<WorkerPoolStatus>
}

interface Job {
  id: number
  input: unknown
  transfer: Transferable[]
  parts: unknown[]
  /** The slot running it, from when it is given (its control words say CANCEL and TAKEN for it). */
  slot: Slot | null
  /** The consumer left before the end: parts still coming are dropped. */
  abandoned: boolean
  done: boolean
  error: unknown
  wake: (() => void) | null
}

/** A worker and its control words (worker-job.ts), shared with it for all its jobs. */
interface Slot { worker: Worker; control: Int32Array; job: Job | null; idle: NodeJS.Timeout | null }

export function createWorkerPool (opts: WorkerPoolOptions): WorkerPool {
  const idleMs = opts.idleMs ?? 30_000
  const slots = new Set<Slot>()
  const queue: Job[] = []
  let lastId = 0
  let running = false
  const counts = { finished: 0, failed: 0, crashed: 0, cancelled: 0 }

  function settle (job: Job, error?: unknown): void {
    if (job.done) return
    job.done = true
    job.error = error
    // a cancelled job was counted when its consumer left
    if (!job.abandoned) counts[error === undefined ? 'finished' : 'failed']++
    job.wake?.()
  }

  function spawn (): Slot {
    const control = workerControl()
    const worker = startWorker(opts.script, opts.maxHeapMb ?? 512, control)
    const slot: Slot = { worker, control, job: null, idle: null }
    slots.add(slot)
    worker.on('message', (reply: JobReply) => {
      const job = slot.job
      if (job === null || reply.id !== job.id) return
      if (reply.kind === 'part') {
        if (job.abandoned) return
        job.parts.push(reply.value)
        job.wake?.()
        return
      }
      slot.job = null
      settle(job, reply.kind === 'error' ? jobError(reply.error) : undefined)
      next(slot)
    })
    // 'error' is an uncaught exception in the worker (it exits next); 'exit' covers process.exit,
    // heap exhaustion and terminate(). Either way its job fails now and the slot is dropped.
    const lost = (why: string): void => {
      if (!slots.delete(slot)) return
      if (slot.idle !== null) clearTimeout(slot.idle)
      const job = slot.job
      slot.job = null
      if (job !== null) {
        counts.crashed++
        opts.logger?.error({ pool: opts.name, why }, 'worker died during a job')
        settle(job, new HearthError('WORKER_FAILED', `a worker of ${opts.name} died during the job (${why}); the next job gets a new worker`, { pool: opts.name }))
      }
      void worker.terminate().catch(() => {})
      dispatch()
    }
    worker.on('error', (err) => { lost(err instanceof Error ? err.message : String(err)) })
    worker.on('exit', (code) => { lost(`exit code ${code}`) })
    worker.unref()
    return slot
  }

  function give (slot: Slot, job: Job): void {
    if (slot.idle !== null) { clearTimeout(slot.idle); slot.idle = null }
    slot.job = job
    job.slot = slot
    Atomics.store(slot.control, TAKEN, 0)
    slot.worker.ref()
    try {
      slot.worker.postMessage({ id: job.id, input: job.input } satisfies JobRequest, job.transfer)
    } catch (err) {
      slot.job = null
      settle(job, new HearthError('INVALID_ARGUMENT', `a job could not be sent to a worker of ${opts.name}: ${(err as Error).message}`))
      next(slot)
    }
  }

  /** A worker's job ended: it takes the next one, or waits idle (unref'd, so it never holds the process). */
  function next (slot: Slot): void {
    const job = queue.shift()
    if (job !== undefined && running) { give(slot, job); return }
    slot.worker.unref()
    slot.idle = setTimeout(() => {
      if (slot.job !== null) return
      slots.delete(slot)
      void slot.worker.terminate().catch(() => {})
    }, idleMs)
    slot.idle.unref()
  }

  /** Queued jobs to idle workers, or to new ones while the pool has room. */
  function dispatch (): void {
    while (running && queue.length > 0) {
      const idle = [...slots].find((s) => s.job === null)
      if (idle !== undefined) { give(idle, queue.shift()!); continue }
      if (slots.size >= opts.size) return
      give(spawn(), queue.shift()!)
    }
  }

  async function * run<Part> (input: unknown, jobOpts: JobOptions): AsyncGenerator<Part> {
    if (!running) throw new HearthError('WORKER_FAILED', `the worker pool ${opts.name} is not running`, { pool: opts.name })
    if (!(jobOpts.bytes <= opts.maxJobBytes)) {
      throw new HearthError('FILE_TOO_LARGE', `a job of ${jobOpts.bytes} bytes is over the limit of ${opts.maxJobBytes} of ${opts.name}`, { limit: opts.maxJobBytes })
    }
    const busy = [...slots].filter((s) => s.job !== null).length
    if (busy >= opts.size && queue.length >= opts.maxQueued) {
      throw new HearthError('WORKERS_BUSY', `every worker of ${opts.name} is busy (${busy} running, ${queue.length} waiting); try again shortly`, { pool: opts.name, queued: queue.length })
    }
    lastId = nextJobId(lastId)
    const job: Job = { id: lastId, input, transfer: jobOpts.transfer ?? [], parts: [], slot: null, abandoned: false, done: false, error: undefined, wake: null }
    const signal = jobOpts.signal
    if (signal?.aborted === true) throw signal.reason
    const abort = (): void => { cancel(job); job.wake?.() }
    signal?.addEventListener('abort', abort, { once: true })
    queue.push(job)
    dispatch()
    try {
      for (;;) {
        if (job.abandoned) throw signal?.reason ?? new HearthError('WORKER_FAILED', `the job was cancelled`)
        if (job.parts.length > 0) {
          // a job that ended is still read from while its worker may run the next one
          if (job.slot?.job === job) Atomics.add(job.slot.control, TAKEN, 1)
          yield job.parts.shift() as Part
          continue
        }
        if (job.done) break
        await new Promise<void>((resolve) => { job.wake = resolve })
        job.wake = null
      }
      if (job.error !== undefined) throw job.error
    } finally {
      signal?.removeEventListener('abort', abort)
      cancel(job)
      job.wake = null
    }
  }

  /**
   * A job whose consumer left (or that was aborted): parts still coming are dropped, not kept, and
   * the worker stops the job at its next part, free for the next one; a queued job never runs.
   */
  function cancel (job: Job): void {
    if (job.abandoned) return
    // an abort after the last part arrived still ends the consumer with its error, not a short stream
    job.parts.length = 0
    job.abandoned = true
    if (job.done) return
    counts.cancelled++
    if (job.slot !== null) Atomics.store(job.slot.control, CANCEL, job.id)
    const queued = queue.indexOf(job)
    if (queued >= 0) queue.splice(queued, 1)
  }

  function free (): boolean {
    return running && queue.length === 0 && (slots.size < opts.size || [...slots].some((s) => s.job === null))
  }

  function warm (): void {
    if (!running || slots.size >= opts.size || [...slots].some((s) => s.job === null)) return
    next(spawn())
  }

  return {
    name: opts.name,
    warm,
    free,
    async start () { running = true },
    async stop () {
      running = false
      const stopped = new HearthError('WORKER_FAILED', `the worker pool ${opts.name} stopped`, { pool: opts.name })
      for (const job of queue.splice(0)) settle(job, stopped)
      const all = [...slots]
      slots.clear()
      for (const slot of all) {
        if (slot.idle !== null) clearTimeout(slot.idle)
        if (slot.job !== null) settle(slot.job, stopped)
      }
      await Promise.all(all.map(async (s) => { await s.worker.terminate().catch(() => {}) }))
    },
    async status () {
      return { workers: slots.size, busy: [...slots].filter((s) => s.job !== null).length, queued: queue.length, ...counts }
    },
    run
  }
}

function jobError (e: { code?: string; message: string; details?: Record<string, unknown> }): Error {
  if (e.code !== undefined && isErrorCode(e.code)) return new HearthError(e.code, e.message, e.details)
  return new HearthError('INTERNAL', `worker job failed: ${e.message}`)
}

function isErrorCode (code: string): code is ErrorCode {
  return Object.hasOwn(ERROR_CODES, code)
}

/**
 * A worker with its control words (`workerData.control`). A .ts worker (tests, benches under tsx)
 * loads tsx's hooks first: a worker does not inherit them.
 */
function startWorker (script: URL, maxHeapMb: number, control: Int32Array): Worker {
  const resourceLimits = { maxOldGenerationSizeMb: maxHeapMb }
  const workerData = { control }
  if (!script.pathname.endsWith('.ts')) return new Worker(script, { resourceLimits, workerData })
  const tsx = import.meta.resolve('tsx/esm/api')
  const boot = `import(${JSON.stringify(tsx)}).then((m) => { m.register() }).then(() => import(${JSON.stringify(script.href)}))`
  return new Worker(boot, { eval: true, resourceLimits, workerData })
}
