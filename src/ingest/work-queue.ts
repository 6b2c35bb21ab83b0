// Bounded-concurrency work on data paths. A path already queued is not queued twice (a burst of
// change events for one file is one ingest); producers that can outrun the workers (the initial
// scan of a million files) await `capacity()` so memory stays bounded.
export interface WorkQueue {
  push (key: string): void
  /** Resolves when fewer than `highWater` keys are waiting. */
  capacity (): Promise<void>
  /** Resolves when nothing is queued or running. */
  idle (): Promise<void>
  readonly size: number
  readonly running: number
  close (): Promise<void>
}

export function createWorkQueue (opts: { concurrency: number; highWater?: number; run: (key: string) => Promise<void> }): WorkQueue {
  const waiting: string[] = []
  const queued = new Set<string>()
  let running = 0
  let closed = false
  const highWater = opts.highWater ?? opts.concurrency * 64
  let waiters: Array<() => void> = []
  let idlers: Array<() => void> = []

  function wake (): void {
    if (waiting.length < highWater) { const w = waiters; waiters = []; for (const f of w) f() }
    if (waiting.length === 0 && running === 0) { const w = idlers; idlers = []; for (const f of w) f() }
  }

  function pump (): void {
    while (!closed && running < opts.concurrency && waiting.length > 0) {
      const key = waiting.shift()!
      queued.delete(key)
      running++
      opts.run(key).catch(() => {}).finally(() => { running--; pump(); wake() })
    }
    wake()
  }

  return {
    push (key) {
      if (closed || queued.has(key)) return
      queued.add(key)
      waiting.push(key)
      pump()
    },
    async capacity () {
      if (waiting.length < highWater) return
      await new Promise<void>((resolve) => waiters.push(resolve))
    },
    async idle () {
      if (waiting.length === 0 && running === 0) return
      await new Promise<void>((resolve) => idlers.push(resolve))
    },
    get size () { return waiting.length },
    get running () { return running },
    async close () {
      closed = true
      waiting.length = 0
      queued.clear()
      if (running > 0) await new Promise<void>((resolve) => idlers.push(resolve))
      wake()
    }
  }
}
