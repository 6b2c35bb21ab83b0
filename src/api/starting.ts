// While the daemon starts, its listeners already answer. The routes of the first table (`/health`,
// `/v1/status`) say what is still starting; a request for anything else waits a little for the
// daemon's full route table and is then served by it, as if it had queued on the socket. When
// the start takes longer than that it answers DAEMON_STARTING (503 with Retry-After), and when
// the start failed, the error that failed it.
import { HearthError } from '../errors.js'

export interface StartingGate {
  /** True once the full route table serves. */
  readonly open: boolean
  /** Resolves once open; DAEMON_STARTING after the wait, or the error that failed the start. */
  wait (): Promise<void>
  /** The full route table serves from now on. */
  opened (): void
  /** The start failed: requests waiting now and later get `err`. */
  failed (err: unknown): void
}

export interface StartingGateOptions {
  /** How long a request waits for the start before DAEMON_STARTING. */
  waitMs: number
  /** The part starting now, for the error message (null between parts). */
  starting: () => string | null
}

/** Seconds a client is told to wait before asking again (Retry-After). */
const RETRY_AFTER_SECONDS = 1

export function createStartingGate (opts: StartingGateOptions): StartingGate {
  let open = false
  let failure: { err: unknown } | null = null
  let settle: (() => void) | null = null
  // one promise every waiter races against its own timer; rejected only through `failure`
  const settled = new Promise<void>((resolve) => { settle = resolve })

  const startingError = (): HearthError => {
    const part = opts.starting()
    return new HearthError('DAEMON_STARTING', `the daemon is still starting${part !== null ? ` (now: ${part})` : ''}; ask again in ${RETRY_AFTER_SECONDS} s`,
      { ...(part !== null ? { starting: part } : {}), retryAfterSeconds: RETRY_AFTER_SECONDS })
  }

  return {
    get open () { return open },
    async wait () {
      if (open) return
      if (failure !== null) throw failure.err
      let timer: NodeJS.Timeout | undefined
      const timedOut = new Promise<'timeout'>((resolve) => { timer = setTimeout(() => resolve('timeout'), opts.waitMs) })
      try {
        const outcome = await Promise.race([settled, timedOut])
        // set by failed() while this request waited (the narrowing above does not see that)
        const failedMeanwhile = failure as { err: unknown } | null
        if (failedMeanwhile !== null) throw failedMeanwhile.err
        if (outcome === 'timeout' && !open) throw startingError()
      } finally {
        clearTimeout(timer)
      }
    },
    opened () {
      open = true
      settle?.()
    },
    failed (err) {
      failure = { err }
      settle?.()
    }
  }
}
