// A FIFO async mutex: writers that read-modify-write shared keys (counters, summaries, the change
// sequence) run one at a time. It holds no per-key state, only the tail of the waiting chain.
export class Mutex {
  #tail: Promise<void> = Promise.resolve()

  async run<T> (fn: () => Promise<T>): Promise<T> {
    const previous = this.#tail
    let release!: () => void
    this.#tail = new Promise<void>((resolve) => { release = resolve })
    try {
      await previous
      return await fn()
    } finally {
      release()
    }
  }
}
