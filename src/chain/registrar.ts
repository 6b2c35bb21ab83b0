// The chain registrar: which files this device registers, how a confirmation patches their index
// records, and how a schema registered on chain replaces its local id across the index
// (docs/protocol.md §2.5, §3.1 step 5, §3.2). It listens for stored files and added schemas on
// the event hub while started; its queues are durable, so nothing is lost across a restart.
import type { Logger } from '../log.js'
import { openKv, type HearthDatabase } from '../db/database.js'
import { createDurableQueue } from '../db/queue.js'
import { Mutex } from '../db/mutex.js'
import type { FileIndex } from '../db/file-index.js'
import type { FileRecord } from '../db/types.js'
import { isLocalSchemaId, type ResolvedSchema } from '../registry/types.js'
import type { Service } from '../lifecycle/service.js'
import type { HearthEventHub } from '../lifecycle/events.js'
import type { ChainClient } from './client.js'
import type { ChainConfig } from './config.js'
import { createRegistrationWorker, type RegistrationCallbacks, type RegistrationJob, type RegistrationWorker } from './registration-queue.js'
import { createSchemaRegistration, type SchemaRegistration, type SchemaRegistrationJob } from './schema-registration.js'

export interface RegistrarDeps {
  db: HearthDatabase
  index: FileIndex
  client: ChainClient
  chainConfig: ChainConfig
  owner: `0x${string}`
  batchSize: number
  /** The local schema registry: its cache learns chain ids, and queued files name their schema. */
  schemas: {
    replaceSchemaId (localId: string, chainId: string): Promise<unknown>
    byId (id: string): Promise<ResolvedSchema | null>
  }
  events: HearthEventHub
  logger: Logger
}

export interface ChainRegistrar extends Service {
  readonly name: 'chain'
  /** Queue a file's registration when it is one this device registers (idempotent per path). */
  enqueueFile (record: FileRecord): void
  /** Queue a local schema's registration (once per schema while running). */
  enqueueSchema (schema: ResolvedSchema): void
}

/** A file is registered by the device that wrote it, once, after it is stored with a schema. */
export function isRegistrable (record: FileRecord): boolean {
  return record.cid !== null && record.schemaId !== null && record.origin === 'local' && record.state === 'stored' && record.fileId == null
}

/** The record after its registration was confirmed: registered, and naming the chain schema id. */
export function confirmedRecord (current: FileRecord, fileId: string, chainSchemaId: string | null): FileRecord {
  const schemaId = current.schemaId !== null && isLocalSchemaId(current.schemaId) ? chainSchemaId : current.schemaId
  return { ...current, fileId, state: 'registered', schemaId }
}

export function createChainRegistrar (deps: RegistrarDeps): ChainRegistrar {
  const { db, index, client, logger } = deps
  const network = `${deps.chainConfig.chainId}`
  const records = recordPatcher(index)

  const schemaRegistration: SchemaRegistration = createSchemaRegistration({
    queue: createDurableQueue<SchemaRegistrationJob>(db, `schema-registrations-${network}`),
    state: openKv(db, `schema-registrations-${network}`),
    chain: client,
    logger,
    onSchemaRegistered: async (localId, chainId) => {
      await deps.schemas.replaceSchemaId(localId, chainId)
      // "everywhere": files already stored or waiting under the local id now name the chain id
      for await (const r of index.each()) {
        if (r.schemaId === localId) await records.update(r.path, (current) => current.schemaId === localId ? { ...current, schemaId: chainId } : current)
      }
      logger.info({ localId, chainId }, 'schema registered on chain')
      deps.events.emit('schema.registered', { localId, chainId })
    }
  })
  const chainIdOf = async (schemaId: string | null): Promise<string | null> =>
    schemaId !== null && isLocalSchemaId(schemaId) ? (await schemaRegistration.chainIdFor(schemaId)) ?? schemaId : schemaId

  const callbacks: RegistrationCallbacks = {
    onRegistered: async (path, fileId) => { await records.update(path, (r) => ({ ...r, fileId })) },
    onConfirmed: async (path, fileId) => {
      const chainSchemaId = await chainIdOf((await index.get(path))?.schemaId ?? null)
      await records.update(path, (current) => confirmedRecord(current, fileId, chainSchemaId))
    },
    isStillWanted: async (path) => (await index.get(path)) !== null,
    onParked: async (path, error) => {
      logger.warn({ path, errorCode: error.code, err: error.message }, 'registration rejected by the contract')
      await records.update(path, (r) => ({ ...r, errorCode: error.code, reasons: [`registration rejected: ${error.message}`] }))
    },
    resolveSchemaId: async (schemaId) => await schemaRegistration.chainIdFor(schemaId)
  }
  const queue = createDurableQueue<RegistrationJob>(db, `registrations-${network}`)
  const worker: RegistrationWorker = createRegistrationWorker({
    queue,
    inFlight: openKv(db, `registrations-in-flight-${network}`),
    chain: client,
    owner: deps.owner,
    confirmations: deps.chainConfig.confirmations,
    batchSize: deps.batchSize,
    logger,
    callbacks
  })

  const requestedSchemas = new Set<string>()
  const enqueueSchema = (schema: ResolvedSchema): void => {
    if (requestedSchemas.has(schema.id)) return
    requestedSchemas.add(schema.id)
    schemaRegistration.add({ localId: schema.id, name: schema.name, dialect: schema.dialect, definitionUrl: schema.definitionUrl })
      .catch((err: unknown) => { requestedSchemas.delete(schema.id); logger.error({ err, schema: schema.id }, 'could not queue schema registration') })
  }
  const enqueueFile = (record: FileRecord): void => {
    if (!isRegistrable(record)) return
    const job: RegistrationJob = { url: `ipfs://${record.cid!}`, schemaId: record.schemaId!, path: record.path }
    queue.enqueue(record.path, job).then(() => worker.kick(), (err: unknown) => logger.error({ err, path: record.path }, 'could not queue registration'))
    // a file can only be registered with an on-chain schema id: register the schema it uses
    if (isLocalSchemaId(record.schemaId!)) {
      void deps.schemas.byId(record.schemaId!).then((schema) => { if (schema !== null && isLocalSchemaId(schema.id)) enqueueSchema(schema) })
        .catch((err: unknown) => logger.warn({ err, schemaId: record.schemaId }, 'schema of a queued file not found'))
    }
  }

  let unsubscribe: Array<() => void> = []
  return {
    name: 'chain',
    enqueueFile,
    enqueueSchema,
    async start () {
      // files stored while no chain was configured (or before a crash) join the queue; enqueue
      // is idempotent per path, so this is safe on every start
      for await (const r of index.each({ state: 'stored' })) enqueueFile(r)
      unsubscribe = [
        deps.events.on('file.stored', enqueueFile),
        deps.events.on('schema.added', (schema) => { if (isLocalSchemaId(schema.id)) enqueueSchema(schema) })
      ]
      schemaRegistration.start()
      worker.start()
    },
    async stop () {
      for (const off of unsubscribe) off()
      unsubscribe = []
      await worker.stop()
      await schemaRegistration.stop()
    },
    async status () {
      const [health, files, schemas] = await Promise.all([client.health(), worker.status(), schemaRegistration.status()])
      return { network: { chainId: deps.chainConfig.chainId, rpcUrl: deps.chainConfig.rpcUrl, ...health }, registrations: files, schemaRegistrations: schemas }
    }
  }
}

/** Registration callbacks and the schema-id rewrite both read-modify-write records: one at a time. */
function recordPatcher (index: FileIndex): { update (path: string, patch: (r: FileRecord) => FileRecord): Promise<void> } {
  const writes = new Mutex()
  return {
    async update (path, patch) {
      await writes.run(async () => {
        const r = await index.get(path)
        if (r !== null) await index.put({ ...patch(r), updatedAt: Date.now() })
      })
    }
  }
}

/** Stands in for the registrar when no chain is configured: registrations wait in their queue. */
export function chainNotConfigured (): Service {
  return {
    name: 'chain',
    async start () {},
    async stop () {},
    async status () { return { configured: false, note: 'no chain configured: registrations wait until one is' } }
  }
}
