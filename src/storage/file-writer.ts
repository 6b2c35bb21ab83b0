// Unsynced file writes on a thread of their own (file-writer-thread.ts): the data files' creates
// (temp, link, unlink) asked for in one turn of the event loop, or a batch of blocks, cost the
// main thread one message instead of four to six threadpool round trips each, every one of which
// wakes a thread and, on a 2-core machine, often preempts the main thread. Nothing here syncs: the
// callers' bytes are in the ingest journal until its checkpoint syncs the files (deferred-sync.ts).
// With `tempDir` (a hidden folder of the data folder), a create's temp is written there, where no
// watch sees it: the data folder's watcher gets one event (the name linked), not four.
// The thread starts on first use and ends after `idleMs` without a request, so an idle daemon
// holds none (it is an isolate of several MB); a thread that dies fails the requests in flight and
// is replaced by the next one. Starting one takes tens of milliseconds: creates asked for until it
// says it is ready run on the main thread with the same calls (file-writer-ops.ts, well under a
// millisecond each), so the first POST after a start or an idle spell does not wait for it.
import { Worker } from 'node:worker_threads'
import { basename, dirname, join } from 'node:path'
import { tempName } from './durable-file.js'
import { createNew as createNowHere } from './file-writer-ops.js'
import type { FileSyncer } from './deferred-sync.js'

export interface WriterError { message: string; code?: string; syscall?: string }
export interface CreateFile { path: string; temp: string; bytes: Uint8Array; mode: number; mtimeMs?: number }
/**
 * `mode`: the file's (default 0600); `mtimeMs`: the file's mtime, whole microseconds (file-times.ts), set before
 * its name appears (stat gives it back exactly), so a caller can record it before the file exists.
 */
export interface CreateOptions { mode?: number; mtimeMs?: number }
/**
 * A file's bytes in a temp, waiting to be linked to its name (FileWriter.stageNew); `ino` is the
 * inode the name will have once linked (a crash's replay tells that file from another one by it).
 */
export interface StagedFile { temp: string; mtimeMs: number; ino: number }
type Publish = { temp: string; path: string | null }
type WriterOp =
  | { op: 'end' }
  | { op: 'create'; files: CreateFile[] }
  | { op: 'stage'; files: CreateFile[] }
  | { op: 'publish'; files: Publish[] }
  | { op: 'blocks' | 'replace'; blocks: Array<{ path: string; temp: string; bytes: Uint8Array }> }
  | { op: 'move'; moves: Array<{ from: string; to: string }> }
  | { op: 'remove'; paths: string[] }
export type WriterRequest = WriterOp & { id: number }
/** The thread's settings: the temp folder and how many empty temps to keep there (file-writer-thread.ts). */
export interface WriterSetup { tempDir?: string; spares?: number }

/** Per file of a create, stage or publish: its outcome, or its own error. */
export type FileOutcome = { written: boolean; mtimeMs: number } | StagedFile | { exists: true } | { written: boolean } | { error: WriterError }

export interface WriterReply {
  /** -1 for the thread's `ready`, sent once it listens. */
  id: number
  ready?: true
  results?: FileOutcome[]
  error?: WriterError
}

export interface FileWriter {
  /**
   * A new file at `path` unless the name exists (`written: false`, nothing written), whole or not
   * at all (a temp in the same folder, linked to the name); creates the folder. Not synced. Its
   * mtime is `opts.mtimeMs` when given.
   */
  createNew (path: string, bytes: Uint8Array, opts?: CreateOptions): Promise<{ written: boolean; mtimeMs: number }>
  /**
   * The first half of a create whose name must not appear before the caller has committed
   * something (a received file's index record): the bytes in a temp, with its mtime (the name's
   * once linked); null when the name exists already (nothing written). Not synced.
   */
  stageNew (path: string, bytes: Uint8Array, opts?: CreateOptions): Promise<StagedFile | null>
  /**
   * The second half: the staged temp linked to `path` (`written: false` when the name exists by
   * now) and removed; with `path` null only removed.
   */
  publish (staged: StagedFile, path: string | null): Promise<{ written: boolean }>
  /**
   * Content-addressed files, each written unless a file of its size is there. Not synced.
   * `move`: the caller gives the bytes up; a block that is its buffer's whole view is moved to the
   * thread, not copied (its buffer is detached here).
   */
  writeBlocks (blocks: ReadonlyArray<{ path: string; bytes: Uint8Array }>, opts?: { move?: boolean }): Promise<void>
  /** Content-addressed files, each written whole (a temp renamed over the name) whatever is there. Not synced. `move`: as writeBlocks. */
  replaceBlocks (blocks: ReadonlyArray<{ path: string; bytes: Uint8Array }>, opts?: { move?: boolean }): Promise<void>
  /** Files renamed over their new names (folders made when missing), in one request. Not synced. */
  moveFiles (moves: ReadonlyArray<{ from: string; to: string }>): Promise<void>
  /** Files removed (one already gone is no error), in one request. */
  removeFiles (paths: readonly string[]): Promise<void>
  /** Ends the thread (a later request starts a new one). */
  close (): Promise<void>
}

/**
 * The daemon's one writer thread and one `syncfs` helper, built by the composition root and given
 * to every part that writes unsynced files (storage, ingest, sync), which then neither ends nor
 * closes them: one isolate instead of one per part (src/daemon/foundation.ts).
 */
export interface SharedFileWriting { writer: FileWriter; syncFiles: FileSyncer }

/** Blocks per message: a checkpoint's batch is split so data-file creates are not queued behind all of it. */
const BLOCKS_PER_MESSAGE = 64

/** One thread and the requests it has not answered yet (a thread that ends fails only its own). */
interface Thread { worker: Worker; ready: boolean; waiting: Map<number, { resolve: (r: WriterReply) => void; reject: (err: Error) => void }> }

export function createFileWriter (opts: { idleMs?: number; tempDir?: string; spares?: number } = {}): FileWriter {
  const idleMs = opts.idleMs ?? 30_000
  const setup: WriterSetup = { ...(opts.tempDir !== undefined ? { tempDir: opts.tempDir } : {}), ...(opts.spares !== undefined ? { spares: opts.spares } : {}) }
  // the creates (stages, publishes) asked for in this turn of the event loop, sent together
  const turns = { create: perTurn<CreateFile>('create'), stage: perTurn<CreateFile>('stage'), publish: perTurn<Publish>('publish') }
  let current: Thread | null = null
  let nextId = 0
  let idleTimer: NodeJS.Timeout | null = null

  function start (): Thread {
    const t: Thread = { worker: startWriterThread(setup), ready: false, waiting: new Map() }
    const fail = (err: Error): void => {
      if (current === t) current = null
      for (const p of t.waiting.values()) p.reject(err)
      t.waiting.clear()
    }
    t.worker.on('message', (reply: WriterReply) => {
      if (reply.ready === true) {
        t.ready = true
        if (t.waiting.size === 0 && current === t) idle()
        return
      }
      const p = t.waiting.get(reply.id)
      if (p === undefined) return
      t.waiting.delete(reply.id)
      p.resolve(reply)
      if (t.waiting.size === 0 && current === t) idle()
    })
    t.worker.on('error', fail)
    t.worker.on('exit', (code) => { fail(new Error(`the file writer thread exited (${code})`)) })
    return t
  }

  /** No request in flight: the thread no longer keeps the process alive, and ends after idleMs. */
  function idle (): void {
    current?.worker.unref()
    idleTimer ??= setTimeout(() => {
      idleTimer = null
      if (current !== null && current.waiting.size === 0) void retire()
    }, idleMs)
    idleTimer.unref()
  }

  async function post (t: Thread, req: WriterOp, transfer: ArrayBuffer[] = []): Promise<WriterReply> {
    t.worker.ref()
    const id = nextId++
    return await new Promise<WriterReply>((resolve, reject) => {
      t.waiting.set(id, { resolve, reject })
      t.worker.postMessage({ ...req, id }, transfer)
    })
  }

  /** Ends the thread once it has removed its spare temps; a request meanwhile starts a new one. */
  async function retire (): Promise<void> {
    const t = current
    if (t === null) return
    current = null
    await post(t, { op: 'end' }).catch(() => {})
    await t.worker.terminate()
  }

  async function send (req: WriterOp, transfer?: ArrayBuffer[]): Promise<WriterReply> {
    if (idleTimer !== null) { clearTimeout(idleTimer); idleTimer = null }
    current ??= start()
    const reply = await post(current, req, transfer)
    if (reply.error !== undefined) throw errnoError(reply.error)
    return reply
  }

  /** Requests of one kind made in one turn of the event loop go to the thread in one message. */
  function perTurn<T extends CreateFile | Publish> (op: 'create' | 'stage' | 'publish'): (file: T) => Promise<FileOutcome> {
    let queued: Array<{ file: T; resolve: (r: FileOutcome) => void; reject: (err: unknown) => void }> = []
    const flush = (): void => {
      const batch = queued
      queued = []
      send({ op, files: batch.map((c) => c.file) } as WriterOp).then((reply) => {
        batch.forEach((c, i) => {
          const outcome = reply.results![i]!
          if ('error' in outcome) c.reject(errnoError(outcome.error))
          else c.resolve(outcome)
        })
      }, (err: unknown) => { for (const c of batch) c.reject(err) })
    }
    return async (file) => await new Promise((resolve, reject) => {
      if (queued.length === 0) setImmediate(flush)
      queued.push({ file, resolve, reject })
    })
  }

  async function sendBlocks (op: 'blocks' | 'replace', blocks: ReadonlyArray<{ path: string; bytes: Uint8Array }>, moved: boolean): Promise<void> {
    for (let i = 0; i < blocks.length; i += BLOCKS_PER_MESSAGE) {
      const part = blocks.slice(i, i + BLOCKS_PER_MESSAGE).map((b) => ({ path: b.path, temp: join(dirname(b.path), tempName(basename(b.path))), bytes: exactBytes(b.bytes) }))
      // a whole buffer of its own is moved (no copy on either side), when the caller gives it up
      const transfer = moved ? part.flatMap(({ bytes }) => bytes.buffer instanceof ArrayBuffer && bytes.byteLength > 0 && bytes.byteLength === bytes.buffer.byteLength ? [bytes.buffer] : []) : []
      await send({ op, blocks: part }, [...new Set(transfer)])
    }
  }

  const tempFor = (path: string): string => join(opts.tempDir ?? dirname(path), tempName(basename(path)))
  const fileOf = (path: string, bytes: Uint8Array, { mode = 0o600, mtimeMs }: CreateOptions): CreateFile =>
    ({ path, temp: tempFor(path), bytes: exactBytes(bytes), mode, ...(mtimeMs !== undefined ? { mtimeMs } : {}) })

  return {
    async createNew (path, bytes, opts = {}) {
      if (current?.ready !== true) {
        if (idleTimer !== null) { clearTimeout(idleTimer); idleTimer = null }
        // started for later requests: it keeps nothing alive, and its idle time counts from its `ready`
        if (current === null) { current = start(); current.worker.unref() }
        return createNowHere({ ...fileOf(path, bytes, opts), bytes })
      }
      return await turns.create(fileOf(path, bytes, opts)) as { written: boolean; mtimeMs: number }
    },
    async stageNew (path, bytes, opts = {}) {
      const outcome = await turns.stage(fileOf(path, bytes, opts))
      return 'exists' in outcome ? null : outcome as StagedFile
    },
    async publish (staged, path) {
      return await turns.publish({ temp: staged.temp, path }) as { written: boolean }
    },
    async writeBlocks (blocks, opts = {}) { await sendBlocks('blocks', blocks, opts.move === true) },
    async replaceBlocks (blocks, opts = {}) { await sendBlocks('replace', blocks, opts.move === true) },
    async moveFiles (moves) { if (moves.length > 0) await send({ op: 'move', moves: [...moves] }) },
    async removeFiles (paths) { if (paths.length > 0) await send({ op: 'remove', paths: [...paths] }) },
    async close () {
      if (idleTimer !== null) { clearTimeout(idleTimer); idleTimer = null }
      await retire()
    }
  }
}

/**
 * A message copies a view's whole ArrayBuffer (a pooled Buffer's is 8 KiB, a request's may be
 * larger): a view on part of one is copied out first. Shared memory is shared, not copied.
 */
function exactBytes (bytes: Uint8Array): Uint8Array {
  if (bytes.buffer instanceof SharedArrayBuffer || (bytes.byteOffset === 0 && bytes.byteLength === bytes.buffer.byteLength)) return bytes
  // a copy of its own (a Buffer's `slice` is a view on the same memory, whose whole buffer a message would copy)
  return new Uint8Array(bytes)
}

/** The thread's error as the main thread's own fs calls give it (`code` kept: ENOSPC is STORAGE_FULL). */
function errnoError (e: WriterError): Error {
  return Object.assign(new Error(e.message), e.code !== undefined ? { code: e.code } : {}, e.syscall !== undefined ? { syscall: e.syscall } : {})
}

/** A .ts thread (tests, benches under tsx) loads tsx's hooks first: a worker does not inherit them. */
function startWriterThread (setup: WriterSetup): Worker {
  const script = new URL(import.meta.url.endsWith('.ts') ? './file-writer-thread.ts' : './file-writer-thread.js', import.meta.url)
  if (!script.pathname.endsWith('.ts')) return new Worker(script, { workerData: setup })
  const boot = `import(${JSON.stringify(import.meta.resolve('tsx/esm/api'))}).then((m) => { m.register() }).then(() => import(${JSON.stringify(script.href)}))`
  return new Worker(boot, { eval: true, workerData: setup })
}
