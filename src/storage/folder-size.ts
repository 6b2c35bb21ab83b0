// The bytes folder trees hold on disk (the embedded node's block files and LevelDB), for `hearth status` and the
// dashboard. Walking a million block files costs seconds, so the figure is measured in the
// background at most once per `maxAgeMs`, one walk at a time, and callers get the last one.
import { opendir, lstat } from 'node:fs/promises'
import { join } from 'node:path'

export interface FolderSize {
  /** The last measured size in bytes (null before the first walk ends); starts a walk when stale. */
  current (): number | null
  /** Resolves when the walk under way (if any) has finished. */
  settled (): Promise<void>
}

async function walk (dir: string): Promise<number> {
  let total = 0
  let handle
  try {
    handle = await opendir(dir)
  } catch (err) {
    if ((err as NodeJS.ErrnoException).code === 'ENOENT') return 0
    throw err
  }
  for await (const entry of handle) {
    const path = join(dir, entry.name)
    if (entry.isDirectory()) total += await walk(path)
    else if (entry.isFile()) total += await lstat(path).then((s) => s.size, () => 0)
  }
  return total
}

export function folderSize (dirs: string | readonly string[], opts: { maxAgeMs?: number, now?: () => number } = {}): FolderSize {
  const maxAgeMs = opts.maxAgeMs ?? 30_000
  const now = opts.now ?? Date.now
  let value: number | null = null
  let measuredAt = -Infinity
  let running: Promise<void> | null = null
  return {
    current () {
      if (running === null && now() - measuredAt >= maxAgeMs) {
        running = Promise.all((typeof dirs === 'string' ? [dirs] : dirs).map(walk))
          .then((sizes) => { value = sizes.reduce((a, b) => a + b, 0); measuredAt = now() })
          .catch(() => { measuredAt = now() })
          .finally(() => { running = null })
      }
      return value
    },
    async settled () { await running }
  }
}
