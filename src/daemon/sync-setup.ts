// Wires device sync (DESIGN 3.4): the libp2p node in the owner's private network, the pull engine
// whose hooks are the ingest pipeline, and restore through the chain (on demand and in the
// background). Files received here keep origin 'peer' / 'chain' and are never re-registered.
import { join } from 'node:path'
import type { HomeLayout } from '../home.js'
import type { Logger } from '../log.js'
import type { HearthConfig } from '../config/types.js'
import { HearthError, isHearthError } from '../errors.js'
import { openKv, type HearthDatabase } from '../db/database.js'
import type { FileIndex } from '../db/file-index.js'
import type { StorageBackend } from '../storage/types.js'
import type { OwnerIdentity } from '../identity/identity.js'
import { deviceStamp } from '../identity/device.js'
import { privateNetworkKey } from '../protocol/keys.js'
import type { IngestPipeline } from '../ingest/pipeline.js'
import { removeRecords } from '../ingest/remove-scope.js'
import { createSyncNode, createSyncEngine, type SyncEngine, type SyncNode, type ReceiveOutcome } from '../sync/index.js'
import { restoreFromChain, type RestoreResult } from '../sync/chain-restore.js'
import type { ChainClient } from '../chain/client.js'

export interface SyncParts {
  engine: SyncEngine | null
  node: SyncNode | null
  notifyLocalChange (): void
  restore (onProgress?: (p: unknown) => void): Promise<RestoreResult>
  status (): Promise<unknown>
  stop (): Promise<void>
}

const REJECTED_CODES = new Set(['DECRYPTION_FAILED', 'SCOPE_MISMATCH', 'SCHEMA_VALIDATION_FAILED', 'INVALID_ENVELOPE', 'INVALID_JSON', 'JSON_TOO_DEEP', 'NUMBER_NOT_REPRESENTABLE', 'SCHEMA_SCOPE_MISMATCH', 'INVALID_SCOPE'])

export async function setUpSync (deps: {
  config: HearthConfig
  home: HomeLayout
  db: HearthDatabase
  index: FileIndex
  storage: StorageBackend
  identity: OwnerIdentity
  pipeline: IngestPipeline
  chain: ChainClient | null
  logger: Logger
  print: (line: string) => void
}): Promise<SyncParts> {
  const { config, home, db, index, storage, logger, pipeline } = deps
  const removalDeps = { dataDir: home.data, index, storage, logger }

  let engine: SyncEngine | null = null
  let node: SyncNode | null = null
  if (config.sync.enabled) {
    node = await createSyncNode({
      networkKey: privateNetworkKey(deps.identity.masterKey),
      peerKeyFile: join(home.identity, 'peer-key'),
      deviceStamp: await deviceStamp(home.root),
      listen: config.sync.listen,
      mdns: config.sync.mdns,
      bootstrapPeers: config.sync.peers,
      logger
    })
    engine = createSyncEngine({
      node,
      ownerAddress: deps.identity.ownerAddress,
      index,
      storage,
      state: openKv(db, 'sync'),
      logger,
      intervalMs: config.sync.intervalMs,
      receive: async (entry, ciphertext): Promise<ReceiveOutcome> => {
        try {
          return await pipeline.receive(ciphertext, { cid: entry.cid, schemaId: entry.schemaId, fileId: entry.fileId, origin: 'peer' })
        } catch (err) {
          if (isHearthError(err, 'SCHEMA_NOT_FOUND')) return 'waiting-schema'
          if (isHearthError(err) && REJECTED_CODES.has(err.code)) {
            logger.warn({ cid: entry.cid, errorCode: err.code, err: err.message }, 'file from a peer rejected')
            return 'rejected'
          }
          throw err
        }
      },
      applyTombstone: async (_entry, records) => { await removeRecords(removalDeps, records) },
      learnFileId: async (records, fileId) => {
        for (const r of records) if (r.fileId == null) await index.put({ ...r, fileId, state: 'registered', updatedAt: Date.now() })
      },
      onProgress: (p) => {
        // a round runs every sync.intervalMs and on every poke: routine, so debug unless it moved files
        const level = p.written > 0 || p.tombstones > 0 ? 'info' : 'debug'
        if (p.done || p.handled % 500 === 0) logger[level]({ sync: p }, p.done ? 'sync round finished' : 'sync progress')
      }
    })
    await engine.start()
    await node.start()
    deps.print(`sync      peer ${node.peerId} on ${node.multiaddrs().join(' ') || '(no address)'}`)
  }

  const restoreState = openKv<unknown>(db, 'chain-restore')
  let restoring: Promise<RestoreResult> | null = null
  let lastRestore: unknown = null
  const restore = async (onProgress?: (p: unknown) => void): Promise<RestoreResult> => {
    if (deps.chain === null) throw new HearthError('CONFIG_INVALID', 'restore needs a chain: set chain.preset (and its settings)')
    const chain = deps.chain
    // one round at a time: a background pickup and a `hearth restore` share it
    restoring ??= restoreFromChain({
      chain,
      owner: deps.identity.ownerAddress,
      index,
      storage,
      receive: async (ciphertext, meta) => await pipeline.receive(ciphertext, meta),
      state: restoreState,
      logger
    }, {
      onProgress: (p) => {
        lastRestore = { ...p, at: new Date().toISOString() }
        onProgress?.(p)
        if (p.done) logger[p.written > 0 || p.failed > 0 ? 'info' : 'debug']({ restore: p }, 'chain restore round finished')
      }
    })
      .finally(() => { restoring = null })
    return await restoring
  }

  // files another device registered reach this one through the chain too, even with no peer online
  let pickupTimer: NodeJS.Timeout | null = null
  if (deps.chain !== null) {
    pickupTimer = setInterval(() => {
      restore().catch((err: unknown) => logger.debug({ err: (err as Error).message }, 'background chain pickup failed'))
    }, Math.max(10_000, config.sync.intervalMs))
    pickupTimer.unref()
  }

  return {
    engine,
    node,
    notifyLocalChange: () => engine?.notifyLocalChange(),
    restore,
    async status () {
      if (engine === null || node === null) return { enabled: false, restore: lastRestore }
      return { enabled: true, peerId: node.peerId, problems: node.problems(), addresses: node.multiaddrs(), peers: await engine.peers(), waitingForSchema: await engine.waiting(), stats: engine.stats(), restore: lastRestore }
    },
    async stop () {
      if (pickupTimer !== null) clearInterval(pickupTimer)
      await restoring?.catch(() => {})
      if (engine !== null) await engine.stop()
      if (node !== null) await node.stop()
    }
  }
}
