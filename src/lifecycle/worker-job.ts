// The worker side of worker-pool.ts: a worker module calls `serveWorkerJobs` with its job handler,
// an async generator whose yields are the job's parts (each optionally with buffers to move
// instead of copy). A thrown error ends the job with its message and, for a HearthError, its code.
import { parentPort, workerData, type Transferable } from 'node:worker_threads'
import { isHearthError } from '../errors.js'

export interface JobRequest { id: number; input: unknown }

/**
 * Shared memory the pool writes while a worker runs its jobs, one per worker for all its jobs
 * (given as `workerData.control`): at CANCEL the id of the last job whose consumer left (the
 * worker stops that job at its next part instead of running it to its end), so a cancel that comes
 * after its job ended never stops the next one; at TAKEN how many parts of the running job the
 * consumer has taken so far (set to 0 before a job is given, counted only while it runs).
 */
export const CANCEL = 0
export const TAKEN = 1
/** A worker's control words. */
export const workerControl = (): Int32Array => new Int32Array(new SharedArrayBuffer(8))
/** Job ids as the control words hold them (an Int32): 1 to 2^31 − 1, then 1 again. */
export const nextJobId = (id: number): number => id % 0x7fff_ffff + 1

/** What a job can ask while it runs. */
export interface JobContext {
  /** How many of its parts the consumer has taken: parts sent minus this are waiting for it. */
  taken (): number
}

export type JobReply =
  | { id: number; kind: 'part'; value: unknown }
  | { id: number; kind: 'end' }
  | { id: number; kind: 'error'; error: { code?: string; message: string; details?: Record<string, unknown> } }

/** One part of a job's output; `transfer` lists buffers of `value` to move to the main thread. */
export interface JobPart { value: unknown; transfer?: Transferable[] }

export type JobHandler = (input: unknown, ctx: JobContext) => AsyncIterable<JobPart>

/**
 * Serves jobs from the pool one at a time (the pool never sends a second before the first ends).
 * A job whose consumer left is stopped before its next part (its generator returned) and ended.
 */
export function serveWorkerJobs (handler: JobHandler): void {
  const port = parentPort
  if (port === null) throw new Error('serveWorkerJobs runs inside a worker thread')
  const control = (workerData as { control?: unknown } | null)?.control
  if (!(control instanceof Int32Array)) throw new Error('serveWorkerJobs runs in a worker the pool started (workerData.control)')
  const ctx: JobContext = { taken: () => Atomics.load(control, TAKEN) }
  port.on('message', (req: JobRequest) => {
    void (async () => {
      try {
        for await (const part of handler(req.input, ctx)) {
          if (Atomics.load(control, CANCEL) === req.id) break
          port.postMessage({ id: req.id, kind: 'part', value: part.value } satisfies JobReply, part.transfer ?? [])
        }
        port.postMessage({ id: req.id, kind: 'end' } satisfies JobReply)
      } catch (err) {
        const error = isHearthError(err)
          ? { code: err.code, message: err.message, ...(err.details !== undefined ? { details: err.details } : {}) }
          : { message: err instanceof Error ? err.message : String(err) }
        port.postMessage({ id: req.id, kind: 'error', error } satisfies JobReply)
      }
    })()
  })
}
