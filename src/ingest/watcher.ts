// Watches data/ for new and changed files (chokidar). A file is handed on only after its size has
// been stable for `stabilityMs` (awaitWriteFinish), so a connector's half-written export is never
// read. Paths outside the layout are dropped here, before any I/O.
import chokidar, { type FSWatcher } from 'chokidar'
import { classifyDataPath, relativeDataPath } from './layout.js'

export interface DataWatcher { ready: Promise<void>; close (): Promise<void> }

export function watchDataFolder (opts: {
  dataDir: string
  stabilityMs: number
  usePolling: boolean
  onFile: (rel: string) => void
  onError?: (err: unknown) => void
}): DataWatcher {
  const watcher: FSWatcher = chokidar.watch(opts.dataDir, {
    ignoreInitial: true, // the scanner reconciles existing files, in bounded memory
    depth: 1,
    usePolling: opts.usePolling,
    interval: 200,
    awaitWriteFinish: { stabilityThreshold: opts.stabilityMs, pollInterval: Math.max(50, Math.floor(opts.stabilityMs / 4)) },
    ignored: (path: string, stats?: { isFile (): boolean }) => {
      if (stats === undefined || !stats.isFile()) return false
      return classifyDataPath(relativeDataPath(opts.dataDir, path)).kind !== 'data'
    }
  })
  const handle = (path: string): void => {
    const rel = relativeDataPath(opts.dataDir, path)
    if (classifyDataPath(rel).kind === 'data') opts.onFile(rel)
  }
  watcher.on('add', handle)
  watcher.on('change', handle)
  watcher.on('error', (err) => opts.onError?.(err))
  const ready = new Promise<void>((resolve) => watcher.once('ready', () => resolve()))
  return { ready, close: async () => { await watcher.close() } }
}
