// The file writer's operations (file-writer.ts), in synchronous calls: run on its thread
// (file-writer-thread.ts), and on the main thread for the creates asked for while that thread is
// still starting.
import { closeSync, fstatSync, futimesSync, linkSync, lstatSync, mkdirSync, openSync, renameSync, statSync, unlinkSync, writeSync } from 'node:fs'
import { basename, dirname, join } from 'node:path'
import type { CreateFile, StagedFile, WriterError } from './file-writer.js'
import { futimesSeconds, mtimeMsOf } from './file-times.js'

/** Writes all of `bytes` to an open descriptor (a regular file takes them in one call, nearly always). */
function writeAll (fd: number, bytes: Uint8Array): void {
  for (let off = 0; off < bytes.byteLength;) off += writeSync(fd, bytes, off, bytes.byteLength - off)
}

/** Opens `path` with `flags`, creating its folder when it is missing. */
export function openCreating (path: string, flags: string, mode: number): number {
  try {
    return openSync(path, flags, mode)
  } catch (err) {
    if ((err as NodeJS.ErrnoException).code !== 'ENOENT') throw err
    mkdirSync(dirname(path), { recursive: true })
    return openSync(path, flags, mode)
  }
}

/**
 * A new file at `path`, whole or not at all: the bytes go to `temp` (same filesystem), which is
 * then linked to the name (link never replaces: false when the name exists) and removed. Not
 * synced. A temp folder on another filesystem (EXDEV) falls back to a temp beside the name.
 * `spares`: empty temps (0600, in the temp folder) to take one from instead of creating `temp`.
 */
export function createNew (file: CreateFile, spares: string[] = []): { written: boolean; mtimeMs: number } {
  try {
    return createThrough(file, file.temp, spares)
  } catch (err) {
    if ((err as NodeJS.ErrnoException).code !== 'EXDEV') throw err
    return createThrough(file, join(dirname(file.path), basename(file.temp)), [])
  }
}

function createThrough (file: CreateFile, temp: string, spares: string[]): { written: boolean; mtimeMs: number } {
  const staged = stageThrough(temp, file, spares)
  return { ...publish(staged.temp, file.path), mtimeMs: staged.mtimeMs }
}

/**
 * `bytes` in a temp: one of `spares` (empty, 0600, in the temp folder) when there is one, else
 * `given`; with the file's `mtimeMs` when one is asked for.
 */
function stageThrough (given: string, { bytes, mode, mtimeMs }: CreateFile, spares: string[]): StagedFile {
  // a spare gone meanwhile is skipped
  let temp = given
  let fd: number | null = null
  while (fd === null && mode === 0o600 && spares.length > 0) {
    const spare = spares.pop()!
    try { fd = openSync(spare, 'r+'); temp = spare } catch {}
  }
  fd ??= openCreating(temp, 'wx', mode)
  try {
    try {
      writeAll(fd, bytes)
      if (mtimeMs !== undefined) futimesSync(fd, futimesSeconds(mtimeMs), futimesSeconds(mtimeMs))
      const st = fstatSync(fd, { bigint: true })
      return { temp, mtimeMs: mtimeMsOf(st), ino: Number(st.ino) }
    } finally {
      closeSync(fd)
    }
  } catch (err) {
    try { unlinkSync(temp) } catch {} // a temp may hold plaintext: never left behind
    throw err
  }
}

/** The temp linked to `path` unless the name exists (null: not linked), then removed, whatever failed. */
export function publish (temp: string, path: string | null): { written: boolean } {
  let written = path !== null
  try {
    if (path !== null) {
      try {
        linkOrMakeFolder(temp, path)
      } catch (err) {
        if ((err as NodeJS.ErrnoException).code !== 'EEXIST') throw err
        written = false
      }
    }
  } finally {
    try { unlinkSync(temp) } catch {}
  }
  return { written }
}

// Whether a folder is on the temp folder's filesystem (link() needs that), by folder.
const sameDevice = new Map<string, boolean>()

/**
 * The first half of a create (FileWriter.stageNew): nothing when the name exists, else the bytes
 * in a temp on the name's filesystem (the temp folder's, else beside the name), its folder made.
 */
export function stageNew (file: CreateFile, tempDir: string | undefined, spares: string[]): StagedFile | { exists: true } {
  const { path, temp } = file
  try {
    lstatSync(path)
    return { exists: true }
  } catch (err) {
    if ((err as NodeJS.ErrnoException).code !== 'ENOENT') throw err
  }
  const dir = dirname(path)
  let same = sameDevice.get(dir)
  if (same === undefined) {
    mkdirSync(dir, { recursive: true })
    if (tempDir !== undefined) mkdirSync(tempDir, { recursive: true })
    same = tempDir === undefined || dirname(temp) !== tempDir || statSync(dir).dev === statSync(tempDir).dev
    if (sameDevice.size > 10_000) sameDevice.clear()
    sameDevice.set(dir, same)
  }
  return same ? stageThrough(temp, file, spares) : stageThrough(join(dir, basename(temp)), file, [])
}

/** `put` (a link or rename to `path`) again after making the name's folder, when that was missing. */
function makingFolder (path: string, put: () => void): void {
  try {
    put()
  } catch (err) {
    if ((err as NodeJS.ErrnoException).code !== 'ENOENT') throw err
    mkdirSync(dirname(path), { recursive: true })
    put()
  }
}

/** link(), making the name's folder when it is missing (a new scope's first file). */
function linkOrMakeFolder (temp: string, path: string): void {
  makingFolder(path, () => { linkSync(temp, path) })
}

/**
 * Content-addressed blocks: created in place (a reader meanwhile is served from memory, and a
 * block torn by a crash is rewritten by the journal's replay); a file already there with the
 * block's size holds its bytes, one of another size is replaced through a temp and a rename.
 */
export function writeBlock (path: string, temp: string, bytes: Uint8Array): void {
  let fd: number
  try {
    fd = openCreating(path, 'wx', 0o644)
  } catch (err) {
    if ((err as NodeJS.ErrnoException).code !== 'EEXIST') throw err
    if (statSync(path).size !== bytes.byteLength) replaceBlock(path, temp, bytes)
    return
  }
  try {
    try { writeAll(fd, bytes) } finally { closeSync(fd) }
  } catch (err) {
    try { unlinkSync(path) } catch {} // a disk that filled up mid-block leaves no torn block
    throw err
  }
}

/**
 * A block written whole over whatever the name holds (a torn block of an earlier crash, or the same
 * bytes): a temp beside it, renamed over the name, so a reader of the name meanwhile sees the old
 * file or the new one. Not synced.
 */
export function replaceBlock (path: string, temp: string, bytes: Uint8Array): void {
  const fd = openCreating(temp, 'wx', 0o644)
  try {
    try { writeAll(fd, bytes) } finally { closeSync(fd) }
    renameSync(temp, path)
  } catch (err) {
    try { unlinkSync(temp) } catch {}
    throw err
  }
}

/**
 * Files renamed to their new names (replacing what is there), the new folder made when missing:
 * staged blocks moved into the blockstore (storage/staged-import.ts). Not synced.
 */
export function moveFiles (moves: ReadonlyArray<{ from: string; to: string }>): void {
  for (const { from, to } of moves) makingFolder(to, () => { renameSync(from, to) })
}

/** Files removed; one already gone is no error. */
export function removeFiles (paths: readonly string[]): void {
  for (const path of paths) {
    try { unlinkSync(path) } catch (err) { if ((err as NodeJS.ErrnoException).code !== 'ENOENT') throw err }
  }
}

export function errorOf (err: unknown): WriterError {
  const e = err as NodeJS.ErrnoException
  return { message: e?.message ?? String(err), ...(typeof e?.code === 'string' ? { code: e.code } : {}), ...(typeof e?.syscall === 'string' ? { syscall: e.syscall } : {}) }
}
