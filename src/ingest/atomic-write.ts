// Data files are written whole or not at all, and durably: a temp file in the same folder (ignored
// by the watcher: dot-prefixed), fsynced, then link() to the final name and the folder fsynced
// (group-committed across concurrent writes). link() fails when the name exists, which is how two
// writes to one scope in the same millisecond both survive.
// A temp holds plaintext: it is removed whenever the write fails (ENOSPC included), and the ones a
// killed daemon left behind are removed at the next start (removeStaleTemps).
import { unlink, opendir } from 'node:fs/promises'
import { basename, dirname, join } from 'node:path'
import { createDirSync, tempName, writeFileDurably, type DurableWrite } from '../storage/durable-file.js'
import { createFileWriter, type FileWriter, type StagedFile } from '../storage/file-writer.js'
import { publish, stageNew } from '../storage/file-writer-ops.js'

// `.<final name>.<12 hex>.tmp` (durable-file.ts names them so): only these are removed as stale.
const TEMP_NAME = /^\..+\.[0-9a-f]{12}\.tmp$/

const syncDir = createDirSync()

/**
 * The data folder's hidden folder for the temps of unsynced writes (file-writer.ts): on the data
 * folder's filesystem (link needs that) but watched by nothing, so a write costs the watcher one
 * event, its name's. Its stale temps are removed at start like any other (removeStaleTemps).
 */
export function writingFolder (dataDir: string): string {
  return join(dataDir, '.writing')
}

/** Empty temps the file writer's thread keeps ready for data-file creates (file-writer-thread.ts). */
const SPARE_TEMPS = 8

/** The file writer for data files: temps in the writing folder, a few kept ready. */
export function createDataFileWriter (dataDir: string): FileWriter {
  return createFileWriter({ tempDir: writingFolder(dataDir), spares: SPARE_TEMPS })
}

/**
 * Writes `bytes` at `path` unless it exists (`written: false`, nothing written); creates the folder.
 * `synced: false` skips the file's and folder's fsyncs: for a write whose bytes the ingest journal
 * holds durably until it syncs the file in the background; such a write goes to `writer`'s thread
 * when one is given (the same temp, link and unlink, in one message), with `mtimeMs` as its mtime
 * when given (FileWriter.createNew).
 */
export async function writeNewFile (path: string, bytes: Uint8Array, opts: { synced?: boolean; writer?: FileWriter; mtimeMs?: number } = {}): Promise<DurableWrite> {
  if (opts.synced === false && opts.writer !== undefined) return await opts.writer.createNew(path, bytes, opts.mtimeMs !== undefined ? { mtimeMs: opts.mtimeMs } : {})
  return await writeFileDurably(path, bytes, { existing: 'keep', syncDir: opts.synced === false ? null : syncDir })
}

/** A create in two halves (FileWriter.stageNew, publish): the file writer's thread, or this one. */
export type FileStager = Pick<FileWriter, 'stageNew' | 'publish'>

/**
 * The two halves of a create on this thread, for a daemon part without the file writer (tests):
 * the writer thread's own operations (file-writer-ops.ts), as the main thread runs them while that
 * thread starts. Not synced.
 */
export const inThreadStager: FileStager = {
  async stageNew (path, bytes, { mode = 0o600, mtimeMs } = {}) {
    const staged = stageNew({ path, temp: join(dirname(path), tempName(basename(path))), bytes, mode, ...(mtimeMs !== undefined ? { mtimeMs } : {}) }, undefined, [])
    return 'exists' in staged ? null : staged
  },
  async publish (staged: StagedFile, path: string | null) {
    return publish(staged.temp, path)
  }
}

/**
 * Entries read per call by removeStaleTemps (node's default is 32): each call is a trip to libuv's
 * pool, and a start waits for this walk. 10,000 files, alone: 55 → 25 ms with 256, still streamed.
 */
const DIR_BUFFER = 256

/**
 * Removes the temps of writes that never finished (a SIGKILL or power loss between open and
 * unlink). Run at start while this daemon holds the home's lock and before anything writes, so
 * every such temp is stale. Returns how many were removed.
 */
export async function removeStaleTemps (dataDir: string): Promise<number> {
  let removed = 0
  let top
  try {
    top = await opendir(dataDir, { bufferSize: DIR_BUFFER })
  } catch (err) {
    if ((err as NodeJS.ErrnoException).code === 'ENOENT') return 0
    throw err
  }
  for await (const scopeEntry of top) {
    if (!scopeEntry.isDirectory()) continue
    const dir = await opendir(join(dataDir, scopeEntry.name), { bufferSize: DIR_BUFFER }).catch(() => null)
    if (dir === null) continue
    for await (const f of dir) {
      if (f.isFile() && TEMP_NAME.test(f.name)) {
        await unlink(join(dataDir, scopeEntry.name, f.name)).then(() => { removed++ }, () => {})
      }
    }
  }
  return removed
}
