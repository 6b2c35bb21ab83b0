// Watches data/ for new and changed files with the platform's own notifications (fs.watch:
// inotify on Linux) on the data folder and on each scope folder — one watch per folder, never
// one per file — and hands files on once no change event has come for them for `quietMs`.
//
// Every write(2) to a file raises an event (inotify IN_MODIFY), so "no event for quietMs" is "not
// written for quietMs" without a stat per event: a burst of dropped files costs one map entry and
// no system call each until it is read. The files due are handed on together (`onFiles`), by one
// timer for the whole watcher (not one per file) that wakes a little after the first is due (up to
// half a quiet period, at most 25 ms), so the pipeline can batch their work. Whether a
// file read that early is complete is the pipeline's check (it must parse; see service.ts).
//
// Why not chokidar: it re-reads and stats the whole folder on every change event and keeps an
// entry (and a watcher) per file, so with 100k files in one scope folder each new file cost
// O(n) work; here an event costs a map update, and memory holds only files still being written.
import { watch, type FSWatcher } from 'node:fs'
import { stat, readdir } from 'node:fs/promises'
import { join } from 'node:path'
import { classifyDataPath } from './layout.js'
import type { OwnWrites } from './own-writes.js'

export interface DataWatcher { ready: Promise<void>; close (): Promise<void> }

export function watchDataFolder (opts: {
  dataDir: string
  /** A file is handed on once no change event came for it this long. */
  quietMs: number
  /** Files due, oldest first; a file changed again later is handed on again. */
  onFiles: (rels: string[]) => void
  onError?: (err: unknown) => void
  /** Files the pipeline wrote itself: their creation event is skipped (own-writes.ts). */
  ownWrites?: Pick<OwnWrites, 'take'>
}): DataWatcher {
  // scope folder → its watch and the folder's inode: a folder replaced by another of the same
  // name (removed, then one moved in) is watched anew, since the old watch saw only the old one
  const folders = new Map<string, { watch: FSWatcher; ino: number }>()
  // path → time of its last event; re-inserted on each event, so the map is in last-event order
  // and the files due are always at its front
  const pending = new Map<string, number>()
  let timer: NodeJS.Timeout | null = null
  let closed = false
  const batchSlackMs = Math.min(opts.quietMs / 2, 25)

  function schedule (): void {
    if (timer !== null || closed) return
    const first = pending.values().next()
    if (first.done === true) return
    // woken a little after the first file is due, so files dropped just after it go in the same batch
    timer = setTimeout(flush, Math.max(0, first.value + opts.quietMs - performance.now()) + batchSlackMs)
  }

  function flush (): void {
    timer = null
    if (closed) return
    const now = performance.now()
    const due: string[] = []
    for (const [rel, at] of pending) {
      if (now - at < opts.quietMs) break
      pending.delete(rel)
      due.push(rel)
    }
    if (due.length > 0) opts.onFiles(due)
    schedule()
  }

  function fileEvent (scopeFolder: string, name: string | null): void {
    // a hidden name (a careful writer's temp file: two events of its own per dropped file) is never data
    if (closed || name === null || name.startsWith('.')) return
    const rel = `${scopeFolder}/${name}`
    if (classifyDataPath(rel).kind !== 'data') return
    if (pending.has(rel)) pending.delete(rel) // still being written: its quiet period starts again
    else if (opts.ownWrites?.take(rel) === true) return
    pending.set(rel, performance.now())
    schedule()
  }

  function unwatch (name: string): void {
    folders.get(name)?.watch.close()
    folders.delete(name)
  }

  function watchFolder (name: string, ino: number): void {
    if (closed || folders.has(name) || name.startsWith('.')) return
    try {
      const w = watch(join(opts.dataDir, name), (_event, file) => fileEvent(name, file === null ? null : String(file)))
      w.on('error', () => { if (folders.get(name)?.watch === w) unwatch(name); else w.close() })
      folders.set(name, { watch: w, ino })
    } catch (err) {
      if ((err as NodeJS.ErrnoException).code !== 'ENOENT' && (err as NodeJS.ErrnoException).code !== 'ENOTDIR') opts.onError?.(err)
    }
  }

  async function folderEvent (name: string | null): Promise<void> {
    if (closed || name === null || name.startsWith('.')) return
    const st = await stat(join(opts.dataDir, name)).catch(() => null)
    if (st === null || !st.isDirectory()) { unwatch(name); return }
    if (folders.get(name)?.ino === st.ino) return
    unwatch(name)
    watchFolder(name, st.ino)
    // files that landed in a new folder before its watch existed (a folder moved in brings them all)
    for (const file of await readdir(join(opts.dataDir, name)).catch(() => [] as string[])) fileEvent(name, file)
  }

  const top = watch(opts.dataDir, (_event, name) => { void folderEvent(name === null ? null : String(name)).catch((err) => opts.onError?.(err)) })
  top.on('error', (err) => opts.onError?.(err))
  const ready = (async () => {
    for (const entry of await readdir(opts.dataDir, { withFileTypes: true })) {
      if (!entry.isDirectory()) continue
      const st = await stat(join(opts.dataDir, entry.name)).catch(() => null)
      if (st !== null) watchFolder(entry.name, st.ino)
    }
  })()

  return {
    ready,
    async close () {
      closed = true
      top.close()
      for (const { watch: w } of folders.values()) w.close()
      folders.clear()
      if (timer !== null) clearTimeout(timer)
      timer = null
      pending.clear()
    }
  }
}
