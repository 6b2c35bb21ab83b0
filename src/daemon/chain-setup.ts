// Connects the daemon to the registry contracts (DESIGN 2.5, 3.1 step 5, 3.2): the client, the
// chain schema resolver, the durable file-registration worker and the schema-registration job.
// With no chain configured none of this exists and registrations simply wait in their queue.
import { join } from 'node:path'
import type { HomeLayout } from '../home.js'
import type { Logger } from '../log.js'
import type { HearthConfig } from '../config/types.js'
import { HearthError } from '../errors.js'
import { openKv, type HearthDatabase } from '../db/database.js'
import { createDurableQueue } from '../db/queue.js'
import { Mutex } from '../db/mutex.js'
import type { FileIndex } from '../db/file-index.js'
import type { FileRecord } from '../db/types.js'
import type { StorageBackend } from '../storage/types.js'
import { isLocalSchemaId, type ResolvedSchema } from '../registry/types.js'
import type { SchemaTrust } from '../registry/trust.js'
import { definitionFetcherFor, schemaTrustFor } from './schemas-setup.js'
import { parseSchemaDefinition } from '../registry/definition.js'
import { loadOrCreateTxKey } from '../identity/tx-key.js'
import type { OwnerIdentity } from '../identity/identity.js'
import {
  createChainClient, createChainSchemaResolver, createRegistrationWorker, createSchemaRegistration,
  detectMulticall, resolveChainConfig, startDevChain,
  type ChainClient, type ChainConfig, type ChainSchemaResolver, type DevChain, type RegistrationJob,
  type RegistrationWorker, type SchemaRegistration, type SchemaRegistrationJob
} from '../chain/index.js'

export interface ChainParts {
  client: ChainClient
  resolver: ChainSchemaResolver
  config: ChainConfig
  /** Whose schemas may become a scope's schema (the owner, this daemon's tx key, configured owners). */
  trust: SchemaTrust
  /** Wire the registration side once the index and schema registry exist. */
  startWorkers (deps: WorkerDeps): Promise<ChainWorkers>
  stop (): Promise<void>
}

export interface WorkerDeps {
  index: FileIndex
  /** Replace a local schema id by its chain id in the schema cache. */
  replaceSchemaId (localId: string, chainId: string): Promise<unknown>
  schemaById (id: string): Promise<ResolvedSchema | null>
}

export interface ChainWorkers {
  enqueueFile (record: FileRecord): void
  enqueueSchema (schema: ResolvedSchema): void
  status (): Promise<unknown>
  stop (): Promise<void>
}

async function chainConfigFrom (config: HearthConfig, dev: DevChain | null): Promise<ChainConfig> {
  const c = config.chain
  if (dev !== null) return { ...dev.config, confirmations: c.confirmations, pollIntervalMs: c.pollIntervalMs }
  const preset = c.preset === 'vana' || c.preset === 'moksha' ? c.preset : undefined
  const overrides = Object.fromEntries(Object.entries({
    rpcUrl: c.rpcUrl,
    chainId: c.chainId,
    dataRegistry: c.dataRegistry,
    dataRefinerRegistry: c.dataRefinerRegistry,
    multicall: c.multicall,
    dataPortabilityGrantees: c.dataPortabilityGrantees,
    dataPortabilityPermissions: c.dataPortabilityPermissions
  }).filter(([, v]) => v !== null))
  const resolved = resolveChainConfig({ ...(preset !== undefined ? { preset } : {}), ...overrides, confirmations: c.confirmations, pollIntervalMs: c.pollIntervalMs })
  // adopting the canonical Multicall3 needs the network; offline the config is used as it is
  return c.multicall === null ? await detectMulticall(resolved).catch(() => resolved) : resolved
}

export async function setUpChain (deps: {
  config: HearthConfig
  home: HomeLayout
  db: HearthDatabase
  storage: StorageBackend
  identity: OwnerIdentity
  logger: Logger
  print: (line: string) => void
}): Promise<ChainParts | null> {
  const { config, home, db, logger } = deps
  if (config.chain.preset === null) return null
  let dev: DevChain | null = null
  if (config.chain.preset === 'dev') {
    dev = await startDevChain({ logger, stateDir: join(home.root, 'devchain') })
    deps.print(`dev chain ${dev.rpcUrl} (chain id ${dev.chainId}); DataRegistry ${dev.contracts.dataRegistry}`)
  }
  try {
    const chainConfig = await chainConfigFrom(config, dev)
    const txKey = await loadOrCreateTxKey(home)
    if (dev !== null) {
      // the daemon's own key pays for registrations; on the dev chain it is simply given funds
      await dev.rpc('anvil_setBalance', [txKey.address, '0x56BC75E2D63100000'])
      // revoking a grant is the grantor's own transaction (docs/protocol.md §3.8)
      if (deps.identity.ownerPrivateKey !== undefined) await dev.rpc('anvil_setBalance', [deps.identity.ownerAddress, '0x56BC75E2D63100000'])
    }
    const ownerKey = config.chain.signer === 'owner' ? deps.identity.ownerPrivateKey : undefined
    if (config.chain.signer === 'owner' && ownerKey === undefined) {
      throw new HearthError('CONFIG_INVALID', 'chain.signer is "owner" but this identity holds only the master signature, not the wallet key')
    }
    const client = createChainClient({ config: chainConfig, txPrivateKey: txKey.privateKey, ...(ownerKey !== undefined ? { ownerPrivateKey: ownerKey } : {}), logger, maxBatchSize: config.chain.batchSize })
    const trust = schemaTrustFor(config, deps.identity.ownerAddress, txKey.address)
    const resolver = createChainSchemaResolver({
      chain: client,
      trust,
      fetchDefinition: definitionFetcherFor(config, deps.storage),
      parseDefinition: (bytes) => parseSchemaDefinition(bytes),
      // schema ids are per network: one namespace per chain id and registry address
      kv: openKv(db, `chain-schemas-${chainConfig.chainId}-${chainConfig.dataRefinerRegistry.toLowerCase()}`),
      logger
    })
    return {
      client,
      resolver,
      config: chainConfig,
      trust,
      startWorkers: async (w) => await startWorkers({ ...deps, client, chainConfig }, w),
      async stop () { if (dev !== null) await dev.stop() }
    }
  } catch (err) {
    if (dev !== null) await dev.stop()
    throw err
  }
}

async function startWorkers (deps: { config: HearthConfig, db: HearthDatabase, identity: OwnerIdentity, logger: Logger, client: ChainClient, chainConfig: ChainConfig }, w: WorkerDeps): Promise<ChainWorkers> {
  const { db, logger, client } = deps
  const network = `${deps.chainConfig.chainId}`
  // registration callbacks and the schema-id rewrite both read-modify-write records: one at a time
  const writes = new Mutex()
  const update = async (path: string, patch: (r: FileRecord) => FileRecord): Promise<void> => {
    await writes.run(async () => {
      const r = await w.index.get(path)
      if (r !== null) await w.index.put({ ...patch(r), updatedAt: Date.now() })
    })
  }

  const schemaRegistration: SchemaRegistration = createSchemaRegistration({
    queue: createDurableQueue<SchemaRegistrationJob>(db, `schema-registrations-${network}`),
    state: openKv(db, `schema-registrations-${network}`),
    chain: client,
    logger,
    onSchemaRegistered: async (localId, chainId) => {
      await w.replaceSchemaId(localId, chainId)
      // "everywhere": files already stored or waiting under the local id now name the chain id
      for (let after: string | undefined; ;) {
        const page = await w.index.all({ limit: 500, ...(after !== undefined ? { after } : {}) })
        if (page.length === 0) break
        for (const r of page) if (r.schemaId === localId) await update(r.path, (current) => current.schemaId === localId ? { ...current, schemaId: chainId } : current)
        after = page[page.length - 1]!.path
      }
      logger.info({ localId, chainId }, 'schema registered on chain')
    }
  })

  const queue = createDurableQueue<RegistrationJob>(db, `registrations-${network}`)
  const worker: RegistrationWorker = createRegistrationWorker({
    queue,
    inFlight: openKv(db, `registrations-in-flight-${network}`),
    chain: client,
    owner: deps.identity.ownerAddress,
    confirmations: deps.chainConfig.confirmations,
    batchSize: deps.config.chain.batchSize,
    logger,
    callbacks: {
      onRegistered: async (path, fileId) => { await update(path, (r) => ({ ...r, fileId })) },
      onConfirmed: async (path, fileId) => {
        const chainSchemaId = async (id: string | null): Promise<string | null> => id !== null && isLocalSchemaId(id) ? (await schemaRegistration.chainIdFor(id)) ?? id : id
        const r = await w.index.get(path)
        const schemaId = await chainSchemaId(r?.schemaId ?? null)
        await update(path, (current) => ({ ...current, fileId, state: 'registered', schemaId: current.schemaId !== null && isLocalSchemaId(current.schemaId) ? schemaId : current.schemaId }))
      },
      isStillWanted: async (path) => (await w.index.get(path)) !== null,
      onParked: async (path, error) => {
        logger.warn({ path, errorCode: error.code, err: error.message }, 'registration rejected by the contract')
        await update(path, (r) => ({ ...r, errorCode: error.code, reasons: [`registration rejected: ${error.message}`] }))
      },
      resolveSchemaId: async (schemaId) => await schemaRegistration.chainIdFor(schemaId)
    }
  })
  const requestedSchemas = new Set<string>()
  const enqueueSchema = (schema: ResolvedSchema): void => {
    if (requestedSchemas.has(schema.id)) return
    requestedSchemas.add(schema.id)
    schemaRegistration.add({ localId: schema.id, name: schema.name, dialect: schema.dialect, definitionUrl: schema.definitionUrl })
      .catch((err: unknown) => { requestedSchemas.delete(schema.id); logger.error({ err, schema: schema.id }, 'could not queue schema registration') })
  }
  const enqueueFile = (record: FileRecord): void => {
    if (record.cid === null || record.schemaId === null || record.origin !== 'local' || record.state !== 'stored' || record.fileId != null) return
    const job: RegistrationJob = { url: `ipfs://${record.cid}`, schemaId: record.schemaId, path: record.path }
    queue.enqueue(record.path, job).then(() => worker.kick(), (err: unknown) => logger.error({ err, path: record.path }, 'could not queue registration'))
    // a file can only be registered with an on-chain schema id: register the schema it uses
    if (isLocalSchemaId(record.schemaId)) {
      void w.schemaById(record.schemaId).then((schema) => { if (schema !== null && isLocalSchemaId(schema.id)) enqueueSchema(schema) })
        .catch((err: unknown) => logger.warn({ err, schemaId: record.schemaId }, 'schema of a queued file not found'))
    }
  }
  // files stored while no chain was configured (or before a crash) join the queue; enqueue is
  // idempotent per path, so this is safe on every start
  for (let after: string | undefined; ;) {
    const page = await w.index.byState('stored', { limit: 500, ...(after !== undefined ? { after } : {}) })
    if (page.length === 0) break
    for (const r of page) enqueueFile(r)
    after = page[page.length - 1]!.path
  }
  schemaRegistration.start()
  worker.start()

  return {
    enqueueFile,
    enqueueSchema,
    async status () {
      const [health, files, schemas] = await Promise.all([client.health(), worker.status(), schemaRegistration.status()])
      return { network: { chainId: deps.chainConfig.chainId, rpcUrl: deps.chainConfig.rpcUrl, ...health }, registrations: files, schemaRegistrations: schemas }
    },
    async stop () {
      await worker.stop()
      await schemaRegistration.stop()
    }
  }
}
