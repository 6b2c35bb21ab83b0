// Whole-file writes that survive power loss, not only a killed process: the bytes go to a temp file
// in the same folder (dot-prefixed, `.tmp`: ignored by the watcher), which is fsynced and then
// linked or renamed to its name; the folder itself is fsynced so the new name is durable too.
// Folder fsyncs are group-committed: every write that asks while one is in flight shares the next
// one, so N concurrent writes into one folder cost N file fsyncs plus about two folder fsyncs.
import { open, link, rename, unlink, mkdir } from 'node:fs/promises'
import { dirname, join, basename } from 'node:path'
import { randomBytes } from 'node:crypto'
import { futimesSeconds, mtimeMsOf } from './file-times.js'

export type DirSync = (dir: string) => Promise<void>

// Temp names: a random per-process prefix and a counter (12 hex digits, the form
// removeStaleTemps recognises); random bytes per write cost more than the rest of the name.
const TEMP_PREFIX = randomBytes(3).toString('hex')
let tempCounter = 0
function tempSuffix (): string {
  tempCounter = (tempCounter + 1) % 0x1000000
  return TEMP_PREFIX + tempCounter.toString(16).padStart(6, '0')
}

/** The temp name of a write of `name` in the same folder: `.<name>.<12 hex>.tmp` (ignored by the watcher). */
export function tempName (name: string): string {
  return `.${name}.${tempSuffix()}.tmp`
}

async function fsyncDir (dir: string): Promise<void> {
  const fh = await open(dir, 'r')
  try { await fh.sync() } finally { await fh.close() }
}

/** A folder-fsync function that coalesces concurrent requests per folder (one entry per busy folder). */
export function createDirSync (): DirSync {
  const folders = new Map<string, { pending: Promise<void> | null; inFlight: Promise<void> | null }>()
  return async function syncDir (dir: string): Promise<void> {
    let s = folders.get(dir)
    if (s === undefined) { s = { pending: null, inFlight: null }; folders.set(dir, s) }
    if (s.pending !== null) return await s.pending
    const state = s
    const previous = state.inFlight ?? Promise.resolve()
    // A request made while an fsync runs may follow a rename that fsync missed: it waits for the
    // next one, which it shares with everyone else who asks meanwhile.
    const round: Promise<void> = previous.catch(() => {}).then(async () => {
      state.pending = null
      state.inFlight = round
      try {
        await fsyncDir(dir)
      } finally {
        if (state.inFlight === round) state.inFlight = null
        if (state.pending === null && state.inFlight === null && folders.get(dir) === state) folders.delete(dir)
      }
    })
    state.pending = round
    return await round
  }
}

export interface DurableWriteOptions {
  /** 'keep': never replace an existing file (link; false when the name exists). 'replace': rename over it. */
  existing: 'keep' | 'replace'
  /**
   * How the folder is fsynced; null: neither the file nor its folder is synced here, so the write
   * survives a killed process but not a power cut until the caller syncs it (its durable copy
   * meanwhile is the ingest journal's).
   */
  syncDir: DirSync | null
  /** With `syncDir` null: the file is synced all the same before its name points at it (its folder by the caller). */
  syncFile?: boolean
  /** The file's mtime (whole microseconds: file-times.ts), set before its name points at it. */
  mtimeMs?: number
  mode?: number
  /** Read the written file's mtime (default true); without it `mtimeMs` is 0. */
  mtime?: boolean
}

/** The result of a durable write: whether the name was written, and its mtime when it was. */
export interface DurableWrite { written: boolean; mtimeMs: number }

/** Writes `bytes` at `path` whole (and durably unless `syncDir` is null); creates the folder when missing. */
export async function writeFileDurably (path: string, bytes: Uint8Array, opts: DurableWriteOptions): Promise<DurableWrite> {
  const dir = dirname(path)
  const temp = join(dir, tempName(basename(path)))
  let fh
  try {
    fh = await open(temp, 'wx', opts.mode ?? 0o600)
  } catch (err) {
    if ((err as NodeJS.ErrnoException).code !== 'ENOENT') throw err
    await mkdir(dir, { recursive: true })
    fh = await open(temp, 'wx', opts.mode ?? 0o600)
  }
  let mtimeMs: number
  let written = true
  try {
    try {
      await fh.writeFile(bytes)
      if (opts.mtimeMs !== undefined) await fh.utimes(futimesSeconds(opts.mtimeMs), futimesSeconds(opts.mtimeMs))
      // the set mtime is metadata fdatasync may leave behind
      if (opts.syncDir !== null || opts.syncFile === true) await (opts.mtimeMs !== undefined ? fh.sync() : fh.datasync())
      mtimeMs = opts.mtime === false ? 0 : mtimeMsOf(await fh.stat({ bigint: true }))
    } finally {
      await fh.close()
    }
    if (opts.existing === 'replace') await rename(temp, path)
    else {
      // link() fails when the name exists: the arbiter between two writers of one name
      await link(temp, path).catch((err: NodeJS.ErrnoException) => {
        if (err.code !== 'EEXIST') throw err
        written = false
      })
      await unlink(temp)
    }
  } catch (err) {
    // a temp may hold plaintext: never left behind by a failed write (ENOSPC included)
    await unlink(temp).catch(() => {})
    throw err
  }
  if (written && opts.syncDir !== null) await opts.syncDir(dir)
  return { written, mtimeMs }
}
