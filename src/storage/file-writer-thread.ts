// The file writer's thread (file-writer.ts): runs each request's file operations with synchronous
// calls, one after another. On a 2-core machine every asynchronous fs call of the main thread
// wakes a threadpool thread and the main thread is often preempted inside the call; here a whole
// request (a data file's create, or a batch of blocks) costs the main thread one message.
// With `spares` (workerData), the thread keeps that many empty temps in `tempDir`, made while it
// has nothing else to do: a create then opens one instead of allocating an inode, which on this
// kind of disk (ext4 in a VM) is most of a small file's create (~0.3-0.7 ms of it), off the path
// of a lone request.
import { parentPort, receiveMessageOnPort, workerData } from 'node:worker_threads'
import { randomBytes } from 'node:crypto'
import { closeSync, fstatSync, linkSync, lstatSync, mkdirSync, openSync, renameSync, statSync, unlinkSync, writeSync } from 'node:fs'
import { basename, dirname, join } from 'node:path'
import type { CreateFile, FileOutcome, StagedFile, WriterError, WriterReply, WriterRequest, WriterSetup } from './file-writer.js'

const setup = (workerData ?? {}) as WriterSetup
const spares: string[] = []
// `.spare.<12 hex>.tmp`: the temp names removeStaleTemps clears at the next start
const sparePrefix = randomBytes(3).toString('hex')
let spareCounter = 0
let ended = false // told to end: no more spares

/** Makes one empty temp for a later create. */
function makeSpare (dir: string): void {
  spareCounter = (spareCounter + 1) % 0x1000000
  const path = join(dir, `.spare.${sparePrefix}${spareCounter.toString(16).padStart(6, '0')}.tmp`)
  closeSync(openCreating(path, 'wx', 0o600))
  spares.push(path)
}

/** Writes all of `bytes` to an open descriptor (a regular file takes them in one call, nearly always). */
function writeAll (fd: number, bytes: Uint8Array): void {
  for (let off = 0; off < bytes.byteLength;) off += writeSync(fd, bytes, off, bytes.byteLength - off)
}

/** Opens `path` with `flags`, creating its folder when it is missing. */
function openCreating (path: string, flags: string, mode: number): number {
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
 */
function createNew ({ path, temp, bytes, mode }: CreateFile): { written: boolean; mtimeMs: number } {
  try {
    return createThrough(path, temp, bytes, mode)
  } catch (err) {
    if ((err as NodeJS.ErrnoException).code !== 'EXDEV') throw err
    return createThrough(path, join(dirname(path), basename(temp)), bytes, mode, false)
  }
}

function createThrough (path: string, given: string, bytes: Uint8Array, mode: number, spare = true): { written: boolean; mtimeMs: number } {
  const staged = stageThrough(given, bytes, mode, spare)
  return { ...publish(staged.temp, path), mtimeMs: staged.mtimeMs }
}

/** `bytes` in a temp: a spare (empty, 0600, in the temp folder) when there is one, else `given`. */
function stageThrough (given: string, bytes: Uint8Array, mode: number, spare = true): StagedFile {
  // a spare gone meanwhile is skipped
  let temp = given
  let fd: number | null = null
  while (fd === null && spare && mode === 0o600 && spares.length > 0) {
    const spare = spares.pop()!
    try { fd = openSync(spare, 'r+'); temp = spare } catch {}
  }
  fd ??= openCreating(temp, 'wx', mode)
  try {
    try {
      writeAll(fd, bytes)
      return { temp, mtimeMs: fstatSync(fd).mtimeMs }
    } finally {
      closeSync(fd)
    }
  } catch (err) {
    try { unlinkSync(temp) } catch {} // a temp may hold plaintext: never left behind
    throw err
  }
}

/** The temp linked to `path` unless the name exists (null: not linked), then removed, whatever failed. */
function publish (temp: string, path: string | null): { written: boolean } {
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
function stageNew ({ path, temp, bytes, mode }: CreateFile): StagedFile | { exists: true } {
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
    if (setup.tempDir !== undefined) mkdirSync(setup.tempDir, { recursive: true })
    same = setup.tempDir === undefined || dirname(temp) !== setup.tempDir || statSync(dir).dev === statSync(setup.tempDir).dev
    if (sameDevice.size > 10_000) sameDevice.clear()
    sameDevice.set(dir, same)
  }
  return same ? stageThrough(temp, bytes, mode) : stageThrough(join(dir, basename(temp)), bytes, mode, false)
}

/** link(), making the name's folder when it is missing (a new scope's first file). */
function linkOrMakeFolder (temp: string, path: string): void {
  try {
    linkSync(temp, path)
  } catch (err) {
    if ((err as NodeJS.ErrnoException).code !== 'ENOENT') throw err
    mkdirSync(dirname(path), { recursive: true })
    linkSync(temp, path)
  }
}

/**
 * Content-addressed blocks: created in place (a reader meanwhile is served from memory, and a
 * block torn by a crash is rewritten by the journal's replay); a file already there with the
 * block's size holds its bytes, one of another size is replaced through a temp and a rename.
 */
function writeBlock (path: string, temp: string, bytes: Uint8Array): void {
  let fd: number
  try {
    fd = openCreating(path, 'wx', 0o644)
  } catch (err) {
    if ((err as NodeJS.ErrnoException).code !== 'EEXIST') throw err
    if (statSync(path).size === bytes.byteLength) return
    fd = openSync(temp, 'wx', 0o644)
    try {
      try { writeAll(fd, bytes) } finally { closeSync(fd) }
      renameSync(temp, path)
    } catch (err) {
      try { unlinkSync(temp) } catch {}
      throw err
    }
    return
  }
  try {
    try { writeAll(fd, bytes) } finally { closeSync(fd) }
  } catch (err) {
    try { unlinkSync(path) } catch {} // a disk that filled up mid-block leaves no torn block
    throw err
  }
}

function run (op: 'create' | 'stage' | 'publish', f: CreateFile | { temp: string; path: string | null }): FileOutcome {
  if (op === 'publish') return publish(f.temp, f.path)
  return op === 'create' ? createNew(f as CreateFile) : stageNew(f as CreateFile)
}

function errorOf (err: unknown): WriterError {
  const e = err as NodeJS.ErrnoException
  return { message: e?.message ?? String(err), ...(typeof e?.code === 'string' ? { code: e.code } : {}), ...(typeof e?.syscall === 'string' ? { syscall: e.syscall } : {}) }
}

const port = parentPort
if (port === null) throw new Error('file-writer-thread runs inside a worker thread')

function handle (req: WriterRequest): void {
  let reply: WriterReply
  try {
    if (req.op === 'end') {
      ended = true
      for (const spare of spares.splice(0)) try { unlinkSync(spare) } catch {}
      reply = { id: req.id }
    } else if (req.op === 'create' || req.op === 'stage' || req.op === 'publish') {
      reply = { id: req.id, results: req.files.map((f): FileOutcome => { try { return run(req.op, f) } catch (err) { return { error: errorOf(err) } } }) }
    } else {
      for (const b of req.blocks) writeBlock(b.path, b.temp, b.bytes)
      reply = { id: req.id }
    }
  } catch (err) {
    reply = { id: req.id, error: errorOf(err) }
  }
  port!.postMessage(reply)
}

/** Spares made one at a time, and only while no request waits (each is taken as it comes). */
function refill (): void {
  const dir = setup.tempDir
  if (dir === undefined) return
  while (!ended && spares.length < (setup.spares ?? 0)) {
    const next = receiveMessageOnPort(port!)
    if (next !== undefined) { handle(next.message as WriterRequest); continue }
    try { makeSpare(dir) } catch { return } // a full disk: creates make their own temps
  }
}

port.on('message', (req: WriterRequest) => {
  handle(req)
  refill()
})
