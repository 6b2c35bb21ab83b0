// Files the watcher handed on early (after its short quiet period) that were not JSON yet: a
// writer still at it, or a broken file. Nothing is recorded for them; each is looked at again once
// it has stayed unchanged for `patienceMs` (ingest.stabilityMs). Unchanged by then, it is read
// for the last time — and rejected if it still is not JSON, as any broken file is; changed, it is
// read as a fresh file again. Change events that come meanwhile are handled as usual (and a read
// that finds the file complete ends its wait here).
import { stat } from 'node:fs/promises'
import { sizeAndMtime } from '../storage/file-times.js'
import { absoluteDataPath } from './layout.js'

export interface Seen { size: number; mtimeMs: number }

export interface UnsettledFiles {
  /** `rel` was read as not JSON yet, with this size and mtime. */
  add (rel: string, seen: Seen): void
  /** `rel` was read with any other outcome: its wait ends. */
  settled (rel: string): void
  readonly size: number
  close (): void
}

export function createUnsettledFiles (opts: {
  dataDir: string
  patienceMs: number
  /** Read `rel` again; `final`: it stayed unchanged for patienceMs, so what it holds now is what it is. */
  recheck: (rel: string, final: boolean) => void
}): UnsettledFiles {
  const waiting = new Map<string, NodeJS.Timeout>()
  let closed = false

  async function lookAgain (rel: string, seen: Seen): Promise<void> {
    waiting.delete(rel)
    const st = await stat(absoluteDataPath(opts.dataDir, rel), { bigint: true }).catch(() => null)
    if (closed || st === null) return // gone: nothing to ingest
    const now = sizeAndMtime(st)
    opts.recheck(rel, now.size === seen.size && now.mtimeMs === seen.mtimeMs)
  }

  return {
    add (rel, seen) {
      if (closed) return
      clearTimeout(waiting.get(rel))
      const timer = setTimeout(() => { void lookAgain(rel, seen) }, opts.patienceMs)
      timer.unref()
      waiting.set(rel, timer)
    },
    settled (rel) {
      const timer = waiting.get(rel)
      if (timer === undefined) return
      clearTimeout(timer)
      waiting.delete(rel)
    },
    get size () { return waiting.size },
    close () {
      closed = true
      for (const timer of waiting.values()) clearTimeout(timer)
      waiting.clear()
    }
  }
}
