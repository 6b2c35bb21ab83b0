// Paths whose ingest failed because a remote service (the Kubo node) was down. They are handed
// back to the work queue with a growing delay until it answers again. Memory holds only paths
// that failed while the service was down; after a restart the initial scan finds them anyway.
export interface RetrySet {
  add (path: string): void
  readonly size: number
  /** Called after any successful store: the service is back, retry everything now. */
  succeeded (): void
  stop (): void
}

export function createRetrySet (opts: { retry: (path: string) => void, minDelayMs?: number, maxDelayMs?: number }): RetrySet {
  const min = opts.minDelayMs ?? 1_000
  const max = opts.maxDelayMs ?? 60_000
  const paths = new Set<string>()
  let delay = min
  let timer: NodeJS.Timeout | null = null

  function flush (): void {
    timer = null
    const batch = [...paths]
    paths.clear()
    for (const p of batch) opts.retry(p)
  }
  function schedule (): void {
    if (timer !== null || paths.size === 0) return
    timer = setTimeout(flush, delay)
    timer.unref()
    delay = Math.min(max, delay * 2)
  }
  return {
    add (path) { paths.add(path); schedule() },
    get size () { return paths.size },
    succeeded () {
      delay = min
      if (paths.size > 0 && timer !== null) { clearTimeout(timer); timer = null; flush() }
    },
    stop () { if (timer !== null) clearTimeout(timer); timer = null }
  }
}
