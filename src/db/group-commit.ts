// Group commit: items submitted while a flush is running are gathered and written by the next
// flush, together. Under load N concurrent writers cost about two flushes, not N; alone, a writer
// pays one flush and no waiting.
export type GroupCommit<T> = (item: T) => Promise<void>

export function createGroupCommit<T> (flush: (items: T[]) => Promise<void>): GroupCommit<T> {
  let gathering: { items: T[]; done: Promise<void> } | null = null
  let running: Promise<void> = Promise.resolve()
  return async function submit (item: T): Promise<void> {
    if (gathering === null) {
      const group: { items: T[]; done: Promise<void> } = { items: [], done: Promise.resolve() }
      group.done = running.catch(() => {}).then(async () => {
        if (gathering === group) gathering = null
        await flush(group.items)
      })
      running = group.done
      gathering = group
    }
    gathering.items.push(item)
    return await gathering.done
  }
}
