// When pulls run: one pull per peer at a time, a request during a pull makes exactly one more
// round after it, and a failed pull from a still-connected peer is retried with backoff (1 s
// doubling to 60 s).
import type { SyncRoundResult } from './engine-contract.js'

export interface PullScheduler {
  /** Pull from this peer now, or once more after the pull that is running. */
  request (peerId: string): Promise<SyncRoundResult>
  syncing (peerId: string): boolean
  /** Cancel retries and wait for the running pulls (call after aborting them). */
  stop (): Promise<void>
}

const RETRY_MIN_MS = 1000
const RETRY_MAX_MS = 60_000

export function createPullScheduler (deps: {
  pull (peerId: string): Promise<SyncRoundResult>
  running (): boolean
  connected (peerId: string): boolean
}): PullScheduler {
  const pulls = new Map<string, { again: boolean; done: Promise<SyncRoundResult> }>()
  const retryTimers = new Map<string, { timer: NodeJS.Timeout; failures: number }>()

  function retryAfterFailure (peerId: string, ok: boolean): void {
    const pending = retryTimers.get(peerId)
    if (pending !== undefined) clearTimeout(pending.timer)
    if (ok || !deps.running()) { retryTimers.delete(peerId); return }
    const failures = (pending?.failures ?? 0) + 1
    const timer = setTimeout(() => {
      if (deps.running() && deps.connected(peerId)) void request(peerId)
    }, Math.min(RETRY_MIN_MS * 2 ** (failures - 1), RETRY_MAX_MS))
    timer.unref()
    retryTimers.set(peerId, { timer, failures })
  }

  function request (peerId: string): Promise<SyncRoundResult> {
    const current = pulls.get(peerId)
    if (current !== undefined) {
      current.again = true
      return current.done
    }
    const entry = { again: false, done: Promise.resolve(null as unknown as SyncRoundResult) }
    entry.done = (async () => {
      let result: SyncRoundResult
      do {
        entry.again = false
        result = await deps.pull(peerId)
      } while (entry.again && deps.running())
      pulls.delete(peerId)
      retryAfterFailure(peerId, result.ok)
      return result
    })()
    pulls.set(peerId, entry)
    return entry.done
  }

  return {
    request,
    syncing: (peerId) => pulls.has(peerId),
    async stop () {
      for (const r of retryTimers.values()) clearTimeout(r.timer)
      retryTimers.clear()
      await Promise.allSettled([...pulls.values()].map(async (p) => await p.done))
    }
  }
}
