// Image jobs seen through the proxy (docs/protocol.md §4): every job the upstream created for us is followed
// in the background — polled with backoff until SUCCESS/FAILED or a deadline — and on SUCCESS its
// output files are downloaded into <home>/images/<jobId>/. Job records live in the KV, so
// following resumes after a restart. Jobs submitted while offline start as local records
// (`local-<uuid>`) and are linked to the upstream job once the queue submits them.
import { join } from 'node:path'
import { setTimeout as sleep } from 'node:timers/promises'
import type { Logger } from '../log.js'
import type { ProxyKv } from './types.js'
import type { UpstreamApi } from './api.js'
import { outputFilesOf, safeFileName, writeManifest, type Downloader, type LocalFile } from './download.js'
import { isOfflineError } from './upstream.js'

export type ImageJobState = 'queued' | 'rejected' | 'following' | 'done' | 'failed' | 'expired'

export interface ImageJobRecord {
  /** The upstream's job id; null while the request waits in the offline queue. */
  jobId: string | null
  localJobId: string | null
  prompt: string | null
  state: ImageJobState
  /** Last status the upstream reported (CREATED, IN_PROGRESS, SUCCESS, FAILED). */
  status: string | null
  createdAt: number
  updatedAt: number
  dir: string | null
  files: LocalFile[]
  error?: string
  /** Output URLs of a synchronous answer: downloaded without polling. */
  synchronousOutput?: string[]
  /** The upstream's answer when it refused a queued submission (status and body, passed on as they were). */
  rejection?: { status: number, body: unknown }
}

export interface ImageJobs {
  follow (jobId: string, meta: { prompt?: string | null, localJobId?: string | null, synchronousOutput?: string[] }): Promise<void>
  recordQueued (localJobId: string, prompt: string | null): Promise<void>
  recordRejected (localJobId: string, rejection: { status: number, body: unknown }): Promise<void>
  /** The upstream job id a local id now stands for, if submitted. */
  upstreamIdOf (localJobId: string): Promise<string | null>
  /** A job by upstream or local id. */
  get (id: string): Promise<ImageJobRecord | null>
  /** Every job, newest first. */
  list (): Promise<ImageJobRecord[]>
  /** Resume following jobs persisted as unfinished. */
  start (): Promise<void>
  stop (): Promise<void>
  /** Resolves when every job being followed right now has settled (tests, shutdown). */
  settled (): Promise<void>
}

const RECORD = 'images/job/'
const LOCAL = 'images/local/'
const DOWNLOAD_ATTEMPTS = 3

export function createImageJobs (deps: {
  kv: ProxyKv
  api: UpstreamApi
  imagesDir: string
  downloader: Downloader
  jobPollMs: number
  jobDeadlineMs: number
  logger: Logger
}): ImageJobs {
  const { kv, api, logger } = deps
  const { downloader } = deps
  const running = new Map<string, Promise<void>>()
  let stopper = new AbortController()

  const load = async (id: string): Promise<ImageJobRecord | null> => (await kv.get(RECORD + id) as ImageJobRecord | undefined) ?? null
  const save = async (key: string, r: ImageJobRecord): Promise<void> => { await kv.put(RECORD + key, { ...r, updatedAt: Date.now() }) }

  async function update (jobId: string, patch: Partial<ImageJobRecord>): Promise<ImageJobRecord> {
    const r = { ...(await load(jobId) as ImageJobRecord), ...patch }
    await save(jobId, r)
    return r
  }

  async function download (jobId: string, job: unknown, record: ImageJobRecord): Promise<void> {
    const files = outputFilesOf(job, record.synchronousOutput)
    const dir = join(deps.imagesDir, safeFileName(jobId, 0, new Set()))
    let lastError: unknown
    for (let attempt = 1; attempt <= DOWNLOAD_ATTEMPTS; attempt++) {
      try {
        const local = await downloader.downloadAll(dir, files)
        // the manifest first: a job shown as done has everything in place on disk
        await writeManifest(dir, {
          jobId, localJobId: record.localJobId, prompt: record.prompt, status: 'SUCCESS',
          createdAt: new Date(record.createdAt).toISOString(), downloadedAt: new Date().toISOString(),
          files: local.map(({ name, size, sha256 }) => ({ name, size, sha256 }))
        })
        await update(jobId, { state: 'done', status: 'SUCCESS', dir, files: local })
        logger.info({ jobId, files: local.length }, 'image job outputs downloaded')
        return
      } catch (err) {
        lastError = err
        if (attempt < DOWNLOAD_ATTEMPTS) await sleep(deps.jobPollMs, undefined, { signal: stopper.signal })
      }
    }
    await update(jobId, { state: 'failed', status: 'SUCCESS', error: `outputs could not be downloaded: ${(lastError as Error).message}` })
  }

  async function followLoop (jobId: string): Promise<void> {
    let delay = deps.jobPollMs
    for (;;) {
      const record = await load(jobId)
      if (record === null || record.state !== 'following') return
      if (Date.now() > record.createdAt + deps.jobDeadlineMs) {
        await update(jobId, { state: 'expired', error: `job not finished within ${deps.jobDeadlineMs} ms` })
        return
      }
      if (record.synchronousOutput !== undefined && record.synchronousOutput.length > 0) {
        await download(jobId, null, record)
        return
      }
      try {
        const answer = await api.call('GET', `/jobs/${encodeURIComponent(jobId)}`, undefined, { signal: stopper.signal })
        const job = (answer.json as { job?: { status?: unknown } } | null)?.job
        if (answer.status === 404) {
          await update(jobId, { state: 'failed', error: 'the conversation service no longer knows this job' })
          return
        }
        const status = typeof job?.status === 'string' ? job.status : null
        if (status !== null && status !== record.status) await update(jobId, { status })
        if (status === 'SUCCESS') { await download(jobId, job, record); return }
        if (status === 'FAILED') { await update(jobId, { state: 'failed', error: 'the image job failed upstream' }); return }
      } catch (err) {
        if (stopper.signal.aborted) return
        // Offline, token trouble or a bad answer: keep polling until the deadline.
        if (!isOfflineError(err)) logger.warn({ jobId, err: (err as Error).message }, 'image job poll failed')
      }
      await sleep(delay, undefined, { signal: stopper.signal })
      delay = Math.min(Math.round(delay * 1.5), deps.jobPollMs * 8)
    }
  }

  function launch (jobId: string): void {
    if (running.has(jobId)) return
    const p = followLoop(jobId)
      .catch((err: unknown) => {
        if (!stopper.signal.aborted) logger.error({ jobId, err: (err as Error).message }, 'image job follow stopped')
      })
      .finally(() => running.delete(jobId))
    running.set(jobId, p)
  }

  return {
    async follow (jobId, meta) {
      const existing = await load(jobId)
      if (existing === null) {
        const now = Date.now()
        await save(jobId, {
          jobId, localJobId: meta.localJobId ?? null, prompt: meta.prompt ?? null, state: 'following', status: 'CREATED',
          createdAt: now, updatedAt: now, dir: null, files: [],
          ...(meta.synchronousOutput !== undefined && meta.synchronousOutput.length > 0 ? { synchronousOutput: meta.synchronousOutput } : {})
        })
      }
      if (meta.localJobId != null) {
        await kv.put(LOCAL + meta.localJobId, jobId)
        await kv.del(RECORD + meta.localJobId)
      }
      if (!stopper.signal.aborted) launch(jobId)
    },

    async recordQueued (localJobId, prompt) {
      const now = Date.now()
      await save(localJobId, { jobId: null, localJobId, prompt, state: 'queued', status: null, createdAt: now, updatedAt: now, dir: null, files: [] })
    },

    async recordRejected (localJobId, rejection) {
      const r = await load(localJobId)
      if (r !== null) await save(localJobId, { ...r, state: 'rejected', rejection, error: `the conversation service refused the queued request (status ${rejection.status})` })
    },

    async upstreamIdOf (localJobId) {
      return (await kv.get(LOCAL + localJobId) as string | undefined) ?? null
    },

    async get (id) {
      const direct = await load(id)
      if (direct !== null) return direct
      const mapped = await kv.get(LOCAL + id) as string | undefined
      return mapped !== undefined ? await load(mapped) : null
    },

    async list () {
      const out: ImageJobRecord[] = []
      for await (const [, v] of kv.entries({ prefix: RECORD })) out.push(v as ImageJobRecord)
      return out.sort((a, b) => b.createdAt - a.createdAt)
    },

    async start () {
      stopper = new AbortController()
      for await (const [, v] of kv.entries({ prefix: RECORD })) {
        const r = v as ImageJobRecord
        if (r.state === 'following' && r.jobId !== null) launch(r.jobId)
      }
    },

    async stop () {
      stopper.abort()
      await Promise.allSettled([...running.values()])
    },

    async settled () {
      while (running.size > 0) await Promise.allSettled([...running.values()])
    }
  }
}
