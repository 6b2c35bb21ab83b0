// The daemon's parts behind `/health` (the second stage of the composition root, loaded by
// daemon.ts once the owner's listeners answer): the identity, the index, storage, the chain,
// schemas, sync, the upstream proxy, imports, builders and ingest, built and connected through
// plain dependency objects and the event hub and started in order on the daemon's service stack;
// then the owner's full API is served and the other listeners start.
import { join } from 'node:path'
import type { Logger } from '../log.js'
import type { ServiceStack } from '../lifecycle/service.js'
import { createHearthEvents } from '../lifecycle/events.js'
import { openKv } from '../db/database.js'
import { createDurableQueue } from '../db/queue.js'
import { createStorage } from '../storage/factory.js'
import { createPresenceCheck } from '../storage/presence-check.js'
import { privateNetworkKey } from '../protocol/keys.js'
import { deviceStamp } from '../identity/device.js'
import { chainNotConfigured, createChainRegistrar } from '../chain/registrar.js'
import { createIngestService } from '../ingest/service.js'
import { encryptionFor } from '../ingest/encryptor.js'
import { createSyncService } from '../sync/service.js'
import { createPinningService } from '../pinning/service.js'
import type { QueuedImageRequest } from '../proxy/index.js'
import { createLazyProxy } from '../proxy/lazy.js'
import { staleTempsService, databaseService, fileWritingService } from './foundation.js'
import { memorySettleService } from './memory-settle.js'
import { ensureIdentity } from './identity-setup.js'
import { chainConnection } from './chain-setup.js'
import { schemaService, schemaTrustFor } from './schemas-setup.js'
import { assistantsService, buildersService, dashboardService, importJobsService, ownerApi } from './api-setup.js'
import { assistantsFor } from './assistants-setup.js'
import { setUpBuilders } from '../builders/index.js'
import { createImportJobs } from '../connectors/import-jobs.js'
import { connectorDirs } from '../connectors/loader.js'
import { createDashboard } from '../ui/dashboard.js'
import { searchService } from './search-setup.js'
import type { OwnerListeners } from './owner-listeners.js'
import type { Daemon, DaemonOptions } from './daemon.js'

/** Largest export archive the dashboard accepts for an import. */
const MAX_IMPORT_BYTES = 8 * 1024 ** 3

export interface PartsDeps extends DaemonOptions {
  startedAt: number
  /** The daemon's stack: the home and the listeners are on it already. */
  services: ServiceStack
  listeners: OwnerListeners
  /** Told the owner's address as soon as the identity is loaded (for `/health` while starting). */
  onOwner: (address: string) => void
}

export async function startParts (deps: PartsDeps): Promise<Daemon> {
  const { home, config, services, listeners } = deps
  const logger: Logger = deps.logger
  const print = deps.print ?? (() => {})
  const env = deps.env ?? process.env
  const events = createHearthEvents(logger)
  // the background work of a start (the initial scan of the data folder, the check for lost
  // blocks, search catching up with the index) begins once every part is up: on a large home it
  // would otherwise share the main thread with the parts still starting
  let partsUp = (): void => {}
  const backgroundAfter = new Promise<void>((resolve) => { partsUp = resolve })
  const files = fileWritingService(home)
  const database = databaseService(home.index)
  const storage = createStorage(config.storage, home, logger, files)
  // none of these needs another's start (storage is handed the file writer, which starts on its
  // first write): the two LevelDBs and the block folder open on libuv's threads while the main
  // thread loads the storage's code and derives the identity, instead of one after another
  const [identity] = await Promise.all([
    ensureIdentity(home, print).then((loaded) => { deps.onOwner(loaded.ownerAddress); return loaded }),
    services.startTogether(staleTempsService(home, logger), files, database, storage)
  ])
  const { db, index } = database
  // the search opens its index before ingest starts: ingest's initial scan (a stat of every file
  // in the data folder) would otherwise share the main thread with it; its catch-up waits for the gate
  const search = await services.start(await searchService({ home, index, storage, masterKey: identity.masterKey, events, logger, backgroundAfter }))
  const connection = chainConnection({ config, home, db, storage, identity, logger, print })
  const chain = connection === null ? null : await services.start(connection)
  const schemas = await services.start(schemaService({ config, home, db, storage, logger, extraSources: chain !== null ? [chain.resolver] : [], trust: chain?.trust ?? schemaTrustFor(config, identity.ownerAddress) }))
  await services.start(chain === null
    ? chainNotConfigured()
    : createChainRegistrar({ db, index, client: chain.client, chainConfig: chain.config, owner: identity.ownerAddress, batchSize: config.chain.batchSize, schemas: schemas.registry, events, logger }))
  const encryption = encryptionFor({ workers: config.ingest.encryptionWorkers, maxFileBytes: Math.max(config.api.maxBodyBytes, config.ingest.maxFileBytes), logger })
  await services.start(encryption.service)
  const ingest = createIngestService({
    pipeline: { dataDir: home.data, index, storage, schemas: schemas.registry, validate: schemas.validate, masterKey: identity.masterKey, maxFileBytes: config.ingest.maxFileBytes, maxJsonValues: config.ingest.maxJsonValues, encryptor: encryption.encryptor, admission: encryption.admission },
    index,
    db,
    files,
    settings: { ...config.ingest, retryWaitingMs: config.schemas.retryWaitingMs },
    events,
    logger,
    print,
    backgroundAfter
  })
  const sync = await services.start(createSyncService({
    settings: config.sync,
    restoreSettings: config.restore,
    networkKey: privateNetworkKey(identity.masterKey),
    peerKeyFile: join(home.identity, 'peer-key'),
    deviceStamp: async () => await deviceStamp(home.root),
    ownerAddress: identity.ownerAddress,
    dataDir: home.data,
    index,
    storage,
    state: { sync: openKv(db, 'sync'), restore: openKv(db, 'chain-restore') },
    pipeline: ingest.pipeline,
    syncFiles: files.syncFiles,
    chain: chain?.client ?? null,
    events,
    logger,
    print
  }))
  const pinning = await services.start(createPinningService({ config: config.pinning, db, index, storage, events, logger }))
  const proxy = await services.start(createLazyProxy({
    config: config.upstream,
    home,
    kv: openKv(db, 'proxy'),
    queue: createDurableQueue<QueuedImageRequest>(db, 'upstream-images'),
    logger
  }))
  const importJobs = await services.start(importJobsService(createImportJobs({ dir: join(home.root, 'imports'), connectorDirs: connectorDirs(home), socketPath: home.socket, logger, maxBytes: MAX_IMPORT_BYTES })))
  const builders = await setUpBuilders({ config: config.builders, db, index, storage, dataDir: home.data, identity, chain: chain?.client ?? null, permissions: chain?.permissions ?? null, connectorDirs: connectorDirs(home), logger })
  await services.start(ingest)
  // lost block files are noticed at start (in the background: existence only) and every few hours
  await services.start(createPresenceCheck({
    page: async (after, limit) => {
      const records = await index.all({ limit, ...(after !== undefined ? { after } : {}) })
      const refs = records.flatMap((r) => r.cid !== null && (r.state === 'stored' || r.state === 'registered') ? [{ path: r.path, cid: r.cid }] : [])
      return { refs, last: records.length < limit ? null : records[records.length - 1]!.path }
    },
    present: async (cid) => await storage.present(cid),
    onReport: (report) => { storage.notePresence(report) },
    logger,
    backgroundAfter
  }))
  const assistants = assistantsFor({ config: config.mcp, db, index, storage, dataDir: home.data, masterKey: identity.masterKey, accessLog: builders.accessLog, connectorDirs: connectorDirs(home), search, logger })
  const dashboard = config.ui.enabled ? createDashboard({ listen: config.ui.listen, logger }) : null
  listeners.serve(ownerApi({
    startedAt: deps.startedAt,
    config,
    configSources: deps.configSources ?? {},
    configAmbient: deps.configAmbient ?? { env },
    home,
    env,
    ownerAddress: identity.ownerAddress,
    masterKey: identity.masterKey,
    index,
    storage,
    storageDamage: () => storage.damage(),
    pipeline: ingest.pipeline,
    schemas,
    sync,
    pinning,
    proxy,
    importJobs: importJobs.jobs,
    builders,
    assistants,
    dashboard,
    search,
    events,
    servicesStatus: async () => await services.status(),
    logger
  }))
  const buildersListener = await services.start(buildersService(builders, listeners.server, print))
  await services.start(dashboardService(dashboard, listeners.server, print))
  await services.start(assistantsService(assistants, listeners.server, print))
  await services.start(memorySettleService({ logger }))
  partsUp()

  print(`owner     ${identity.ownerAddress}`)
  print(`data      ${home.data}  (drop files into data/<scope>/)`)
  if (listeners.socketPath !== null) print(`socket    ${listeners.socketPath}`)
  print('ready')
  logger.info({ owner: identity.ownerAddress, socket: listeners.socketPath }, 'daemon ready')
  return {
    ownerAddress: identity.ownerAddress,
    socketPath: listeners.socketPath,
    tcpPort: listeners.tcpPort,
    buildersPort: buildersListener.port,
    scanned: ingest.scanned,
    stop: async () => { await services.stopAll() }
  }
}
