// The composition root: builds every component from the configuration and the home folder, wires
// them together through plain dependency objects, and takes them down in reverse order.
// Nothing below this file reaches for globals; this is the one place that knows them all.
import { mkdir, chmod } from 'node:fs/promises'
import { join } from 'node:path'
import type { HomeLayout } from '../home.js'
import { asStorageFull } from '../errors.js'
import type { Logger } from '../log.js'
import type { HearthConfig } from '../config/types.js'
import type { ConfigSource, ConfigSources } from '../config/resolve.js'
import { acquireDaemonLock } from './lock.js'
import { ensureIdentity } from './identity-setup.js'
import { openDatabase, openKv } from '../db/database.js'
import { openFileIndex } from '../db/file-index.js'
import { createStorage } from '../storage/factory.js'
import { buildSchemaRegistry, schemaTrustFor } from './schemas-setup.js'
import { setUpChain, type ChainWorkers } from './chain-setup.js'
import { setUpSync, type SyncParts } from './sync-setup.js'
import { addSyncRoutes } from '../api/routes/sync.js'
import { createIngestPipeline, isTransientFailure } from '../ingest/pipeline.js'
import { createRetrySet } from '../ingest/retry-set.js'
import { createWorkQueue } from '../ingest/work-queue.js'
import { removeStaleTemps } from '../ingest/atomic-write.js'
import { scanDataFolder, type ScanProgress } from '../ingest/scanner.js'
import { watchDataFolder } from '../ingest/watcher.js'
import { createApiServer, systemdListenFd, type RawMount } from '../api/server.js'
import { Router } from '../api/router.js'
import { addDataRoutes } from '../api/routes/data.js'
import { addSchemaRoutes } from '../api/routes/schemas.js'
import { addSystemRoutes, type StatusPart } from '../api/routes/system.js'
import { addConfigRoutes } from '../api/routes/config.js'
import { addUpstreamRoutes } from '../api/routes/upstream.js'
import { addImageRoutes } from '../api/routes/images.js'
import { resolveLoopback } from '../api/loopback.js'
import { loadOrCreateApiToken } from './api-token.js'
import { addConnectorRoutes } from '../connectors/routes.js'
import { connectorDirs } from '../connectors/loader.js'
import { setUpBuilders } from '../builders/index.js'
import { createProxy, PROXY_MOUNT_PREFIXES, type QueuedImageRequest } from '../proxy/index.js'
import { createDurableQueue } from '../db/queue.js'
import { createDashboard } from '../ui/dashboard.js'
import { addUiRoutes } from '../api/routes/ui.js'
import { createImportJobs } from '../connectors/import-jobs.js'
import { addImportRoutes } from '../api/routes/imports.js'
import { addConversationRoutes } from '../api/routes/conversations.js'

/** Largest export archive the dashboard accepts for an import. */
const MAX_IMPORT_BYTES = 8 * 1024 ** 3

export interface DaemonOptions {
  home: HomeLayout
  config: HearthConfig
  /** Where each configuration value came from (shown by GET /v1/config); defaults when absent. */
  configSources?: Record<string, ConfigSource>
  /** The environment variables and --set flags the configuration was resolved with. */
  configAmbient?: Omit<ConfigSources, 'file'>
  logger: Logger
  env?: NodeJS.ProcessEnv
  /** Progress and readiness lines for the person who started the daemon. */
  print?: (line: string) => void
}

export interface Daemon {
  ownerAddress: string
  socketPath: string | null
  tcpPort: number | null
  /** The builder listener's TCP port, when builders.listen is set. */
  buildersPort: number | null
  /** Resolves when the initial scan has reconciled the data folder with the index. */
  scanned: Promise<ScanProgress>
  stop (): Promise<void>
}

export async function startDaemon (opts: DaemonOptions): Promise<Daemon> {
  const { home, config, logger } = opts
  const print = opts.print ?? (() => {})
  const env = opts.env ?? process.env
  const stack: Array<() => Promise<void>> = []
  const stopAll = async (): Promise<void> => {
    while (stack.length > 0) {
      const step = stack.pop()!
      await step().catch((err) => logger.error({ err }, 'shutdown step failed'))
    }
  }

  try {
    // judged by what it resolves to, before anything starts (a name for 0.0.0.0 is CONFIG_INVALID)
    if (config.api.tcp.enabled) await resolveLoopback(config.api.tcp.host, 'api.tcp.host')
    for (const dir of [home.root, home.data, home.index, home.run, home.images]) await mkdir(dir, { recursive: true })
    await chmod(home.root, 0o700)
    const lock = await acquireDaemonLock(home.lock)
    stack.push(async () => { await lock.release() })
    const staleTemps = await removeStaleTemps(home.data)
    if (staleTemps > 0) logger.info({ removed: staleTemps }, 'removed temp files of writes a previous run did not finish')

    const identity = await ensureIdentity(home, print)
    const db = await openDatabase(home.index)
    stack.push(async () => { await db.close() })
    const index = await openFileIndex({ db })

    const storage = await createStorage(config.storage, home, logger)
    stack.push(async () => { await storage.stop() })

    const chain = await setUpChain({ config, home, db, storage, identity, logger, print })
    if (chain !== null) stack.push(async () => { await chain.stop() })
    const schemas = await buildSchemaRegistry({ config, home, db, storage, logger, extraSources: chain !== null ? [chain.resolver] : [], trust: chain?.trust ?? schemaTrustFor(config, identity.ownerAddress) })
    let chainWorkers: ChainWorkers | null = null
    let sync: SyncParts | null = null
    // files whose storage failed go back to the work queue (defined below) with a growing delay
    const retries = createRetrySet({ retry: (rel) => work.push(rel) })
    stack.push(async () => { retries.stop() })
    const pipeline = createIngestPipeline({
      dataDir: home.data,
      index,
      storage,
      schemas: schemas.registry,
      validate: schemas.validate,
      masterKey: identity.masterKey,
      logger,
      maxFileBytes: config.ingest.maxFileBytes,
      onStored: (record) => chainWorkers?.enqueueFile(record),
      onIndexed: () => sync?.notifyLocalChange(),
      onDeferred: (path) => retries.add(path)
    })
    if (chain !== null) {
      chainWorkers = await chain.startWorkers({
        index,
        replaceSchemaId: async (localId, chainId) => await schemas.registry.replaceSchemaId(localId, chainId),
        schemaById: async (id) => await schemas.registry.byId(id)
      })
      const workers = chainWorkers
      stack.push(async () => { await workers.stop() })
    }

    // ingest work: watcher events, the initial scan and retries share one bounded queue
    const work = createWorkQueue({
      concurrency: config.ingest.concurrency,
      run: async (rel) => {
        try {
          const result = await pipeline.ingestPath(rel)
          if (result.outcome === 'ingested') retries.succeeded()
        } catch (err) {
          if (isTransientFailure(err)) {
            logger.warn({ path: rel, err: (err as Error).message }, 'storage unavailable; the file will be retried')
            retries.add(rel)
          } else {
            logger.error({ path: rel, err }, 'ingest failed; the file will be retried on the next scan')
          }
        }
      }
    })
    stack.push(async () => { await work.close() })

    const statusParts: StatusPart[] = []
    statusParts.push({ name: 'chain', read: async () => chainWorkers === null ? { configured: false, note: 'no chain configured: registrations wait until one is' } : await chainWorkers.status() })
    statusParts.push({ name: 'schemaSources', read: async () => schemas.registry.sourceStatus() })
    const scanState: ScanProgress = { seen: 0, queued: 0, done: false }
    statusParts.push({ name: 'ingest', read: async () => ({ queued: work.size, running: work.running, waitingForStorage: retries.size, scan: { ...scanState } }) })

    sync = await setUpSync({ config, home, db, index, storage, identity, pipeline, chain: chain?.client ?? null, logger, print })
    const syncParts = sync
    stack.push(async () => { await syncParts.stop() })
    statusParts.push({ name: 'sync', read: async () => await syncParts.status() })

    const router = new Router()
    addDataRoutes(router, { dataDir: home.data, index, storage, pipeline, masterKey: identity.masterKey, logger, onScopeDeleted: () => syncParts.notifyLocalChange() })
    addSyncRoutes(router, syncParts)
    addSchemaRoutes(router, { registry: schemas.registry, serving: schemas.serving, shipped: schemas.shipped, storage, logger, onSchemaAdded: (schema) => chainWorkers?.enqueueSchema(schema) })
    addSystemRoutes(router, {
      ownerAddress: identity.ownerAddress,
      index,
      storage,
      storageBackend: config.storage.backend,
      parts: statusParts
    })
    addConfigRoutes(router, {
      configFile: home.config,
      running: { config, sources: opts.configSources ?? {} },
      ambient: opts.configAmbient ?? { env },
      logger
    })
    addConnectorRoutes(router, { dirs: connectorDirs(home), logger })
    const importJobs = createImportJobs({ dir: join(home.root, 'imports'), connectorDirs: connectorDirs(home), socketPath: home.socket, logger, maxBytes: MAX_IMPORT_BYTES })
    await importJobs.start()
    stack.push(async () => { await importJobs.stop() })
    addImportRoutes(router, { jobs: importJobs })
    const dashboard = config.ui.enabled ? createDashboard({ listen: config.ui.listen, logger }) : null
    addUiRoutes(router, { dashboard })
    statusParts.push({ name: 'dashboard', read: async () => dashboard?.status() ?? { listening: false, note: 'ui.enabled is false' } })
    const builders = setUpBuilders({
      config: config.builders,
      db,
      index,
      storage,
      dataDir: home.data,
      identity,
      chain: chain?.client ?? null,
      connectorDirs: connectorDirs(home),
      logger
    })
    builders.addRoutes(router)
    stack.push(async () => { await builders.stop() })
    statusParts.push({ name: 'builders', read: async () => await builders.status() })
    const proxy = createProxy({
      config: config.upstream,
      home,
      kv: openKv(db, 'proxy'),
      queue: createDurableQueue<QueuedImageRequest>(db, 'upstream-images'),
      logger
    })
    await proxy.start()
    stack.push(async () => { await proxy.stop() })
    statusParts.push({ name: 'upstream', read: async () => await proxy.status() })
    addUpstreamRoutes(router, proxy)
    addImageRoutes(router, proxy)
    addConversationRoutes(router, proxy)
    const mounts: RawMount[] = PROXY_MOUNT_PREFIXES.map((prefix) => ({ prefix, handle: proxy.handle }))
    const api = createApiServer({ router, mounts, maxBodyBytes: config.api.maxBodyBytes, logger })
    stack.push(async () => { await api.close() })
    const inheritedFd = systemdListenFd(env)
    let socketPath: string | null = null
    if (inheritedFd !== null) {
      await api.listenFd(inheritedFd)
      print('listening on the socket passed by systemd')
    } else {
      await api.listenUnix(home.socket)
      socketPath = home.socket
    }
    let tcpPort: number | null = null
    if (config.api.tcp.enabled) {
      const token = await loadOrCreateApiToken(home)
      tcpPort = (await api.listenTcp(config.api.tcp.host, config.api.tcp.port, token)).port
      print(`TCP listener on ${config.api.tcp.host}:${tcpPort} (bearer token in ${home.identity}/api-token)`)
    }
    const buildersListener = await builders.start(api)
    if (buildersListener.port !== null) print(`builders  ${buildersListener.audience ?? ''}  (port ${buildersListener.port})`)

    if (dashboard !== null) {
      await dashboard.start(api)
      const url = dashboard.url()
      print(url !== null ? `dashboard ${url}  (\`hearth ui\` prints a login link)` : `dashboard not started: ${dashboard.status().error ?? ''}`)
    }

    if (config.ingest.usePolling) {
      // filesystems without change notifications (network mounts): a periodic reconcile scan,
      // cheap for unchanged files (one stat and one index read each)
      const pollTimer = setInterval(() => { void scanDataFolder({ dataDir: home.data, queue: work }).catch((err) => logger.warn({ err }, 'polling scan failed')) }, config.ingest.pollIntervalMs)
      pollTimer.unref()
      stack.push(async () => { clearInterval(pollTimer) })
    } else {
      const watcher = watchDataFolder({
        dataDir: home.data,
        stabilityMs: config.ingest.stabilityMs,
        onFile: (rel) => work.push(rel),
        onError: (err) => logger.warn({ err }, 'watcher error')
      })
      stack.push(async () => { await watcher.close() })
      await watcher.ready
    }

    const scanAbort = new AbortController()
    stack.push(async () => { scanAbort.abort() })
    const scanned = scanDataFolder({
      dataDir: home.data,
      queue: work,
      signal: scanAbort.signal,
      progressEvery: 10_000,
      onProgress: (p) => {
        Object.assign(scanState, p)
        logger.info({ scan: p }, p.done ? 'initial scan finished' : 'initial scan progress')
        if (p.seen > 0) print(p.done ? `initial scan done: ${p.seen} files checked` : `initial scan: ${p.seen} files checked so far`)
      }
    })
    scanned.catch((err) => logger.error({ err }, 'initial scan failed'))

    // files waiting for their schema are retried when one may have become known
    const retryTimer = setInterval(() => {
      void (async () => {
        for (const r of await index.byState('waiting-schema', { limit: 1000 })) work.push(r.path)
      })().catch((err) => logger.warn({ err }, 'retry of waiting files failed'))
    }, config.schemas.retryWaitingMs)
    retryTimer.unref()
    stack.push(async () => { clearInterval(retryTimer) })

    print(`owner     ${identity.ownerAddress}`)
    print(`data      ${home.data}  (drop files into data/<scope>/)`)
    if (socketPath !== null) print(`socket    ${socketPath}`)
    print('ready')
    logger.info({ owner: identity.ownerAddress, socket: socketPath }, 'daemon ready')

    return {
      ownerAddress: identity.ownerAddress,
      socketPath,
      tcpPort,
      buildersPort: buildersListener.port,
      scanned,
      stop: stopAll
    }
  } catch (err) {
    await stopAll()
    // a full disk fails a start anywhere (lock, index, blocks): say so, not which write noticed
    throw asStorageFull(err, 'starting the daemon')
  }
}
