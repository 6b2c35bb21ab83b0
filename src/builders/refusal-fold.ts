// Refusals past a budget are folded (docs/protocol.md §3.8): every request that reaches the
// builder listener is in the access log, but what a caller can make Hearth store is bounded.
// Within a budget each request has its own entry; past it (RATE_LIMITED, or a refusal before
// authentication from an address whose budget is spent) the first refusal of a key and code in a
// minute is appended and the next ones only raise that entry's `repeats`. Memory is bounded too:
// at most MAX_KEYS folds are open, the oldest closed first.
import type { AccessLog, NewAccessLogEntry } from './access-log.js'
import type { AccessLogEntry } from './types.js'

export interface RefusalFold {
  /** Logs `entry` for budget key `key`: appended as the first of its minute, or counted on it. */
  note (key: string, entry: NewAccessLogEntry, now?: number): Promise<void>
  readonly size: number
}

const WINDOW_MS = 60_000
const MAX_KEYS = 10_000

export function createRefusalFold (log: AccessLog): RefusalFold {
  const open = new Map<string, { entry: Promise<AccessLogEntry>; repeats: number; until: number }>()

  function closeOld (now: number): void {
    for (const [key, fold] of open) if (fold.until <= now) open.delete(key)
    // still full: the oldest folds close (their entries stay as written)
    for (const key of open.keys()) {
      if (open.size < MAX_KEYS) break
      open.delete(key)
    }
  }

  return {
    async note (key, entry, now = Date.now()) {
      const id = `${key} ${entry.errorCode ?? ''}`
      const fold = open.get(id)
      if (fold !== undefined && fold.until > now) {
        fold.repeats++
        const repeats = fold.repeats
        const first = await fold.entry
        // the newest count wins: writes are serialised, and a later note wrote a larger number
        if (repeats === fold.repeats) await log.setRepeats(first, repeats)
        return
      }
      if (open.size >= MAX_KEYS) closeOld(now)
      const appended = log.append(entry)
      open.set(id, { entry: appended, repeats: 0, until: now + WINDOW_MS })
      await appended.catch((err: unknown) => { open.delete(id); throw err })
    },
    get size () { return open.size }
  }
}
