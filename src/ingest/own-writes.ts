// Files the pipeline writes itself (a POST, a file received from a peer) are indexed by the write
// that made them; the change event the watcher then gets for them is expected and skipped, instead
// of costing a quiet-period timer, two stats, a queue slot and a stat plus an index read each.
// A later change of such a file is a second event, handled as usual. Marks that no event takes
// (polling, a watcher not yet on the folder) expire; a late event then only costs the check.
import { writeNewFile } from './atomic-write.js'
import type { DurableWrite } from '../storage/durable-file.js'

export interface OwnWrites {
  /** About to write `rel` (before the name appears, so its event cannot come first). */
  expect (rel: string): void
  /** The write did not create the name (taken, failed): no event of ours will come. */
  cancel (rel: string): void
  /** Whether an event for `rel` is the one expected from our write (consumes the mark). */
  take (rel: string): boolean
}

export function createOwnWrites (opts: { ttlMs?: number; maxEntries?: number; now?: () => number } = {}): OwnWrites {
  const ttlMs = opts.ttlMs ?? 60_000
  const maxEntries = opts.maxEntries ?? 10_000
  const now = opts.now ?? Date.now
  const marks = new Map<string, number>() // rel → expiry, in insertion order

  function prune (): void {
    const t = now()
    for (const [rel, expires] of marks) {
      if (expires > t && marks.size <= maxEntries) break
      marks.delete(rel)
    }
  }

  return {
    expect (rel) {
      marks.delete(rel)
      marks.set(rel, now() + ttlMs)
      if (marks.size > maxEntries) prune()
    },
    cancel (rel) { marks.delete(rel) },
    take (rel) {
      const expires = marks.get(rel)
      if (expires === undefined) return false
      marks.delete(rel)
      return expires > now()
    }
  }
}

/** writeNewFile, with the watcher told to skip the event of the name it creates. */
export async function writeOwnDataFile (own: Pick<OwnWrites, 'expect' | 'cancel'> | undefined, rel: string, abs: string, bytes: Uint8Array, opts: Parameters<typeof writeNewFile>[2] = {}): Promise<DurableWrite> {
  own?.expect(rel)
  try {
    const write = await writeNewFile(abs, bytes, opts)
    if (!write.written) own?.cancel(rel)
    return write
  } catch (err) {
    own?.cancel(rel)
    throw err
  }
}
