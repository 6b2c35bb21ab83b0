// Watches data/ for new and changed files with the platform's own notifications (fs.watch:
// inotify on Linux) on the data folder and on each scope folder — one watch per folder, never
// one per file — and hands files on once no change event has come for them for `quietMs`.
//
// Every write(2) to a file raises an event (inotify IN_MODIFY), so "no event for quietMs" is "not
// written for quietMs" without a stat per event: a burst of dropped files costs one map entry and
// no system call each until it is read. The files due are handed on together (`onFiles`), by one
// timer for the whole watcher (not one per file), so the pipeline can batch their work: while a
// burst goes on they wait for more (a batch is handed on when full, or when its oldest has waited
// half a quiet period, at most 25 ms); once no event came for twice the usual time between the
// burst's files (2 ms at least) the burst is over and they go at once, so the last file of a
// burst waits no slack. A file renamed into place from a temp
// name (inotify reports the temp name's event, then the new name's) or inside a folder moved in
// arrived whole: it is due at once, without a quiet period; a write to it after that puts it
// under the quiet rule again. Whether a file read that early is complete is the pipeline's check
// (it must parse; see service.ts).
//
// Why not chokidar: it re-reads and stats the whole folder on every change event and keeps an
// entry (and a watcher) per file, so with 100k files in one scope folder each new file cost
// O(n) work; here an event costs a map update, and memory holds only files still being written.
import { existsSync, watch, type FSWatcher } from 'node:fs'
import { stat, readdir } from 'node:fs/promises'
import { join } from 'node:path'
import { classifyDataPath } from './layout.js'
import type { OwnWrites } from './own-writes.js'

export interface DataWatcher { ready: Promise<void>; close (): Promise<void> }

/**
 * A burst is over once no event came for twice the usual time between its files (at least this
 * long, at most the slack): the files due are handed on without waiting to batch more.
 */
const MIN_BURST_GAP_MS = 2
/** A temp name's rename event and a data file's this close are one rename (see watchFolder). */
const ONE_RENAME_MS = 5

export function watchDataFolder (opts: {
  dataDir: string
  /** A file is handed on once no change event came for it this long. */
  quietMs: number
  /** Files due, oldest first; a file changed again later is handed on again. */
  onFiles: (rels: string[]) => void
  /** A burst's due files are handed on as soon as this many are due (default 32), without waiting for more. */
  batchFiles?: number
  onError?: (err: unknown) => void
  /** Files the pipeline wrote itself: their creation event is skipped (own-writes.ts). */
  ownWrites?: Pick<OwnWrites, 'take'>
}): DataWatcher {
  // scope folder → its watch and the folder's inode: a folder replaced by another of the same
  // name (removed, then one moved in) is watched anew, since the old watch saw only the old one
  const folders = new Map<string, { watch: FSWatcher; ino: number }>()
  // path → time of its last event; re-inserted on each event, so the map is in last-event order
  // and the files that are due first are always at its front
  const pending = new Map<string, number>()
  // path → since when it is due (quiet long enough, or moved in whole), in that order: handed on
  // together once the batch is full, the oldest has waited the slack, or the burst is over
  const due = new Map<string, number>()
  let lastEventAt = Number.NEGATIVE_INFINITY
  // the time between data files' events within a burst (moving average), and the last such event
  let spacing = 0
  let lastDataEventAt = Number.NEGATIVE_INFINITY
  let burstGapMs = MIN_BURST_GAP_MS
  let timer: NodeJS.Timeout | null = null
  let timerAt = Number.POSITIVE_INFINITY
  let closed = false
  const batchSlackMs = Math.min(opts.quietMs / 2, 25)
  const batchFiles = opts.batchFiles ?? 32

  /** When something is to be done next: a pending file becomes due, or the due ones are handed on. */
  function nextWake (): number {
    let at = Number.POSITIVE_INFINITY
    const first = pending.values().next()
    if (first.done !== true) at = first.value + opts.quietMs
    const oldestDue = due.values().next()
    if (oldestDue.done !== true) at = Math.min(at, due.size >= batchFiles ? 0 : Math.min(oldestDue.value + batchSlackMs, lastEventAt + burstGapMs))
    return at
  }

  function schedule (): void {
    if (closed) return
    const at = nextWake()
    if (at === Number.POSITIVE_INFINITY || (timer !== null && timerAt <= at)) return
    if (timer !== null) clearTimeout(timer)
    timerAt = at
    timer = setTimeout(wake, Math.max(0, at - performance.now()))
  }

  function wake (): void {
    timer = null
    timerAt = Number.POSITIVE_INFINITY
    if (closed) return
    const now = performance.now()
    for (const [rel, at] of pending) {
      if (now - at < opts.quietMs) break
      pending.delete(rel)
      due.set(rel, at + opts.quietMs)
    }
    const oldestDue = due.values().next()
    // while a burst goes on, due files wait (up to the slack) for more to join their batch; the
    // last files of a burst go as soon as it is over, not a slack later
    if (oldestDue.done !== true && (due.size >= batchFiles || now - oldestDue.value >= batchSlackMs || now - lastEventAt >= burstGapMs)) {
      const rels = [...due.keys()]
      due.clear()
      opts.onFiles(rels)
    }
    schedule()
  }

  /**
   * `movedIn`: the file arrived whole — renamed from a temp name in its folder (the event right
   * after the temp name's) or inside a folder moved in — so it is due at once instead of after the
   * quiet period. Any later event of it (a write) puts it back under the quiet rule.
   */
  function dataFileEvent (rel: string, movedIn: boolean): void {
    if (pending.has(rel)) pending.delete(rel) // still being written: its quiet period starts again
    else if (due.has(rel)) due.delete(rel)
    else if (opts.ownWrites?.take(rel) === true) return
    const now = performance.now()
    const interval = now - lastDataEventAt
    lastDataEventAt = now
    if (interval < batchSlackMs) {
      // a slower writer (or a loaded machine) spaces its files further apart: its burst is over later
      spacing = spacing * 0.75 + interval * 0.25
      burstGapMs = Math.min(batchSlackMs, Math.max(MIN_BURST_GAP_MS, 2 * spacing))
    }
    if (movedIn) due.set(rel, now)
    else pending.set(rel, now)
    schedule()
  }

  function isDataName (scopeFolder: string, name: string): boolean {
    // a hidden name (a careful writer's temp file: several events of its own per dropped file) is never data
    return !name.startsWith('.') && classifyDataPath(`${scopeFolder}/${name}`).kind === 'data'
  }

  function unwatch (name: string): void {
    folders.get(name)?.watch.close()
    folders.delete(name)
  }

  function watchFolder (name: string, ino: number): void {
    if (closed || folders.has(name) || name.startsWith('.')) return
    try {
      // the folder's previous event when it was a rename event of a name that is not data (a
      // temp file's): inotify reports a rename as the old name's event and, next, the new name's,
      // read together (microseconds apart). A temp name's creation or removal is a rename event
      // too, so the temp must be gone and its event just before (one lstat, made only for a data
      // file's rename event right after a temp's).
      let tempRenamed: string | null = null
      let tempRenamedAt = 0
      const w = watch(join(opts.dataDir, name), (event, file) => {
        if (closed || file === null) return
        const now = performance.now()
        lastEventAt = now
        const fileName = String(file)
        const data = isDataName(name, fileName)
        const fromTemp = data && tempRenamed !== null && event === 'rename' && now - tempRenamedAt < ONE_RENAME_MS && !existsSync(join(opts.dataDir, name, tempRenamed))
        if (event === 'rename' && !data) { tempRenamed = fileName; tempRenamedAt = now } else tempRenamed = null
        if (data) dataFileEvent(`${name}/${fileName}`, fromTemp)
      })
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
    for (const file of await readdir(join(opts.dataDir, name)).catch(() => [] as string[])) {
      if (!closed && isDataName(name, file)) dataFileEvent(`${name}/${file}`, true)
    }
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
      due.clear()
    }
  }
}
