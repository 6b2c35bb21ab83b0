// Imports started from the dashboard: the archive is uploaded into `<home>/imports/<job>/`, a
// child process (import-worker.ts) suggests the connectors that fit it, and on request runs one
// over it, submitting items over the owner socket exactly like `hearth import`. Jobs live in
// memory (the last few are kept for their result tables); an upload is deleted once its import
// has finished, and leftovers of a crash are removed at start. An import `hearth import` ran (it
// reads the export where it is) is recorded here when it ends, so every import is listed.
import { fork, type ChildProcess } from 'node:child_process'
import { randomBytes } from 'node:crypto'
import { createWriteStream } from 'node:fs'
import { mkdir, rm, utimes } from 'node:fs/promises'
import { join } from 'node:path'
import { pipeline } from 'node:stream/promises'
import { Transform, type Readable } from 'node:stream'
import { fileURLToPath } from 'node:url'
import { HearthError } from '../errors.js'
import type { Logger } from '../log.js'
import type { ImportProgress, ImportSummary } from './import.js'
import type { Suggestion, WorkerMessage, WorkerRequest } from './import-worker.js'

export type ImportJobState = 'probing' | 'ready' | 'running' | 'done' | 'failed'

export interface ImportJob {
  id: string
  /** The archive's name as uploaded (sanitised). */
  name: string
  /** Every archive of the export, the first one included: platforms send large exports in parts (POST /v1/imports/:id/parts). */
  parts: string[]
  /** Bytes of all parts. */
  size: number
  createdAt: string
  state: ImportJobState
  /** Files in the export (after probing). */
  entries: number | null
  /** Every installed connector, and whether reading this export with it yields anything. */
  suggestions: Suggestion[]
  connectorId: string | null
  progress: { done: number; stored: number; duplicate: number; rejected: number; waiting: number; notes: string[] }
  summary: ImportSummary | null
  error: { code: string; message: string } | null
  /** Who ran it: an upload to the dashboard, or `hearth import` (recorded when it ended, without a summary). */
  origin: 'dashboard' | 'cli'
}

/** What `hearth import` reports of an import it ran, when it ends. */
export interface FinishedImport {
  /** The export's file or folder name (its path stays on the user's side). */
  name: string
  connectorId: string
  startedAt: string
  total: { items: number; stored: number; duplicate: number; rejected: number; waiting: number }
  failure?: { code: string; message: string }
}

export interface ImportJobsDeps {
  /** Where uploads are kept while their job runs (`<home>/imports`). */
  dir: string
  connectorDirs: readonly string[]
  socketPath: string
  logger: Logger
  /** Largest archive accepted. */
  maxBytes: number
}

export interface ImportJobs {
  start (): Promise<void>
  /** Stores the uploaded archive and starts probing it; `modifiedAt` (ms) keeps a lone file's export time. */
  upload (body: Readable, meta: { name: string; declaredBytes: number | null; modifiedAt: number | null }): Promise<ImportJob>
  /** Adds another archive of the same export to a job that has not run yet, and looks at them all again. */
  addPart (id: string, body: Readable, meta: { name: string; declaredBytes: number | null; modifiedAt: number | null }): Promise<ImportJob>
  /** `include`: optional scopes of the connector to import too (`hearth import --with`). */
  run (id: string, connectorId: string, include?: readonly string[]): ImportJob
  /** Lists an import another process ran (`hearth import`) beside the dashboard's. */
  recordFinished (finished: FinishedImport): ImportJob
  get (id: string): ImportJob | null
  list (): ImportJob[]
  stop (): Promise<void>
  status (): { jobs: number; running: number }
}

const KEEP_JOBS = 20
/** How long an uploaded archive waits to be started (README, "The dashboard"), and how many may wait at once. */
const UNSTARTED_MS = 60 * 60_000
const UNSTARTED_MAX = 3
const NAME_OK = /[^A-Za-z0-9._-]+/g

/** The worker's file next to this one: `.ts` under tsx (tests), `.js` when compiled. */
function workerPath (): string {
  const self = fileURLToPath(import.meta.url)
  return join(self, '..', `import-worker${self.endsWith('.ts') ? '.ts' : '.js'}`)
}

export function safeArchiveName (name: string): string {
  const cleaned = name.replace(NAME_OK, '_').replace(/^[._]+/, '').slice(-100)
  return cleaned === '' ? 'export.zip' : cleaned
}

export function createImportJobs (deps: ImportJobsDeps): ImportJobs {
  const jobs = new Map<string, ImportJob>()
  const children = new Map<string, ChildProcess>()
  const folder = (id: string): string => join(deps.dir, id)
  let stopped = false

  function archivePath (job: ImportJob, name = job.name): string { return join(folder(job.id), name) }
  /** What the worker opens: the one archive, or every part (read as one tree). */
  function sourceOf (job: ImportJob): string | string[] { return job.parts.length === 1 ? archivePath(job) : job.parts.map((p) => archivePath(job, p)) }

  async function discard (job: ImportJob): Promise<void> {
    await rm(folder(job.id), { recursive: true, force: true }).catch((err) => deps.logger.warn({ err, job: job.id }, 'could not remove an uploaded export'))
  }

  // An upload nobody starts holds up to maxBytes of disk: it is dropped after UNSTARTED_MS, and
  // beyond UNSTARTED_MAX such uploads the oldest goes first.
  const expiry = new Map<string, NodeJS.Timeout>()
  /** The job fails at once (nobody can start it any more); its archive is gone when the promise resolves. */
  async function expire (job: ImportJob, why: string): Promise<void> {
    clearTimeout(expiry.get(job.id))
    expiry.delete(job.id)
    if (job.state !== 'ready') return
    job.state = 'failed'
    job.error = { code: 'CONFLICT', message: `the uploaded archive was removed unstarted: ${why}; upload it again to import it` }
    await discard(job)
  }
  /**
   * A probed upload waits to be started: the oldest waiting ones beyond UNSTARTED_MAX are removed
   * first (their archives gone from disk before this one is said to be ready), and it is dropped
   * itself after UNSTARTED_MS.
   */
  async function waitForStart (job: ImportJob): Promise<void> {
    const waiting = [...jobs.values()].filter((j) => j.state === 'ready' && j !== job)
    await Promise.all(waiting.slice(0, Math.max(0, waiting.length + 1 - UNSTARTED_MAX)).map(async (old) => await expire(old, `${UNSTARTED_MAX} newer uploads wait to be started`)))
    if (stopped || job.state !== 'probing') return
    job.state = 'ready'
    clearTimeout(expiry.get(job.id))
    const timer = setTimeout(() => { void expire(job, `not started within ${UNSTARTED_MS / 60_000} minutes`) }, UNSTARTED_MS)
    timer.unref()
    expiry.set(job.id, timer)
  }

  function trim (): void {
    const finished = [...jobs.values()].filter((j) => j.state === 'done' || j.state === 'failed' || j.state === 'ready')
    while (jobs.size > KEEP_JOBS && finished.length > 0) {
      const oldest = finished.shift()!
      jobs.delete(oldest.id)
      void discard(oldest)
    }
  }

  function spawnWorker (job: ImportJob, req: WorkerRequest, onMessage: (m: WorkerMessage) => void, onEnd: () => void): void {
    const child = fork(workerPath(), [JSON.stringify(req)], { stdio: ['ignore', 'ignore', 'pipe', 'ipc'], serialization: 'json' })
    children.set(job.id, child)
    let stderr = ''
    child.stderr?.on('data', (c: Buffer) => { if (stderr.length < 4000) stderr += c.toString() })
    let answered = false
    child.on('message', (m) => {
      if ((m as WorkerMessage).type !== 'progress') answered = true
      onMessage(m as WorkerMessage)
    })
    // A worker fails its job only by ending without an answer, judged once the process has ended
    // and its IPC channel is closed ('exit' can come before the last messages are delivered). A
    // probe that answered and exits late must not fail the next step of the job.
    const phase: ImportJobState = req.mode === 'probe' ? 'probing' : 'running'
    let ended: { code: number | null; signal: NodeJS.Signals | null } | null = null
    let disconnected = false
    let settled = false
    const settle = (): void => {
      if (settled || ended === null || !disconnected) return
      settled = true
      const current = children.get(job.id) === child
      if (current) children.delete(job.id)
      if (!answered && current && job.state === phase && job.error === null) {
        job.error = { code: 'INTERNAL', message: `the import process ended unexpectedly (${ended.signal ?? `exit ${String(ended.code)}`})${stderr !== '' ? `: ${stderr.trim().slice(-500)}` : ''}` }
        job.state = 'failed'
      }
      onEnd()
    }
    child.once('disconnect', () => { disconnected = true; settle() })
    child.once('close', (code, signal) => { ended = { code, signal }; if (!child.connected) disconnected = true; settle() })
  }

  function applyProgress (job: ImportJob, events: ImportProgress[]): void {
    for (const e of events) {
      if (e.type === 'note') job.progress.notes.push(e.message)
      else if (e.type === 'opened') job.entries = e.entries
      else if (e.type === 'item') {
        job.progress.done = e.done
        if (e.status === 'waiting-schema') job.progress.waiting++
        else job.progress[e.status]++
      }
    }
  }

  /** Writes one uploaded archive into the job's folder; the limit covers all of a job's parts. */
  async function store (job: ImportJob, name: string, body: Readable, meta: { declaredBytes: number | null; modifiedAt: number | null }, maxBytes: number): Promise<number> {
    if (meta.declaredBytes !== null && meta.declaredBytes > maxBytes) {
      body.resume()
      throw new HearthError('BODY_TOO_LARGE', `the archive is ${meta.declaredBytes} bytes; the limit left is ${maxBytes}`, { limit: deps.maxBytes })
    }
    let size = 0
    const counter = new Transform({
      transform (chunk: Buffer, _enc, done) {
        size += chunk.length
        if (size > maxBytes) done(new HearthError('BODY_TOO_LARGE', `the archive exceeds the limit of ${deps.maxBytes} bytes`, { limit: deps.maxBytes }))
        else done(null, chunk)
      }
    })
    try {
      await pipeline(body, counter, createWriteStream(archivePath(job, name), { mode: 0o600 }))
    } catch (err) {
      body.resume()
      await rm(archivePath(job, name), { force: true })
      throw err instanceof HearthError ? err : new HearthError('INVALID_BODY', `the upload did not complete: ${(err as Error).message}`)
    }
    if (size === 0) { await rm(archivePath(job, name), { force: true }); throw new HearthError('INVALID_BODY', 'the uploaded archive is empty') }
    if (meta.modifiedAt !== null) await utimes(archivePath(job, name), new Date(meta.modifiedAt), new Date(meta.modifiedAt)).catch(() => {})
    return size
  }

  /** Asks a worker which connectors fit the job's archive(s). */
  function probe (job: ImportJob): void {
    spawnWorker(job, { mode: 'probe', source: sourceOf(job), dirs: [...deps.connectorDirs] }, (m) => {
      if (m.type === 'suggestions') { job.suggestions = m.connectors; job.entries = m.entries; void waitForStart(job) }
      if (m.type === 'error') { job.error = { code: m.code, message: m.message }; job.state = 'failed' }
    }, () => { if (job.state === 'failed') void discard(job) })
  }

  return {
    async start () {
      // uploads of a previous run that crashed mid-import: nothing refers to them any more
      await rm(deps.dir, { recursive: true, force: true })
      await mkdir(deps.dir, { recursive: true, mode: 0o700 })
    },

    async upload (body, meta) {
      if (stopped) throw new HearthError('DAEMON_NOT_RUNNING', 'the daemon is stopping')
      if (meta.declaredBytes !== null && meta.declaredBytes > deps.maxBytes) {
        body.resume()
        throw new HearthError('BODY_TOO_LARGE', `the archive is ${meta.declaredBytes} bytes; the limit is ${deps.maxBytes}`, { limit: deps.maxBytes })
      }
      const job: ImportJob = {
        id: randomBytes(9).toString('base64url'),
        name: safeArchiveName(meta.name),
        parts: [],
        size: 0,
        createdAt: new Date().toISOString(),
        state: 'probing',
        entries: null,
        suggestions: [],
        connectorId: null,
        progress: { done: 0, stored: 0, duplicate: 0, rejected: 0, waiting: 0, notes: [] },
        summary: null,
        error: null,
        origin: 'dashboard'
      }
      await mkdir(folder(job.id), { recursive: true, mode: 0o700 })
      try {
        job.size = await store(job, job.name, body, meta, deps.maxBytes)
        job.parts.push(job.name)
      } catch (err) {
        await discard(job)
        throw err
      }
      jobs.set(job.id, job)
      trim()
      probe(job)
      return job
    },

    async addPart (id, body, meta) {
      const job = jobs.get(id)
      if (job === undefined) { body.resume(); throw new HearthError('NOT_FOUND', `no import ${id}`) }
      if (job.state !== 'ready') { body.resume(); throw new HearthError('CONFLICT', `import ${id} is ${job.state}; parts can be added while it waits to start`) }
      let name = safeArchiveName(meta.name)
      for (let n = 2; job.parts.includes(name); n++) name = `${n}-${safeArchiveName(meta.name)}`.slice(-100)
      job.state = 'probing'
      try {
        job.size += await store(job, name, body, meta, deps.maxBytes - job.size)
      } catch (err) {
        job.state = 'ready'
        throw err
      }
      job.parts.push(name)
      probe(job)
      return job
    },

    run (id, connectorId, include = []) {
      const job = jobs.get(id)
      if (job === undefined) throw new HearthError('NOT_FOUND', `no import ${id}`)
      if (job.state !== 'ready') throw new HearthError('CONFLICT', `import ${id} is ${job.state}; it can start once its archive has been looked at, and only once`)
      if (!job.suggestions.some((s) => s.connectorId === connectorId)) {
        throw new HearthError('NOT_FOUND', `no connector ${JSON.stringify(connectorId)}; installed: ${job.suggestions.map((s) => s.connectorId).join(', ') || 'none'}`)
      }
      job.state = 'running'
      clearTimeout(expiry.get(job.id))
      expiry.delete(job.id)
      job.connectorId = connectorId
      spawnWorker(job, { mode: 'import', source: sourceOf(job), dirs: [...deps.connectorDirs], connectorId, include: [...include], socketPath: deps.socketPath }, (m) => {
        if (m.type === 'progress') applyProgress(job, m.events)
        else if (m.type === 'summary') {
          const summary = m.summary as ImportSummary
          job.summary = summary
          job.state = summary.failure === undefined ? 'done' : 'failed'
          if (summary.failure !== undefined) job.error = summary.failure
        } else if (m.type === 'error') { job.error = { code: m.code, message: m.message }; job.state = 'failed' }
      }, () => { void discard(job) })
      return job
    },

    recordFinished (finished) {
      const { total } = finished
      const job: ImportJob = {
        id: randomBytes(9).toString('base64url'),
        name: safeArchiveName(finished.name),
        parts: [],
        size: 0,
        createdAt: finished.startedAt,
        state: finished.failure === undefined ? 'done' : 'failed',
        entries: null,
        suggestions: [],
        connectorId: finished.connectorId,
        progress: { done: total.items, stored: total.stored, duplicate: total.duplicate, rejected: total.rejected, waiting: total.waiting, notes: [] },
        summary: null,
        error: finished.failure ?? null,
        origin: 'cli'
      }
      jobs.set(job.id, job)
      trim()
      return job
    },

    get: (id) => jobs.get(id) ?? null,
    list: () => [...jobs.values()].reverse(),

    async stop () {
      stopped = true
      for (const timer of expiry.values()) clearTimeout(timer)
      expiry.clear()
      await Promise.all([...children.values()].map(async (child) => await new Promise<void>((resolve) => {
        if (child.exitCode !== null || child.signalCode !== null) { resolve(); return }
        child.once('exit', () => resolve())
        child.kill('SIGTERM')
      })))
      // uploads are kept only while their import may still run: none can once the daemon stops
      await Promise.all([...jobs.values()].map(discard))
    },

    status () {
      return { jobs: jobs.size, running: [...jobs.values()].filter((j) => j.state === 'running' || j.state === 'probing').length }
    }
  }
}
