// The ingest service: the pipeline and the work that feeds it. Watcher events, the initial scan,
// storage retries and files waiting for their schema share one bounded work queue; what the
// pipeline stored or indexed is announced on the event hub. Built without side effects; start()
// begins watching (or polling) and the initial scan.
import type { Logger } from '../log.js'
import { beginBackground, type Service } from '../lifecycle/service.js'
import type { EventSink, HearthEvents } from '../lifecycle/events.js'
import type { FileIndex } from '../db/file-index.js'
import { createIngestPipeline, isTransientFailure, type IngestDeps, type IngestPipeline, type IngestResult } from './pipeline.js'
import { settle, type Settled } from './ingest-many.js'
import { createRetrySet } from './retry-set.js'
import { createWorkQueue } from './work-queue.js'
import { scanDataFolder, type ScanProgress } from './scanner.js'
import { sweepGoneFiles } from './gone-sweep.js'
import { watchDataFolder } from './watcher.js'
import { createUnsettledFiles } from './unsettled.js'
import { createIngestJournal, type IngestJournal } from './journal.js'
import { createOwnWrites } from './own-writes.js'
import type { HearthDatabase } from '../db/database.js'
import { createFileSyncer } from '../storage/deferred-sync.js'
import type { SharedFileWriting } from '../storage/file-writer.js'
import { createDataFileWriter } from './atomic-write.js'

/** See README "Watching": covers a writer's back-to-back writes; a file read too early is not JSON yet and waits. */
export const DEFAULT_QUIET_MS = 25
/**
 * Dropped files read and looked up together (ingest-many.ts), and how many such batches run at
 * once: while one batch's records wait for the index's synced group commit (an fsync can take
 * 10–170 ms on a busy disk), the next are read and encrypted, and the groups grow.
 */
const FRESH_BATCH_FILES = 32
const FRESH_BATCHES = 4
/** A scan's batches at once: one's stats and records are read while the other's changed files are ingested. */
const SCAN_BATCHES = 2

export interface IngestSettings {
  concurrency: number
  /** The watcher reads a file once no change event came for it this long (default DEFAULT_QUIET_MS). */
  quietMs?: number
  /** A dropped file that is not JSON yet is rejected only once it stayed unchanged this long. */
  stabilityMs: number
  /** Rescan the folder periodically instead of change notifications (network filesystems). */
  usePolling: boolean
  pollIntervalMs: number
  /** How often files waiting for their schema are tried again. */
  retryWaitingMs: number
  /** Journaled files are synced in the background this long after their answer (default 200 ms). */
  checkpointMs?: number
}

export interface IngestServiceDeps {
  pipeline: Omit<IngestDeps, 'onStored' | 'onIndexed' | 'onDeferred' | 'logger' | 'journal'>
  index: Pick<FileIndex, 'byState' | 'get' | 'put' | 'revert' | 'byCid'>
  /**
   * The database of `pipeline.index`: with it, small files are acknowledged after one synced
   * batch that journals them (journal.ts), replayed at start.
   */
  db?: HearthDatabase
  /** The daemon's file-writer thread and `syncfs` helper (not closed by stop); else the service makes its own. */
  files?: SharedFileWriting
  settings: IngestSettings
  events: EventSink<HearthEvents>
  logger: Logger
  /** Progress lines of the initial scan, for the person who started the daemon. */
  print?: (line: string) => void
  /** The initial scan begins once this resolves (beginBackground); at start without it. */
  backgroundAfter?: Promise<void>
}

export interface IngestStatus {
  queued: number
  running: number
  waitingForStorage: number
  /** Dropped files read before they were complete JSON, waiting for their writer (unsettled.ts). */
  waitingForWriter: number
  scan: ScanProgress
}

export interface IngestService extends Service {
  readonly name: 'ingest'
  readonly pipeline: IngestPipeline
  /** Resolves when the initial scan has reconciled the data folder with the index. */
  readonly scanned: Promise<ScanProgress>
  /** Ingest one path (relative to the data folder) through the work queue. */
  push (rel: string): void
  status (): Promise<IngestStatus>
}

export function createIngestService (deps: IngestServiceDeps): IngestService {
  const { settings, logger, events } = deps
  const print = deps.print ?? (() => {})
  // files whose storage failed go back to the work queue with a growing delay
  const retries = createRetrySet({ retry: (rel) => work.push(rel) })
  const syncer = deps.files?.syncFiles ?? createFileSyncer()
  const fileWriter = deps.files?.writer ?? createDataFileWriter(deps.pipeline.dataDir)
  const journal: IngestJournal | undefined = deps.db === undefined
    ? undefined
    : createIngestJournal({ db: deps.db, dataDir: deps.pipeline.dataDir, storage: deps.pipeline.storage, index: deps.index, syncFiles: syncer, logger, ...(settings.checkpointMs !== undefined ? { delayMs: settings.checkpointMs } : {}) })
  const ownWrites = createOwnWrites()
  const pipeline = createIngestPipeline({
    ...deps.pipeline,
    ownWrites,
    ...(journal !== undefined ? { journal, fileWriter } : {}),
    logger,
    onStored: (record) => events.emit('file.stored', record),
    onIndexed: (record, data) => {
      if (data !== undefined) events.emit('version.data', { record, data })
      events.emit('file.indexed', record)
    },
    onDeferred: (path) => retries.add(path)
  })
  const work = createWorkQueue({ concurrency: settings.concurrency, run: async (rel) => { await outcome(rel, await settle(pipeline.ingestPath(rel))) } })
  // Files the watcher handed on after its short quiet period, read in batches (ingest-many.ts);
  // such a read may find a file still being written (not JSON yet): it waits in `unsettled`
  // instead of being rejected.
  const fresh = createWorkQueue({
    concurrency: FRESH_BATCHES,
    batchSize: FRESH_BATCH_FILES,
    runBatch: async (rels) => {
      const results = await pipeline.ingestMany(rels, { waitIfIncomplete: true, justWritten: true })
      for (const [i, rel] of rels.entries()) await outcome(rel, results[i]!)
    }
  })
  // The initial scan and the polling rescan: mostly unchanged files, one stat each and their
  // records read in batches (one LevelDB read per batch instead of one per file)
  const scanWork = createWorkQueue({
    concurrency: SCAN_BATCHES,
    batchSize: FRESH_BATCH_FILES,
    runBatch: async (rels) => {
      const results = await pipeline.ingestMany(rels)
      for (const [i, rel] of rels.entries()) await outcome(rel, results[i]!)
    }
  })
  const unsettled = createUnsettledFiles({
    dataDir: deps.pipeline.dataDir,
    patienceMs: settings.stabilityMs,
    // unchanged for the whole patience: this read is the last word (a broken file is rejected)
    recheck: (rel, final) => { if (final) work.push(rel); else fresh.push(rel) }
  })
  const outcome = async (rel: string, settled: Settled<IngestResult>): Promise<void> => {
    if (settled.ok) {
      const result = settled.value
      if (result.outcome === 'incomplete') {
        logger.debug({ path: rel }, 'file not complete JSON yet; read again once it stays unchanged')
        unsettled.add(rel, result.seen!)
        return
      }
      unsettled.settled(rel)
      if (result.outcome === 'ingested') retries.succeeded()
    } else if (isTransientFailure(settled.error)) {
      logger.warn({ path: rel, err: (settled.error as Error).message }, 'storage unavailable; the file will be retried')
      retries.add(rel)
    } else {
      logger.error({ path: rel, err: settled.error }, 'ingest failed; the file will be retried on the next scan')
    }
  }

  const scanState: ScanProgress = { seen: 0, queued: 0, done: false }
  let resolveScanned: (p: ScanProgress) => void = () => {}
  let rejectScanned: (err: unknown) => void = () => {}
  const scanned = new Promise<ScanProgress>((resolve, reject) => { resolveScanned = resolve; rejectScanned = reject })
  scanned.catch((err) => logger.error({ err }, 'initial scan failed'))
  const stops: Array<() => Promise<void> | void> = []

  const watchOrPoll = async (): Promise<void> => {
    if (settings.usePolling) {
      // filesystems without change notifications (network mounts): a periodic reconcile scan,
      // cheap for unchanged files (one stat and one index read each)
      const pollTimer = setInterval(() => { void scanDataFolder({ dataDir: deps.pipeline.dataDir, queue: scanWork }).then(sweepGone).catch((err) => logger.warn({ err }, 'polling scan failed')) }, settings.pollIntervalMs)
      pollTimer.unref()
      stops.push(() => { clearInterval(pollTimer) })
      return
    }
    const watcher = watchDataFolder({
      dataDir: deps.pipeline.dataDir,
      quietMs: settings.quietMs ?? DEFAULT_QUIET_MS,
      // one batch of the watcher's is one run of the queue (ingest-many.ts): pushed one by one, its
      // first files would each start a run of their own while runs are free (a lookup, a group
      // commit and the queue's turns for each)
      onFiles: (rels) => { fresh.pushMany(rels) },
      batchFiles: FRESH_BATCH_FILES,
      ownWrites,
      onError: (err) => logger.warn({ err }, 'watcher error')
    })
    stops.push(async () => { await watcher.close() })
    await watcher.ready
  }

  let scanStarted = false
  const startInitialScan = (): void => {
    scanStarted = true
    const scanAbort = new AbortController()
    stops.push(() => { scanAbort.abort() })
    scanDataFolder({
      dataDir: deps.pipeline.dataDir,
      queue: scanWork,
      signal: scanAbort.signal,
      progressEvery: 10_000,
      onProgress: (p) => {
        Object.assign(scanState, p)
        logger.info({ scan: p }, p.done ? 'initial scan finished' : 'initial scan progress')
        if (p.seen > 0) print(p.done ? `initial scan done: ${p.seen} files checked` : `initial scan: ${p.seen} files checked so far`)
      }
    }).then(async (p) => { if (p.done) await sweepGone(); return p }).then(resolveScanned, rejectScanned)
  }
  const sweepGone = async (): Promise<void> => {
    const forgotten = await sweepGoneFiles({ dataDir: deps.pipeline.dataDir, index: deps.index, push: (rel) => work.push(rel) })
    if (forgotten === 0) return
    logger.info({ files: forgotten }, 'rejected or waiting files deleted while not watched: forgetting them')
    await work.idle()
  }

  const retryWaitingFiles = (): void => {
    // files waiting for their schema are retried when one may have become known
    const retryTimer = setInterval(() => {
      void (async () => {
        for (const r of await deps.index.byState('waiting-schema', { limit: 1000 })) work.push(r.path)
      })().catch((err) => logger.warn({ err }, 'retry of waiting files failed'))
    }, settings.retryWaitingMs)
    retryTimer.unref()
    stops.push(() => { clearInterval(retryTimer) })
  }

  let stopping = false
  const stop = async (): Promise<void> => {
    stopping = true
    while (stops.length > 0) await stops.pop()!()
    await fresh.close()
    await scanWork.close()
    await work.close()
    // an initial scan stopped midway ends here, not later against an index closed after this part
    // (its queues are closed: whatever it waits for resolves); a scan that failed was logged
    if (scanStarted) await scanned.catch(() => {})
    unsettled.close()
    retries.stop()
    await journal?.close()
    if (deps.files === undefined) {
      syncer.close()
      await fileWriter.close()
    }
  }

  return {
    name: 'ingest',
    pipeline,
    scanned,
    push: (rel) => work.push(rel),
    async start () {
      stopping = false
      // before anything reads the data folder: files a power cut tore are whole again
      await journal?.replay()
      if (journal !== undefined) syncer.warm()
      await watchOrPoll()
      // files dropped meanwhile are watched already; the scan finds the rest
      beginBackground(deps.backgroundAfter, () => stopping, startInitialScan)
      retryWaitingFiles()
    },
    stop,
    async status () {
      return { queued: work.size + fresh.size + scanWork.size, running: work.running + fresh.running + scanWork.running, waitingForStorage: retries.size, waitingForWriter: unsettled.size, scan: { ...scanState } }
    }
  }
}
