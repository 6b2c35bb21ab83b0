// Makes many files that were written without an fsync durable at once, with their folder
// entries: the ingest journal's background checkpoint. On Linux one syncfs(2) per filesystem
// (through coreutils' `sync -f`, which Node does not expose) flushes every dirty page and inode
// with one journal commit, instead of an fsync per file and per folder on the libuv threadpool
// the requests need; elsewhere, or when `sync -f` fails, each file and each folder is fsynced.
// `sync -f` runs from one long-lived shell started on first use: spawning from the daemon costs
// its main thread a fork of a large process each time (~7 % of a 1 KB burst's CPU, measured).
import { spawn, type ChildProcess } from 'node:child_process'
import { createInterface } from 'node:readline'
import { open, stat } from 'node:fs/promises'
import { dirname } from 'node:path'

export type SyncFiles = (files: readonly string[]) => Promise<void>

export interface FileSyncer extends SyncFiles {
  /**
   * Starts the helper shell now: spawning forks the whole daemon, which costs its main thread tens
   * of milliseconds more in the middle of a burst of requests than at start.
   */
  warm (): void
  /** Ends the helper shell (a syncer is usable again afterwards: it starts a new one). */
  close (): void
}

/** Below this many files, fsyncing them one by one is cheaper than starting `sync -f`. */
const SYNCFS_MIN_FILES = 8
/** Per-file fsyncs in flight at once (the threadpool has four threads, requests need them too). */
const PER_FILE_CONCURRENCY = 2

export function createFileSyncer (opts: { syncfs?: boolean } = {}): FileSyncer {
  let syncfs = (opts.syncfs ?? true) && process.platform === 'linux'
  let helper: SyncfsHelper | null = null
  // folder → its filesystem's device, so one path per filesystem is handed to syncfs; one entry
  // per folder ever synced (scope folders and the 1,024 block shards)
  const devices = new Map<string, number>()

  async function deviceOf (dir: string): Promise<number> {
    let dev = devices.get(dir)
    if (dev === undefined) { dev = (await stat(dir)).dev; devices.set(dir, dev) }
    return dev
  }

  async function syncFiles (files: readonly string[]): Promise<void> {
    if (files.length === 0) return
    const dirs = [...new Set(files.map((f) => dirname(f)))]
    if (syncfs && files.length >= SYNCFS_MIN_FILES) {
      const perDevice = new Map<number, string>()
      for (const dir of dirs) {
        const dev = await deviceOf(dir).catch(() => null)
        if (dev !== null && !perDevice.has(dev)) perDevice.set(dev, dir)
      }
      try {
        helper ??= new SyncfsHelper()
        for (const dir of perDevice.values()) await helper.syncfs(dir)
        return
      } catch {
        syncfs = false // no coreutils `sync -f` here: fsync one by one from now on
        helper?.close()
        helper = null
      }
    }
    await eachLimited(files, PER_FILE_CONCURRENCY, fsyncPath)
    await eachLimited(dirs, PER_FILE_CONCURRENCY, fsyncPath)
  }
  return Object.assign(syncFiles, {
    warm: () => { if (syncfs) helper ??= new SyncfsHelper() },
    close: () => { helper?.close(); helper = null }
  })
}

/** One `sh` that runs `sync -f <path>` for each line it reads and answers `ok` or `fail`. */
class SyncfsHelper {
  readonly #child: ChildProcess
  readonly #waiting: Array<{ resolve: () => void; reject: (err: Error) => void }> = []
  #dead: Error | null = null

  constructor () {
    this.#child = spawn('sh', ['-c', 'while IFS= read -r p; do if sync -f "$p"; then echo ok; else echo fail; fi; done'], {
      stdio: ['pipe', 'pipe', 'ignore'], windowsHide: true
    })
    const fail = (err: Error): void => {
      this.#dead ??= err
      for (const w of this.#waiting.splice(0)) w.reject(err)
    }
    this.#child.on('error', fail)
    this.#child.on('exit', () => { fail(new Error('the sync helper exited')) })
    this.#child.stdin!.on('error', fail)
    createInterface({ input: this.#child.stdout! }).on('line', (line) => {
      const w = this.#waiting.shift()
      if (this.#waiting.length === 0) this.#hold(false)
      if (line === 'ok') w?.resolve()
      else w?.reject(new Error(`sync -f failed (${line})`))
    })
    this.#hold(false)
  }

  /** Keeps the process alive only while an answer is awaited: an idle helper never does. */
  #hold (busy: boolean): void {
    for (const h of [this.#child, this.#child.stdin, this.#child.stdout] as unknown as Array<{ ref?: () => void; unref?: () => void }>) {
      if (busy) h.ref?.(); else h.unref?.()
    }
  }

  async syncfs (path: string): Promise<void> {
    if (this.#dead !== null) throw this.#dead
    if (path.includes('\n')) throw new Error('a path with a newline cannot be handed to the sync helper')
    await new Promise<void>((resolve, reject) => {
      this.#waiting.push({ resolve, reject })
      this.#hold(true)
      this.#child.stdin!.write(`${path}\n`)
    })
  }

  close (): void {
    this.#child.stdin!.end()
  }
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
