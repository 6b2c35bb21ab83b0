// A bound on the bytes of large work in flight at once (request bodies of large files: each costs
// several times its size in memory while it is parsed, encrypted and stored). Work that would go
// over the budget waits its turn, first come first served, before it reads anything; one piece of
// work larger than the whole budget still runs, alone. At most `maxWaiting` wait: one more is
// refused with WORKERS_BUSY (503), so a burst cannot pile up without bound either.
import { HearthError } from '../errors.js'

export interface ByteBudgetStatus {
  /** Bytes of the work running now. */
  inFlightBytes: number
  running: number
  waiting: number
  /** The most bytes ever in flight at once. */
  peakBytes: number
}

export interface ByteBudget {
  /** Runs `fn` once `bytes` fit in the budget. */
  run<T> (bytes: number, fn: () => Promise<T>): Promise<T>
  status (): ByteBudgetStatus
}

export function createByteBudget (opts: { name: string; limitBytes: number; maxWaiting: number }): ByteBudget {
  let inFlight = 0
  let running = 0
  let peak = 0
  const waiting: Array<{ bytes: number; go: () => void }> = []

  const fits = (bytes: number): boolean => running === 0 || inFlight + bytes <= opts.limitBytes
  function admit (bytes: number): void {
    inFlight += bytes
    running++
    peak = Math.max(peak, inFlight)
  }
  function release (bytes: number): void {
    inFlight -= bytes
    running--
    while (waiting.length > 0 && fits(waiting[0]!.bytes)) {
      const next = waiting.shift()!
      admit(next.bytes)
      next.go()
    }
  }

  return {
    async run (bytes, fn) {
      if (waiting.length === 0 && fits(bytes)) {
        admit(bytes)
      } else {
        if (waiting.length >= opts.maxWaiting) {
          throw new HearthError('WORKERS_BUSY', `too many large requests at once (${running} running, ${waiting.length} waiting for ${opts.name}); try again shortly`, { waiting: waiting.length })
        }
        await new Promise<void>((resolve) => { waiting.push({ bytes, go: resolve }) })
      }
      try {
        return await fn()
      } finally {
        release(bytes)
      }
    },
    status: () => ({ inFlightBytes: inFlight, running, waiting: waiting.length, peakBytes: peak })
  }
}
