// The run loop shared by the chain's background jobs: call `step` again after the delay it asks
// for, sooner when kicked, never two steps at once, and stop promptly (aborting the step's
// signal) when asked.
import type { Logger } from '../log.js'

export interface PollLoop {
  start (): void
  /** Aborts the running step and resolves once it has returned. */
  stop (): Promise<void>
  /** Runs the next step now instead of after its delay. */
  kick (): void
  readonly running: boolean
}

export interface Backoff {
  initialMs: number
  maxMs: number
}

export const DEFAULT_BACKOFF: Backoff = { initialMs: 1_000, maxMs: 60_000 }

/** initial · 2^attempts, capped. */
export function backoffDelay (attempts: number, backoff: Backoff): number {
  return Math.min(backoff.maxMs, backoff.initialMs * 2 ** Math.min(Math.max(0, attempts), 30))
}

export function createPollLoop (opts: {
  name: string
  logger: Logger
  /** One unit of work; returns how long to wait before the next one. Throwing waits `errorDelayMs`. */
  step: (signal: AbortSignal) => Promise<number>
  errorDelayMs: (consecutiveFailures: number) => number
}): PollLoop {
  let controller: AbortController | null = null
  let loop: Promise<void> | null = null
  let wake: (() => void) | null = null
  let kicked = false

  async function sleep (ms: number, signal: AbortSignal): Promise<void> {
    if (kicked || ms <= 0) { kicked = false; return }
    await new Promise<void>((resolve) => {
      const timer = setTimeout(done, ms)
      function done (): void { clearTimeout(timer); wake = null; signal.removeEventListener('abort', done); resolve() }
      wake = done
      signal.addEventListener('abort', done)
    })
    kicked = false
  }

  async function run (signal: AbortSignal): Promise<void> {
    let failures = 0
    while (!signal.aborted) {
      let delay: number
      try {
        delay = await opts.step(signal)
        failures = 0
      } catch (err) {
        if (signal.aborted) break
        failures++
        delay = opts.errorDelayMs(failures)
        opts.logger.warn({ job: opts.name, err: err instanceof Error ? err.message : String(err), retryInMs: delay }, 'chain job step failed')
      }
      await sleep(delay, signal)
    }
  }

  return {
    get running () { return controller !== null },
    start () {
      if (controller !== null) return
      controller = new AbortController()
      loop = run(controller.signal)
    },
    async stop () {
      if (controller === null) return
      controller.abort()
      controller = null
      await loop
      loop = null
    },
    kick () {
      kicked = true
      wake?.()
    }
  }
}
