// Device sync as one service (docs/protocol.md §3.4): the libp2p node in the owner's private
// network and the pull engine when sync is enabled, and restore through the chain (on demand
// and in the background) whenever a chain is configured. Files received here keep origin
// 'peer' / 'chain' and are never re-registered. Local changes reach the engine as hub events.
import type { Logger } from '../log.js'
import type { Kv } from '../db/database.js'
import type { FileIndex } from '../db/file-index.js'
import type { FileRecord } from '../db/types.js'
import type { StorageBackend } from '../storage/types.js'
import type { Service } from '../lifecycle/service.js'
import type { HearthEventHub } from '../lifecycle/events.js'
import type { IngestPipeline } from '../ingest/pipeline.js'
import { removeRecords } from '../ingest/remove-scope.js'
import type { SyncNode } from './node.js'
import type { SyncEngine } from './engine.js'
import { peerReceiveHook } from './peer-receive.js'
import { createFileSyncer, type SyncFiles } from '../storage/deferred-sync.js'
import { createChainRestorer } from './restore.js'
import { restoreFetcher, type RestoreSettings } from './restore-sources.js'
import type { DeviceSources } from './device-source.js'
import { syncState } from './state.js'
import type { RestoreChain, RestoreResult } from './chain-restore.js'
import type { WorkerPool } from '../lifecycle/worker-pool.js'
import { CHUNK_SIZE } from '../storage/cid.js'
import type { PrepareHook } from './pull.js'

/**
 * Fetched files over one storage chunk are decrypted on a worker thread from the moment they are
 * read (their receive then finds the plaintext ready); smaller ones in-thread with their batch,
 * where the hand-over would cost about what the decryption does.
 */
const WORKER_DECRYPT_MIN_BYTES = CHUNK_SIZE + 1

export interface SyncSettings {
  enabled: boolean
  listen: string[]
  mdns: boolean
  peers: string[]
  /** Periodic pull round, and (at least 10 s) the background chain pickup. */
  intervalMs: number
}

export interface SyncServiceDeps {
  settings: SyncSettings
  /** Where restore looks for ciphertexts local storage lacks (gateways, deadlines, size bound). */
  restoreSettings: RestoreSettings
  /** From `privateNetworkKey(masterKey)`: peers outside the owner's private network cannot connect. */
  networkKey: Uint8Array
  peerKeyFile: string
  /** Binds the peer key to this machine and home (a copied key is replaced); read on start. */
  deviceStamp: () => Promise<string>
  ownerAddress: `0x${string}`
  dataDir: string
  index: FileIndex
  storage: StorageBackend
  /** The engine's key-value namespace and restore's. */
  state: { sync: Kv<unknown>; restore: Kv<unknown> }
  pipeline: Pick<IngestPipeline, 'receive' | 'journaled'> & Partial<Pick<IngestPipeline, 'prepareReceive'>>
  /** How a batch of received files is made durable: the daemon's one `syncfs` helper (else one of its own). */
  syncFiles?: SyncFiles
  /** Null when no chain is configured (restore then answers CONFIG_INVALID). */
  chain: RestoreChain | null
  events: HearthEventHub
  logger: Logger
  print?: (line: string) => void
}

/** What the sync and restore endpoints use. */
export interface SyncControl {
  /** Null while sync is disabled (or before start). */
  readonly engine: SyncEngine | null
  restore (): Promise<RestoreResult>
  status (): Promise<unknown>
}

export interface SyncService extends Service, SyncControl {
  readonly name: 'sync'
}

export function createSyncService (deps: SyncServiceDeps): SyncService {
  const { settings, index, logger } = deps
  let engine: SyncEngine | null = null
  let node: SyncNode | null = null
  /** The devices restore asks for a ciphertext (while sync runs). */
  let devices: DeviceSources | null = null
  /** Decrypts large received files off the main thread (while sync runs; idle workers end). */
  let decryption: WorkerPool | null = null
  let unsubscribe: Array<() => void> = []
  const restorer = createChainRestorer({
    chain: deps.chain,
    owner: deps.ownerAddress,
    index,
    ciphertexts: restoreFetcher({
      settings: deps.restoreSettings,
      storage: deps.storage,
      devices: () => devices?.list() ?? [],
      logger
    }),
    receive: async (ciphertext, meta) => await deps.pipeline.receive(ciphertext, meta),
    state: deps.state.restore,
    logger,
    pickupIntervalMs: settings.intervalMs
  })

  const startPeerSync = async (): Promise<void> => {
    // libp2p, the engine and the device sources load only when sync is enabled
    const [{ createSyncNode }, { createSyncEngine }, { createDeviceSources }, { createDecryptionWorkers, workerDecrypt }] = await Promise.all([
      import('./node.js'), import('./engine.js'), import('./device-source.js'), import('../ingest/decryptor.js')
    ])
    decryption = createDecryptionWorkers({ logger })
    await decryption.start()
    const decrypt = workerDecrypt(decryption)
    const prepareReceive = deps.pipeline.prepareReceive
    const prepare: PrepareHook | undefined = prepareReceive === undefined
      ? undefined
      : (entry, ciphertext) => ciphertext.byteLength >= WORKER_DECRYPT_MIN_BYTES ? prepareReceive(ciphertext, entry.schemaId, decrypt) : undefined
    node = await createSyncNode({
      networkKey: deps.networkKey,
      peerKeyFile: deps.peerKeyFile,
      deviceStamp: await deps.deviceStamp(),
      listen: settings.listen,
      mdns: settings.mdns,
      bootstrapPeers: settings.peers,
      logger
    })
    devices = createDeviceSources({ node, ownerAddress: deps.ownerAddress, index, state: syncState(deps.state.sync), readTimeoutMs: deps.restoreSettings.requestTimeoutMs })
    engine = createSyncEngine({
      node,
      ownerAddress: deps.ownerAddress,
      index,
      storage: deps.storage,
      state: deps.state.sync,
      logger,
      intervalMs: settings.intervalMs,
      // fetched small files are kept in storage's memory and journaled with their index records,
      // as a POST's are: one group-committed sync per batch of received files, and their blocks
      // and pins written by the journal's checkpoint (peer-receive.ts)
      storeUnsynced: deps.pipeline.journaled ? 'deferred' : true,
      receive: peerReceiveHook({
        receive: deps.pipeline.receive,
        journaled: deps.pipeline.journaled,
        syncFiles: deps.syncFiles ?? createFileSyncer(),
        writeDeferred: async () => { await deps.storage.writeDeferred?.() },
        logger,
        onReceived: (file) => deps.events.emit('peer.file.received', file)
      }),
      ...(prepare !== undefined ? { prepare, expectLarge: () => { decryption?.warm() } } : {}),
      applyTombstone: async (_entry, records) => { await removeRecords({ dataDir: deps.dataDir, index, storage: deps.storage, logger }, records) },
      learnFileId: async (records, fileId) => { await learnFileId(index, records, fileId) },
      onProgress: (p) => {
        // a round runs every sync.intervalMs and on every poke: routine, so debug unless it moved files
        const level = p.written > 0 || p.tombstones > 0 ? 'info' : 'debug'
        if (p.done || p.handled % 500 === 0) logger[level]({ sync: p }, p.done ? 'sync round finished' : 'sync progress')
      }
    })
    const notify = (): void => { engine?.notifyLocalChange() }
    unsubscribe = [deps.events.on('file.indexed', notify), deps.events.on('scope.deleted', notify)]
    await engine.start()
    await node.start()
    deps.print?.(`sync      peer ${node.peerId} on ${node.multiaddrs().join(' ') || '(no address)'}`)
  }

  const stop = async (): Promise<void> => {
    for (const off of unsubscribe) off()
    unsubscribe = []
    await restorer.stop()
    await devices?.close()
    devices = null
    if (engine !== null) await engine.stop()
    if (node !== null) await node.stop()
    await decryption?.stop()
    engine = null
    node = null
    decryption = null
  }

  return {
    name: 'sync',
    get engine () { return engine },
    restore: async () => await restorer.restore(),
    async start () {
      if (settings.enabled) await startPeerSync()
      // files another device registered reach this one through the chain too, even with no peer online
      restorer.startPickup()
    },
    stop,
    async status () {
      if (engine === null || node === null) return { enabled: false, restore: restorer.last() }
      return { enabled: true, peerId: node.peerId, problems: node.problems(), addresses: node.multiaddrs(), peers: await engine.peers(), waitingForSchema: await engine.waiting(), stats: engine.stats(), decryptionWorkers: await decryption?.status(), restore: restorer.last() }
    }
  }
}

/** A file id a peer knows for a file held here without one: the file is registered. */
async function learnFileId (index: Pick<FileIndex, 'put'>, records: readonly FileRecord[], fileId: string): Promise<void> {
  for (const r of records) if (r.fileId == null) await index.put({ ...r, fileId, state: 'registered', updatedAt: Date.now() })
}
