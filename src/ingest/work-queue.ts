// Bounded-concurrency work on data paths. A path already queued is not queued twice (a burst of
// change events for one file is one ingest); producers that can outrun the workers (the initial
// scan of a million files) await `capacity()` so memory stays bounded. With `runBatch`, each run
// takes up to `batchSize` waiting paths at once (files whose work is cheaper together); keys that
// come together (`pushMany`) start one run together, where pushing them one by one would start a
// run for each of the first keys while runs are free.
export interface WorkQueue {
  push (key: string): void
  /** Queues `keys` (those not queued yet), then starts runs: up to `batchSize` of them in one run. */
  pushMany (keys: Iterable<string>): void
  /** Resolves when fewer than `highWater` keys are waiting. */
  capacity (): Promise<void>
  /** Resolves when nothing is queued or running. */
  idle (): Promise<void>
  readonly size: number
  readonly running: number
  close (): Promise<void>
}

export type WorkQueueRunner =
  | { run: (key: string) => Promise<void> }
  | { runBatch: (keys: string[]) => Promise<void>; batchSize: number }

export function createWorkQueue (opts: { concurrency: number; highWater?: number } & WorkQueueRunner): WorkQueue {
  const take = 'runBatch' in opts ? opts.batchSize : 1
  const run = 'runBatch' in opts ? opts.runBatch : async (keys: string[]) => { await opts.run(keys[0]!) }
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
      const keys = waiting.splice(0, take)
      for (const key of keys) queued.delete(key)
      running++
      run(keys).catch(() => {}).finally(() => { running--; pump(); wake() })
    }
    wake()
  }

  function enqueue (key: string): void {
    if (closed || queued.has(key)) return
    queued.add(key)
    waiting.push(key)
  }

  return {
    push (key) {
      enqueue(key)
      pump()
    },
    pushMany (keys) {
      for (const key of keys) enqueue(key)
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
