// The composition root: builds every part from the configuration and the home folder, connects
// them through plain dependency objects and the event hub, and starts them as a list of services
// in order (stopped in reverse, also when a later one fails to start). Nothing below this file
// reaches for globals; this is the one place that knows them all.
import { join } from 'node:path'
import type { HomeLayout } from '../home.js'
import { asStorageFull } from '../errors.js'
import type { Logger } from '../log.js'
import type { HearthConfig } from '../config/types.js'
import type { ConfigSource, ConfigSources } from '../config/resolve.js'
import { ServiceStack } from '../lifecycle/service.js'
import { createHearthEvents } from '../lifecycle/events.js'
import { openKv } from '../db/database.js'
import { createDurableQueue } from '../db/queue.js'
import { createStorage } from '../storage/factory.js'
import { privateNetworkKey } from '../protocol/keys.js'
import { deviceStamp } from '../identity/device.js'
import { chainNotConfigured, createChainRegistrar } from '../chain/registrar.js'
import { createIngestService } from '../ingest/service.js'
import { encryptionFor } from '../ingest/encryptor.js'
import type { ScanProgress } from '../ingest/scanner.js'
import { createSyncService } from '../sync/service.js'
import { createProxy, type QueuedImageRequest } from '../proxy/index.js'
import { homeService, databaseService } from './foundation.js'
import { ensureIdentity } from './identity-setup.js'
import { chainConnection } from './chain-setup.js'
import { schemaService, schemaTrustFor } from './schemas-setup.js'
import { buildersService, dashboardService, importJobsService, ownerApi } from './api-setup.js'
import { setUpBuilders } from '../builders/index.js'
import { createImportJobs } from '../connectors/import-jobs.js'
import { connectorDirs } from '../connectors/loader.js'
import { createDashboard } from '../ui/dashboard.js'
import { resolveLoopback } from '../api/loopback.js'

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
  const events = createHearthEvents(logger)
  const services = new ServiceStack(logger)
  try {
    // judged by what it resolves to, before anything starts (a name for 0.0.0.0 is CONFIG_INVALID)
    if (config.api.tcp.enabled) await resolveLoopback(config.api.tcp.host, 'api.tcp.host')
    await services.start(homeService(home, logger))
    const identity = await ensureIdentity(home, print)
    const { db, index } = await services.start(databaseService(home.index))
    const storage = await services.start(createStorage(config.storage, home, logger))
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
      settings: { ...config.ingest, retryWaitingMs: config.schemas.retryWaitingMs },
      events,
      logger,
      print
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
      chain: chain?.client ?? null,
      events,
      logger,
      print
    }))
    const proxy = await services.start(createProxy({
      config: config.upstream,
      home,
      kv: openKv(db, 'proxy'),
      queue: createDurableQueue<QueuedImageRequest>(db, 'upstream-images'),
      logger
    }))
    const importJobs = await services.start(importJobsService(createImportJobs({ dir: join(home.root, 'imports'), connectorDirs: connectorDirs(home), socketPath: home.socket, logger, maxBytes: MAX_IMPORT_BYTES })))
    const builders = setUpBuilders({ config: config.builders, db, index, storage, dataDir: home.data, identity, chain: chain?.client ?? null, connectorDirs: connectorDirs(home), logger })
    await services.start(ingest)
    const dashboard = config.ui.enabled ? createDashboard({ listen: config.ui.listen, logger }) : null
    const api = await services.start(ownerApi({
      config,
      configSources: opts.configSources ?? {},
      configAmbient: opts.configAmbient ?? { env },
      home,
      env,
      ownerAddress: identity.ownerAddress,
      masterKey: identity.masterKey,
      index,
      storage,
      pipeline: ingest.pipeline,
      schemas,
      sync,
      proxy,
      importJobs: importJobs.jobs,
      builders,
      dashboard,
      events,
      servicesStatus: async () => await services.status(),
      logger,
      print
    }))
    const buildersListener = await services.start(buildersService(builders, api.server, print))
    await services.start(dashboardService(dashboard, api.server, print))

    print(`owner     ${identity.ownerAddress}`)
    print(`data      ${home.data}  (drop files into data/<scope>/)`)
    if (api.socketPath !== null) print(`socket    ${api.socketPath}`)
    print('ready')
    logger.info({ owner: identity.ownerAddress, socket: api.socketPath }, 'daemon ready')
    return {
      ownerAddress: identity.ownerAddress,
      socketPath: api.socketPath,
      tcpPort: api.tcpPort,
      buildersPort: buildersListener.port,
      scanned: ingest.scanned,
      stop: async () => { await services.stopAll() }
    }
  } catch (err) {
    await services.stopAll()
    // a full disk fails a start anywhere (lock, index, blocks): say so, not which write noticed
    throw asStorageFull(err, 'starting the daemon')
  }
}
