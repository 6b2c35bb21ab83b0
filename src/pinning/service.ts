// Copies off the device: every stored ciphertext pinned at each configured IPFS Pinning Service
// API service (`pinning.services`). Per service: a follower of the index's change log queues the
// work, and a worker moves each CID's state on in rounds (worker.ts); both share one poll loop.
// The service's node fetches the blocks from the kubo storage node, whose addresses are given as
// origins: with the embedded store (no networking) pinning services cannot be used, which the
// start refuses with CONFIG_INVALID instead of queueing work that could never finish.
import { stat, readFile } from 'node:fs/promises'
import type { HearthDatabase } from '../db/database.js'
import { openKv } from '../db/database.js'
import { createDurableQueue } from '../db/queue.js'
import type { FileIndex } from '../db/file-index.js'
import { HearthError } from '../errors.js'
import type { HearthEventHub } from '../lifecycle/events.js'
import { createPollLoop, backoffDelay, type PollLoop } from '../lifecycle/poll-loop.js'
import type { Service } from '../lifecycle/service.js'
import type { Logger } from '../log.js'
import { createGatewaySource } from '../storage/gateway-source.js'
import type { HearthConfig, PinningServiceConfig } from '../config/types.js'
import { createPinningClient, displayEndpoint } from './client.js'
import { followChanges } from './follower.js'
import { createPinRecords, type PinRecord, type PinRecords, type PinState } from './records.js'
import { pinRound, type PinWorkerDeps } from './worker.js'

/** Largest ciphertext a sample read fetches (Hearth's ciphertexts are far smaller; bounded anyway). */
const MAX_SAMPLE_BYTES = 1024 ** 3
const BACKOFF = { initialMs: 1_000, maxMs: 60_000 }
/** Origins are asked of the storage node at most this often. */
const ORIGINS_TTL_MS = 60_000

export interface PinningDeps {
  config: HearthConfig['pinning']
  db: HearthDatabase
  index: Pick<FileIndex, 'changesSince' | 'byCid'>
  storage: { readonly kind: string; peerAddresses?: () => Promise<string[]> }
  events: HearthEventHub
  logger: Logger
}

export interface ServicePins {
  name: string
  endpoint: string
  counts: Record<PinState, number>
  /** CIDs with work left (queued, polled or retried). */
  pending: number
  lastError: string | null
  /** Result of the last request; null until the first. */
  reachable: boolean | null
}

export interface PinningService extends Service {
  status (): Promise<{ services: ServicePins[] } | undefined>
  pins (query: { service?: string; state?: PinState; after?: string; limit: number }): Promise<Array<PinRecord & { service: string }>>
  /** Look at the index and the queues now. */
  kick (): void
}

export function createPinningService (deps: PinningDeps): PinningService {
  const workers: ServiceWorker[] = []
  const unsubscribe: Array<() => void> = []
  return {
    name: 'pinning',
    async start () {
      if (deps.config.services.length === 0) return
      if (deps.storage.kind !== 'kubo') {
        throw new HearthError('CONFIG_INVALID', 'pinning.services needs storage.backend "kubo": the service fetches the blocks from your Kubo node, and the embedded store serves none')
      }
      const origins = cachedOrigins(deps.storage)
      for (const service of deps.config.services) workers.push(await serviceWorker(deps, service, origins))
      for (const w of workers) w.loop.start()
      const kick = (): void => { for (const w of workers) w.loop.kick() }
      unsubscribe.push(deps.events.on('file.indexed', kick), deps.events.on('scope.deleted', kick))
    },
    async stop () {
      for (const off of unsubscribe.splice(0)) off()
      await Promise.all(workers.splice(0).map(async (w) => { await w.loop.stop() }))
    },
    async status () {
      if (workers.length === 0) return undefined
      return { services: await Promise.all(workers.map(async (w) => await w.status())) }
    },
    async pins (query) {
      const out: Array<PinRecord & { service: string }> = []
      for (const w of workers) {
        if (query.service !== undefined && w.name !== query.service) continue
        const rows = await w.records.list({ state: query.state, after: query.after, limit: query.limit - out.length })
        out.push(...rows.map((r) => ({ ...r, service: w.name })))
        if (out.length >= query.limit) break
      }
      if (query.service !== undefined && !workers.some((w) => w.name === query.service)) {
        throw new HearthError('NOT_FOUND', `no pinning service named ${query.service} (pinning.services)`)
      }
      return out
    },
    kick () { for (const w of workers) w.loop.kick() }
  }
}

interface ServiceWorker { name: string; records: PinRecords; loop: PollLoop; status (): Promise<ServicePins> }

async function serviceWorker (deps: PinningDeps, service: PinningServiceConfig, origins: () => Promise<string[]>): Promise<ServiceWorker> {
  const token = await readToken(service)
  const records = createPinRecords(openKv<PinRecord>(deps.db, `pinning.${service.name}`))
  await records.load()
  const queue = createDurableQueue<{ cid: string }>(deps.db, `pinning.${service.name}`)
  const cursor = openKv<number>(deps.db, `pinning-cursor.${service.name}`)
  const { settings, config } = { settings: deps.config, config: service }
  let lastError: string | null = null
  let reachable: boolean | null = null
  const worker: PinWorkerDeps = {
    client: createPinningClient({ endpoint: config.endpoint, token, timeoutMs: settings.timeoutMs }),
    records,
    queue,
    origins,
    gateway: config.gateway == null ? null : createGatewaySource({ baseUrl: config.gateway, requestTimeoutMs: settings.timeoutMs }),
    settings: { ...settings, maxSampleBytes: MAX_SAMPLE_BYTES, requestTimeoutMs: settings.timeoutMs },
    backoff: BACKOFF,
    onOutcome: (err) => {
      reachable = err === null ? true : err.code === 'PINNING_UNAVAILABLE' ? false : reachable
      lastError = err === null ? lastError : `${err.code}: ${err.message}`
      if (err === null) lastError = null
      if (err !== null) deps.logger.warn({ service: service.name, code: err.code }, err.message)
    }
  }
  const loop = createPollLoop({
    name: `pinning ${service.name}`,
    logger: deps.logger,
    step: async (signal) => {
      const more = await followChanges({ index: deps.index, records, queue, cursor })
      const handled = await pinRound(worker, signal)
      return more || handled >= settings.batchSize ? 0 : settings.pollIntervalMs
    },
    errorDelayMs: (failures) => backoffDelay(failures, BACKOFF)
  })
  return {
    name: service.name,
    records,
    loop,
    status: async () => ({ name: service.name, endpoint: displayEndpoint(config.endpoint), counts: records.counts(), pending: await queue.size(), lastError, reachable })
  }
}

/** The access token, from a file only its owner may read (mode 0600 or stricter). */
async function readToken (service: PinningServiceConfig): Promise<string> {
  const where = `pinning service ${service.name}: token file ${service.tokenFile}`
  let info
  try { info = await stat(service.tokenFile) } catch {
    throw new HearthError('CONFIG_INVALID', `${where} cannot be read`)
  }
  if (!info.isFile()) throw new HearthError('CONFIG_INVALID', `${where} is not a file`)
  if ((info.mode & 0o077) !== 0) {
    throw new HearthError('CONFIG_INVALID', `${where} may be read by others (mode ${(info.mode & 0o777).toString(8)}): chmod 600 it`)
  }
  if (info.size > 16 * 1024) throw new HearthError('CONFIG_INVALID', `${where} is larger than a token`)
  const token = (await readFile(service.tokenFile, 'utf8')).trim()
  if (token === '' || /[\r\n\0]/.test(token)) throw new HearthError('CONFIG_INVALID', `${where} must hold one token on one line`)
  return token
}

function cachedOrigins (storage: PinningDeps['storage']): () => Promise<string[]> {
  let cached: { at: number; addrs: string[] } | null = null
  return async () => {
    if (cached !== null && Date.now() - cached.at < ORIGINS_TTL_MS) return cached.addrs
    if (storage.peerAddresses === undefined) throw new HearthError('CONFIG_INVALID', `the ${storage.kind} storage serves no blocks`)
    const addrs = (await storage.peerAddresses()).slice(0, 20)
    cached = { at: Date.now(), addrs }
    return addrs
  }
}
