// Watches data/ for new and changed files with the platform's own notifications (fs.watch:
// inotify on Linux) on the data folder and on each scope folder — one watch per folder, never
// one per file — and hands a file on only once its size and mtime have stayed the same for
// `stabilityMs`, so a connector's half-written export is never read.
//
// Why not chokidar: it re-reads and stats the whole folder on every change event and keeps an
// entry (and a watcher) per file, so with 100k files in one scope folder each new file cost
// O(n) work; here an event costs one stat, and memory holds only files still being written.
import { watch, type FSWatcher } from 'node:fs'
import { stat, readdir } from 'node:fs/promises'
import { join } from 'node:path'
import { classifyDataPath } from './layout.js'
import type { OwnWrites } from './own-writes.js'

export interface DataWatcher { ready: Promise<void>; close (): Promise<void> }

interface Pending { size: number; mtimeMs: number; timer: NodeJS.Timeout }

export function watchDataFolder (opts: {
  dataDir: string
  stabilityMs: number
  onFile: (rel: string) => void
  onError?: (err: unknown) => void
  /** Files the pipeline wrote itself: their creation event is skipped (own-writes.ts). */
  ownWrites?: Pick<OwnWrites, 'take'>
}): DataWatcher {
  const folders = new Map<string, FSWatcher>()
  const pending = new Map<string, Pending>()
  let closed = false

  async function settle (rel: string): Promise<void> {
    if (closed) return
    let st
    try {
      st = await stat(join(opts.dataDir, rel))
    } catch {
      pending.delete(rel) // gone (renamed away, deleted): nothing to ingest
      return
    }
    const seen = pending.get(rel)
    if (seen !== undefined && seen.size === st.size && seen.mtimeMs === st.mtimeMs) {
      pending.delete(rel)
      if (st.isFile()) opts.onFile(rel)
      return
    }
    clearTimeout(seen?.timer)
    pending.set(rel, { size: st.size, mtimeMs: st.mtimeMs, timer: setTimeout(() => { void settle(rel) }, opts.stabilityMs) })
  }

  function fileEvent (scopeFolder: string, name: string | null): void {
    if (closed || name === null) return
    const rel = `${scopeFolder}/${name}`
    if (classifyDataPath(rel).kind !== 'data') return
    const seen = pending.get(rel)
    if (seen === undefined && opts.ownWrites?.take(rel) === true) return
    if (seen !== undefined) {
      // still being written: restart its quiet period
      clearTimeout(seen.timer)
      seen.timer = setTimeout(() => { void settle(rel) }, opts.stabilityMs)
      return
    }
    // the size and mtime seen now, so that one quiet period (not two) shows the file unchanged
    const entry: Pending = { size: -1, mtimeMs: -1, timer: setTimeout(() => { void settle(rel) }, opts.stabilityMs) }
    pending.set(rel, entry)
    void stat(join(opts.dataDir, rel)).then((st) => {
      if (pending.get(rel) === entry && entry.size === -1) { entry.size = st.size; entry.mtimeMs = st.mtimeMs }
    }, () => {})
  }

  function watchFolder (name: string): void {
    if (closed || folders.has(name) || name.startsWith('.')) return
    try {
      const w = watch(join(opts.dataDir, name), (_event, file) => fileEvent(name, file === null ? null : String(file)))
      w.on('error', () => { w.close(); folders.delete(name) })
      folders.set(name, w)
    } catch (err) {
      if ((err as NodeJS.ErrnoException).code !== 'ENOENT' && (err as NodeJS.ErrnoException).code !== 'ENOTDIR') opts.onError?.(err)
    }
  }

  async function folderEvent (name: string | null): Promise<void> {
    if (closed || name === null || name.startsWith('.')) return
    const st = await stat(join(opts.dataDir, name)).catch(() => null)
    if (st === null) { folders.get(name)?.close(); folders.delete(name); return }
    if (!st.isDirectory() || folders.has(name)) return
    watchFolder(name)
    // files that landed in a new folder before its watch existed
    for (const file of await readdir(join(opts.dataDir, name)).catch(() => [] as string[])) fileEvent(name, file)
  }

  const top = watch(opts.dataDir, (_event, name) => { void folderEvent(name === null ? null : String(name)).catch((err) => opts.onError?.(err)) })
  top.on('error', (err) => opts.onError?.(err))
  const ready = (async () => {
    for (const entry of await readdir(opts.dataDir, { withFileTypes: true })) {
      if (entry.isDirectory()) watchFolder(entry.name)
    }
  })()

  return {
    ready,
    async close () {
      closed = true
      top.close()
      for (const w of folders.values()) w.close()
      folders.clear()
      for (const p of pending.values()) clearTimeout(p.timer)
      pending.clear()
    }
  }
}
