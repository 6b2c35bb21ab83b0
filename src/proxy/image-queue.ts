// `POST /images` while the upstream is unreachable (docs/protocol.md §4: queued where queueing is
// meaningful): the request goes into a durable queue and the caller gets a local job id at once.
// The queue is drained on a timer and as soon as the upstream answers anything again; each
// submission links the local id to the upstream's job, which is then followed like any other.
// Delivery is at-least-once: a crash between the upstream accepting and the ack resubmits.
import { randomUUID } from 'node:crypto'
import type { DurableQueue } from '../db/types.js'
import type { Logger } from '../log.js'
import type { UpstreamApi } from './api.js'
import type { ImageJobs } from './image-jobs.js'

export interface QueuedImageRequest {
  localJobId: string
  body: Record<string, unknown>
  queuedAt: number
}

export interface ImageQueue {
  enqueue (body: Record<string, unknown>): Promise<string>
  /** Submit what is due (or everything, ignoring backoff); returns how many were submitted. */
  drain (opts?: { ignoreBackoff?: boolean }): Promise<number>
  /** The upstream just answered: submit what waits, soon, without waiting for the timer. */
  kick (): void
  pending (): Promise<number>
  /** Resolves when a drain in flight (if any) has finished. */
  idle (): Promise<void>
  start (): Promise<void>
  stop (): Promise<void>
}

const MAX_BACKOFF_MS = 15 * 60_000

export function createImageQueue (deps: { queue: DurableQueue<QueuedImageRequest>, api: UpstreamApi, jobs: ImageJobs, retryMs: number, logger: Logger }): ImageQueue {
  const { queue, api, jobs, logger } = deps
  let timer: NodeJS.Timeout | undefined
  let draining: Promise<number> | null = null
  let maybePending = true
  let stopped = false

  async function submitOne (item: QueuedImageRequest, attempts: number): Promise<boolean> {
    const backoff = Math.min(deps.retryMs * 2 ** Math.min(attempts, 16), MAX_BACKOFF_MS)
    let answer
    try {
      answer = await api.call('POST', '/images', item.body)
    } catch (err) {
      await queue.retryLater(item.localJobId, backoff, (err as Error).message)
      return false
    }
    const json = answer.json as { success?: unknown, jobId?: unknown, output?: unknown } | null
    const ok = answer.status >= 200 && answer.status < 300
    if (ok && json?.success === true && typeof json.jobId === 'string') {
      const output = Array.isArray(json.output) ? json.output.filter((u): u is string => typeof u === 'string') : undefined
      await jobs.follow(json.jobId, { localJobId: item.localJobId, prompt: typeof item.body.prompt === 'string' ? item.body.prompt : null, ...(output !== undefined ? { synchronousOutput: output } : {}) })
      await queue.ack(item.localJobId)
      logger.info({ localJobId: item.localJobId, jobId: json.jobId }, 'queued image request submitted')
      return true
    }
    if (answer.status >= 500 || answer.status === 429 || answer.status === 401 || answer.status === 408) {
      // The upstream's trouble or a token to renew: worth trying again later.
      await queue.retryLater(item.localJobId, backoff, `status ${answer.status}`)
      return false
    }
    // Refused for good (bad request, or a 2xx that is not success): the app sees the upstream's answer.
    await jobs.recordRejected(item.localJobId, { status: answer.status, body: answer.json })
    await queue.ack(item.localJobId)
    return false
  }

  async function drainNow (ignoreBackoff: boolean): Promise<number> {
    let submitted = 0
    const due = await queue.due(32, ignoreBackoff ? Number.MAX_SAFE_INTEGER : Date.now())
    if (due.length === 0) { maybePending = (await queue.size()) > 0; return 0 }
    for (const entry of due) {
      if (stopped) break
      if (await submitOne(entry.item, entry.attempts)) submitted++
    }
    maybePending = (await queue.size()) > 0
    return submitted
  }

  function drain (opts: { ignoreBackoff?: boolean } = {}): Promise<number> {
    if (draining !== null) return draining
    draining = drainNow(opts.ignoreBackoff === true)
      .catch((err: unknown) => { logger.warn({ err: (err as Error).message }, 'image queue drain failed'); return 0 })
      .finally(() => { draining = null })
    return draining
  }

  return {
    async enqueue (body) {
      const localJobId = `local-${randomUUID()}`
      await jobs.recordQueued(localJobId, typeof body.prompt === 'string' ? body.prompt : null)
      await queue.enqueue(localJobId, { localJobId, body, queuedAt: Date.now() })
      maybePending = true
      return localJobId
    },
    drain,
    kick () {
      if (maybePending && !stopped && draining === null) void drain({ ignoreBackoff: true })
    },
    pending: async () => await queue.size(),
    async idle () { if (draining !== null) await draining },
    async start () {
      stopped = false
      maybePending = (await queue.size()) > 0
      timer = setInterval(() => { if (maybePending) void drain() }, deps.retryMs)
      timer.unref()
    },
    async stop () {
      stopped = true
      if (timer !== undefined) clearInterval(timer)
      if (draining !== null) await draining
    }
  }
}
