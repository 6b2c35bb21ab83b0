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
import { closeSync, mkdirSync, openSync, unlinkSync } from 'node:fs'
import { join } from 'node:path'
import { getPriority, setPriority } from 'node:os'
import type { CreateFile, FileOutcome, WriterReply, WriterRequest, WriterSetup } from './file-writer.js'
import { createNew, errorOf, moveFiles, publish, removeFiles, replaceBlock, stageNew, writeBlock } from './file-writer-ops.js'

const setup = (workerData ?? {}) as WriterSetup
/** How much lower than the main thread this thread runs (niceness steps, on top of the process's own). */
const WRITER_NICENESS_STEP = 10
/** The lowest priority there is (setpriority's niceness runs -20 to 19). */
const LOWEST_NICENESS = 19
const spares: string[] = []
// `.spare.<12 hex>.tmp`: the temp names removeStaleTemps clears at the next start
const sparePrefix = randomBytes(3).toString('hex')
let spareCounter = 0
let ended = false // told to end: no more spares

/**
 * Makes one empty temp for a later create. The temp folder is made when missing, but not its
 * parent: a data folder removed meanwhile (or a test's home, cleaned up) is not made again for spares.
 */
function makeSpare (dir: string): void {
  spareCounter = (spareCounter + 1) % 0x1000000
  const path = join(dir, `.spare.${sparePrefix}${spareCounter.toString(16).padStart(6, '0')}.tmp`)
  let fd: number
  try {
    fd = openSync(path, 'wx', 0o600)
  } catch (err) {
    if ((err as NodeJS.ErrnoException).code !== 'ENOENT') throw err
    mkdirSync(dir)
    fd = openSync(path, 'wx', 0o600)
  }
  closeSync(fd)
  spares.push(path)
}

function run (op: 'create' | 'stage' | 'publish', f: CreateFile | { temp: string; path: string | null }): FileOutcome {
  if (op === 'publish') return publish(f.temp, f.path)
  return op === 'create' ? createNew(f as CreateFile, spares) : stageNew(f as CreateFile, setup.tempDir, spares)
}

// Below the main thread (on Linux a niceness is per thread): on two cores, the message that wakes
// this thread would otherwise often preempt the main thread, which then waits for the writer's
// file calls instead of handling requests (a 1 KB burst's profile had it in postMessage) though
// the creates need not come first: they overlap a synced batch that takes longer. Relative to the
// niceness this thread started with (the main thread's): a daemon run under `nice -n 15` or
// systemd's `Nice=` may only lower its priority further, so an absolute 10 would be refused (EPERM).
if (process.platform === 'linux') try { setPriority(Math.min(LOWEST_NICENESS, getPriority() + WRITER_NICENESS_STEP)) } catch {}

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
    } else if (req.op === 'move') {
      moveFiles(req.moves)
      reply = { id: req.id }
    } else if (req.op === 'remove') {
      removeFiles(req.paths)
      reply = { id: req.id }
    } else if (req.op === 'replace') {
      for (const b of req.blocks) replaceBlock(b.path, b.temp, b.bytes)
      reply = { id: req.id }
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

// the main thread sends creates here from now on (until then it ran them itself); spares now,
// before the first create comes
port.postMessage({ id: -1, ready: true } satisfies WriterReply)
refill()
