// The initial scan: reconciles the data folder with the index after a start or a crash. It walks
// the folder as a stream (never a million-entry array) and hands each data file to the pipeline,
// whose size+mtime check makes an unchanged file cost one stat and one index read, no crypto.
import { opendir } from 'node:fs/promises'
import { join } from 'node:path'
import { classifyDataPath } from './layout.js'
import type { WorkQueue } from './work-queue.js'

export interface ScanProgress { seen: number; queued: number; done: boolean }

async function * dataFiles (dataDir: string): AsyncGenerator<string> {
  let top
  try {
    top = await opendir(dataDir)
  } catch (err) {
    if ((err as NodeJS.ErrnoException).code === 'ENOENT') return
    throw err
  }
  for await (const scopeEntry of top) {
    if (!scopeEntry.isDirectory() || scopeEntry.name.startsWith('.')) continue
    let dir
    try {
      dir = await opendir(join(dataDir, scopeEntry.name))
    } catch {
      continue
    }
    for await (const f of dir) {
      if (f.isFile() || f.isSymbolicLink()) yield `${scopeEntry.name}/${f.name}`
    }
  }
}

export async function scanDataFolder (opts: {
  dataDir: string
  queue: WorkQueue
  onProgress?: (p: ScanProgress) => void
  progressEvery?: number
  signal?: AbortSignal
}): Promise<ScanProgress> {
  const every = opts.progressEvery ?? 1000
  const progress: ScanProgress = { seen: 0, queued: 0, done: false }
  for await (const rel of dataFiles(opts.dataDir)) {
    // stopped meanwhile: not done, and not said to be (nothing is swept after a partial scan)
    if (opts.signal?.aborted === true) return progress
    progress.seen++
    if (classifyDataPath(rel).kind === 'data') {
      await opts.queue.capacity()
      opts.queue.push(rel)
      progress.queued++
    }
    if (progress.seen % every === 0) opts.onProgress?.({ ...progress })
  }
  await opts.queue.idle()
  if (opts.signal?.aborted === true) return progress
  progress.done = true
  opts.onProgress?.({ ...progress })
  return progress
}
