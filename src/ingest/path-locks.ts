// Serialises work on one data path (watcher event, POST, peer delivery) without a global lock.
// Entries exist only while work is in flight, so memory does not grow with the number of files.
export class PathLocks {
  private readonly tails = new Map<string, Promise<void>>()

  async run<T> (path: string, fn: () => Promise<T>): Promise<T> {
    const previous = this.tails.get(path) ?? Promise.resolve()
    let release!: () => void
    const current = new Promise<void>((resolve) => { release = resolve })
    const tail = previous.then(async () => await current)
    this.tails.set(path, tail)
    await previous
    try {
      return await fn()
    } finally {
      release()
      if (this.tails.get(path) === tail) this.tails.delete(path)
    }
  }

  get inFlight (): number { return this.tails.size }
}
