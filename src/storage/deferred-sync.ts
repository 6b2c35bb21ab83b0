// Makes many files that were written without an fsync durable at once, with their folder
// entries: the ingest journal's background checkpoint. On Linux one syncfs(2) per filesystem
// (through coreutils' `sync -f`, which Node does not expose) flushes every dirty page and inode
// with one journal commit, instead of an fsync per file and per folder on the libuv threadpool
// the requests need; elsewhere, or when `sync -f` fails, each file and each folder is fsynced.
import { execFile } from 'node:child_process'
import { open, stat } from 'node:fs/promises'
import { dirname } from 'node:path'

export type SyncFiles = (files: readonly string[]) => Promise<void>

/** Below this many files, fsyncing them one by one is cheaper than starting `sync -f`. */
const SYNCFS_MIN_FILES = 8
/** Per-file fsyncs in flight at once (the threadpool has four threads, requests need them too). */
const PER_FILE_CONCURRENCY = 2

export function createFileSyncer (opts: { syncfs?: boolean } = {}): SyncFiles {
  let syncfs = (opts.syncfs ?? true) && process.platform === 'linux'
  // folder → its filesystem's device, so one path per filesystem is handed to syncfs; one entry
  // per folder ever synced (scope folders and the 1,024 block shards)
  const devices = new Map<string, number>()

  async function deviceOf (dir: string): Promise<number> {
    let dev = devices.get(dir)
    if (dev === undefined) { dev = (await stat(dir)).dev; devices.set(dir, dev) }
    return dev
  }

  return async function syncFiles (files: readonly string[]): Promise<void> {
    if (files.length === 0) return
    const dirs = [...new Set(files.map((f) => dirname(f)))]
    if (syncfs && files.length >= SYNCFS_MIN_FILES) {
      const perDevice = new Map<number, string>()
      for (const dir of dirs) {
        const dev = await deviceOf(dir).catch(() => null)
        if (dev !== null && !perDevice.has(dev)) perDevice.set(dev, dir)
      }
      try {
        await runSyncfs([...perDevice.values()])
        return
      } catch {
        syncfs = false // no coreutils `sync -f` here: fsync one by one from now on
      }
    }
    await eachLimited(files, PER_FILE_CONCURRENCY, fsyncPath)
    await eachLimited(dirs, PER_FILE_CONCURRENCY, fsyncPath)
  }
}

async function runSyncfs (paths: string[]): Promise<void> {
  await new Promise<void>((resolve, reject) => {
    execFile('sync', ['-f', ...paths], { windowsHide: true }, (err) => { if (err === null) resolve(); else reject(err) })
  })
}

async function fsyncPath (path: string): Promise<void> {
  let fh
  try {
    fh = await open(path, 'r')
  } catch (err) {
    // replaced or removed since (a new version, a deleted file): nothing of it left to sync
    if ((err as NodeJS.ErrnoException).code === 'ENOENT') return
    throw err
  }
  try { await fh.sync() } finally { await fh.close() }
}

async function eachLimited<T> (items: readonly T[], limit: number, fn: (item: T) => Promise<void>): Promise<void> {
  let next = 0
  await Promise.all(Array.from({ length: Math.min(limit, items.length) }, async () => {
    while (next < items.length) await fn(items[next++]!)
  }))
}
