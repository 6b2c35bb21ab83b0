// Serialises work on one data path (watcher event, POST, peer delivery) without a global lock.
// Entries exist only while work is in flight, so memory does not grow with the number of files.
export class PathLocks {
  private readonly tails = new Map<string, Promise<void>>()

  async run<T> (path: string, fn: () => Promise<T>): Promise<T> {
    const release = await this.acquire(path)
    try {
      return await fn()
    } finally {
      release()
    }
  }

  /** Waits for the work already on `path`, then holds it until the returned function is called (once). */
  async acquire (path: string): Promise<() => void> {
    const previous = this.tails.get(path) ?? Promise.resolve()
    let release!: () => void
    const current = new Promise<void>((resolve) => { release = resolve })
    const tail = previous.then(async () => await current)
    this.tails.set(path, tail)
    await previous
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
