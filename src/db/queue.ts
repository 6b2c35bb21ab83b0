// A durable work queue in the Hearth database (chain registrations, queued upstream requests).
// Entries live under key; a second namespace orders them by (notBefore, enqueue order), so `due()`
// reads only the entries that are due instead of scanning the queue. Every change, including the
// size counter, is one atomic batch: a SIGKILL leaves the queue as it was before or after it.
import { HearthError } from '../errors.js'
import type { BatchOp, HearthDatabase, Sublevel } from './database.js'
import { joinKey, lastPart, padNumber } from './keys.js'
import { Mutex } from './mutex.js'
import type { DurableQueue, QueueEntry } from './types.js'

/** An entry as stored: `order` is its enqueue position, kept across retries. */
type StoredEntry<T> = QueueEntry<T> & { order: number }

const QUEUE_NAME = /^[A-Za-z0-9][A-Za-z0-9._-]*$/

function dueKey (e: { notBefore: number; order: number; key: string }): string {
  return joinKey(padNumber(Math.max(0, Math.floor(e.notBefore))), padNumber(e.order), e.key)
}

function publicEntry<T> (e: StoredEntry<T>): QueueEntry<T> {
  const { order: _order, ...rest } = e
  return rest
}

function checkKey (key: string): void {
  if (typeof key !== 'string' || key === '' || key.includes('\u0000')) {
    throw new HearthError('INVALID_ARGUMENT', 'a queue key must be a non-empty string without NUL')
  }
}

/** The queue `name` (sublevels ['queue', name, ...]). Use one instance per name per process. */
export function createDurableQueue<T> (db: HearthDatabase, name: string): DurableQueue<T> {
  if (!QUEUE_NAME.test(name)) throw new HearthError('INVALID_ARGUMENT', `invalid queue name ${JSON.stringify(name)}`)
  const entries: Sublevel<StoredEntry<T>> = db.sublevel(['queue', name, 'entry'])
  const byDue: Sublevel<string> = db.sublevel(['queue', name, 'due'], { valueEncoding: 'utf8' })
  const meta: Sublevel<number> = db.sublevel(['queue', name, 'meta'])
  const mutex = new Mutex()

  async function enqueueMany (items: ReadonlyArray<{ key: string; item: T }>): Promise<void> {
    for (const { key, item } of items) {
      checkKey(key)
      if (item === undefined) throw new HearthError('INVALID_ARGUMENT', 'a queue item cannot be undefined')
    }
    if (items.length === 0) return
    await mutex.run(async () => {
      const present = await entries.getMany(items.map((i) => i.key))
      const [order, size] = await meta.getMany(['order', 'size'])
      let next = order ?? 0
      const added = new Set<string>()
      const ops: BatchOp[] = []
      items.forEach(({ key, item }, i) => {
        if (present[i] !== undefined || added.has(key)) return
        added.add(key)
        const entry: StoredEntry<T> = { key, item, attempts: 0, notBefore: Date.now(), order: ++next }
        ops.push({ type: 'put', sublevel: entries, key, value: entry }, { type: 'put', sublevel: byDue, key: dueKey(entry), value: '' })
      })
      if (added.size === 0) return
      ops.push({ type: 'put', sublevel: meta, key: 'order', value: next }, { type: 'put', sublevel: meta, key: 'size', value: (size ?? 0) + added.size })
      await db.batch(ops)
    })
  }

  return {
    async enqueue (key, item) { await enqueueMany([{ key, item }]) },
    enqueueMany,

    async due (limit, now = Date.now()) {
      if (!Number.isSafeInteger(limit) || limit < 0) throw new HearthError('INVALID_ARGUMENT', `invalid limit ${String(limit)}`)
      if (limit === 0) return []
      // Every key with notBefore ≤ now sorts below padNumber(now) followed by \u0001.
      const keys = await byDue.keys({ lt: padNumber(Math.max(0, Math.floor(now))) + '\u0001', limit }).all()
      if (keys.length === 0) return []
      const found = await entries.getMany(keys.map(lastPart))
      return found.filter((e): e is StoredEntry<T> => e !== undefined).map(publicEntry)
    },

    async ack (key) {
      await mutex.run(async () => {
        const entry = await entries.get(key)
        if (entry === undefined) return
        const size = (await meta.get('size')) ?? 1
        await db.batch([
          { type: 'del', sublevel: entries, key },
          { type: 'del', sublevel: byDue, key: dueKey(entry) },
          { type: 'put', sublevel: meta, key: 'size', value: Math.max(0, size - 1) }
        ])
      })
    },

    /** An entry that is gone (already acked) has nothing to retry: a no-op. */
    async retryLater (key, delayMs, error) {
      if (!Number.isFinite(delayMs) || delayMs < 0) throw new HearthError('INVALID_ARGUMENT', `invalid delay ${String(delayMs)}`)
      await mutex.run(async () => {
        const entry = await entries.get(key)
        if (entry === undefined) return
        const next: StoredEntry<T> = { ...entry, attempts: entry.attempts + 1, notBefore: Date.now() + delayMs, lastError: String(error) }
        await db.batch([
          { type: 'del', sublevel: byDue, key: dueKey(entry) },
          { type: 'put', sublevel: byDue, key: dueKey(next), value: '' },
          { type: 'put', sublevel: entries, key, value: next }
        ])
      })
    },

    async get (key) {
      const entry = typeof key === 'string' && key !== '' ? await entries.get(key) : undefined
      return entry === undefined ? null : publicEntry(entry)
    },

    async size () {
      return (await meta.get('size')) ?? 0
    }
  }
}
