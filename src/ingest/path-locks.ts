// Serialises work on one data path (watcher event, POST, peer delivery) without a global lock.
// Entries exist only while work is in flight, so memory does not grow with the number of files.
export class PathLocks {
  private readonly tails = new Map<string, Promise<void>>()

  async run<T> (path: string, fn: () => Promise<T>): Promise<T> {
    const release = this.tryAcquire(path) ?? await this.acquire(path)
    try {
      return await fn()
    } finally {
      release()
    }
  }

  /** Waits for the work already on `path`, then holds it until the returned function is called (once). */
  async acquire (path: string): Promise<() => void> {
    const previous = this.tails.get(path)
    if (previous === undefined) return this.#hold(path)
    let release!: () => void
    const current = new Promise<void>((resolve) => { release = resolve })
    const tail = previous.then(async () => await current)
    this.tails.set(path, tail)
    await previous
    return this.#releaser(path, tail, release)
  }

  /**
   * Holds `path` at once when no work is on it (nearly always: no promise to wait for, no turn
   * of the microtask queue), else null: `acquire` waits for it.
   */
  tryAcquire (path: string): (() => void) | null {
    return this.tails.has(path) ? null : this.#hold(path)
  }

  #hold (path: string): () => void {
    let release!: () => void
    const tail = new Promise<void>((resolve) => { release = resolve })
    this.tails.set(path, tail)
    return this.#releaser(path, tail, release)
  }

  #releaser (path: string, tail: Promise<void>, release: () => void): () => void {
    let released = false
    return () => {
      if (released) return
      released = true
      release()
      if (this.tails.get(path) === tail) this.tails.delete(path)
    }
  }

  get inFlight (): number { return this.tails.size }
}
