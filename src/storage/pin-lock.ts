// Helia's pin bookkeeping read-modify-writes a counter per block with no lock of its own. A pin
// of a single raw block touches only that block's counter, so such pins may run side by side
// (one at a time per CID); a pin of a multi-block DAG may share blocks with anything, so it runs
// alone. Small files — nearly every file — are single raw blocks, so this keeps their pins
// concurrent without risking a lost counter update.
export class PinLock {
  #exclusiveTail: Promise<void> = Promise.resolve()
  readonly #active = new Set<Promise<unknown>>()
  readonly #keyTails = new Map<string, Promise<unknown>>()

  async shared<T> (key: string, fn: () => Promise<T>): Promise<T> {
    // wait until no exclusive holder is queued ahead of us (re-check: one may queue meanwhile)
    for (let tail = this.#exclusiveTail; ; tail = this.#exclusiveTail) {
      await tail
      if (tail === this.#exclusiveTail) break
    }
    const previous = this.#keyTails.get(key) ?? Promise.resolve()
    const run = previous.then(fn, fn)
    const settled = run.then(() => {}, () => {})
    this.#keyTails.set(key, settled)
    this.#active.add(settled)
    void settled.then(() => {
      this.#active.delete(settled)
      if (this.#keyTails.get(key) === settled) this.#keyTails.delete(key)
    })
    return await run
  }

  async exclusive<T> (fn: () => Promise<T>): Promise<T> {
    const previous = this.#exclusiveTail
    let release!: () => void
    this.#exclusiveTail = new Promise<void>((resolve) => { release = resolve })
    try {
      await previous
      await Promise.all([...this.#active])
      return await fn()
    } finally {
      release()
    }
  }

  /** Resolves once every pin started so far has finished. */
  async idle (): Promise<void> {
    await this.exclusive(async () => {})
  }
}
