// A whole sync "device" for tests and the sync bench, built from real components: a Hearth
// database with a real file index, real embedded IPFS storage, real OpenPGP, a real libp2p node on
// 127.0.0.1 and the sync engine. Since the daemon's pipeline is not what is under test here, the
// receive and tombstone hooks are implemented with the same real pieces the daemon uses: schemaId →
// scope from a fixed table, scope key, decrypt, parse the envelope, write data/{scope}/<name>.json,
// index it with origin 'peer' and the received CID.
import { createHash } from 'node:crypto'
import { lstat, readFile, unlink } from 'node:fs/promises'
import { join } from 'node:path'
import { openDatabase, openKv, type HearthDatabase } from '../../src/db/database.js'
import { openFileIndex, type FileIndex } from '../../src/db/file-index.js'
import type { FileRecord } from '../../src/db/types.js'
import { writeNewFile } from '../../src/ingest/atomic-write.js'
import { silentLogger, type Logger } from '../../src/log.js'
import { decryptEnvelopeBytes, encryptEnvelopeBytes } from '../../src/protocol/encryption.js'
import { buildEnvelope, collectedAtToFileName, parseEnvelopeBytes, serializeEnvelope } from '../../src/protocol/envelope.js'
import { masterKeyFromSignature, privateNetworkKey, scopeKeyHex, signMasterKey, type MasterKey } from '../../src/protocol/keys.js'
import { createEmbeddedStorage } from '../../src/storage/embedded.js'
import type { StorageBackend } from '../../src/storage/types.js'
import { mtimeMsOf } from '../../src/storage/file-times.js'
import { createSyncEngine, type SyncEngine, type SyncEngineOptions, type ReceiveOutcome } from '../../src/sync/engine.js'
import { createSyncNode, type SyncNode } from '../../src/sync/node.js'

export const OWNER_KEY = '0x0123456789abcdef0123456789abcdef0123456789abcdef0123456789abcdef'
export const OTHER_OWNER_KEY = '0x8b3a350cf5c34c9194ca85829a2df0ec3153be0318b5e2d3348e872092edffba'

/** The schema table every test device shares (the daemon resolves this through the registry). */
export const TEST_SCHEMAS: Record<string, string> = {
  1: 'instagram.profile',
  2: 'spotify.savedTracks',
  3: 'youtube.watchLater'
}

export function schemaIdOf (scope: string): string {
  const id = Object.entries(TEST_SCHEMAS).find(([, s]) => s === scope)?.[0]
  if (id === undefined) throw new Error(`no test schema for ${scope}`)
  return id
}

export async function testOwner (privateKey: string = OWNER_KEY): Promise<MasterKey> {
  return await masterKeyFromSignature(await signMasterKey(privateKey as `0x${string}`))
}

export function sha256Hex (bytes: Uint8Array): string {
  return createHash('sha256').update(bytes).digest('hex')
}

export interface DeviceOptions {
  /** Home-like folder of this device (db, blocks, data, peer key). */
  dir: string
  owner: MasterKey
  listen?: string[]
  bootstrapPeers?: string[]
  mdns?: boolean
  mdnsIntervalMs?: number
  /** schemaId → scope this device knows; default TEST_SCHEMAS. Mutable: tests add schemas later. */
  schemas?: Record<string, string>
  engine?: Partial<Pick<SyncEngineOptions, 'intervalMs' | 'pageSize' | 'window' | 'batch' | 'readTimeoutMs' | 'idleTimeoutMs' | 'pokeDebounceMs' | 'onProgress' | 'expectLarge'>>
  /** CIDs whose receive fails as a disk would (a transient error), after this many ms. */
  receiveFails?: Map<string, number>
  logger?: Logger
}

export interface TestDevice {
  dir: string
  dataDir: string
  db: HearthDatabase
  index: FileIndex
  storage: StorageBackend
  node: SyncNode
  engine: SyncEngine
  schemas: Record<string, string>
  /** Every CID this device's storage was asked for (what it served to peers, mostly). */
  gets: string[]
  /** Every ciphertext handed to receive, in order. */
  received: string[]
  /** Every CID whose pin storage was asked to drop. */
  unpinned: string[]
  /** Wall time spent inside the receive hook (decrypt, parse, write, index), ms. */
  readonly receiveMs: number
  /** Wall time spent in storage.add and storage.get, ms. */
  readonly storageMs: { add: number; get: number }
  /** Ingest one file written on this device, like the daemon's pipeline does. */
  writeLocal (scope: string, data: Record<string, unknown>, collectedAt?: string): Promise<FileRecord>
  /** Delete one indexed file, like DELETE /v1/data does for each file of a scope. */
  deleteLocal (path: string): Promise<void>
  /** Addresses of this device's node (with /p2p/<id>). */
  addrs (): string[]
  stop (): Promise<void>
}

function countingStorage (inner: StorageBackend, gets: string[], ms: { add: number; get: number }, unpinned: string[]): StorageBackend {
  const timed = async <T>(kind: 'add' | 'get', fn: () => Promise<T>): Promise<T> => {
    const started = performance.now()
    try { return await fn() } finally { ms[kind] += performance.now() - started }
  }
  return {
    kind: inner.kind,
    add: async (bytes, o) => await timed('add', async () => await inner.add(bytes, o)),
    pin: async (cid, o) => await inner.pin(cid, o),
    get: async (cid, o) => { gets.push(cid); return await timed('get', async () => await inner.get(cid, o)) },
    has: async (cid) => await inner.has(cid),
    unpin: async (cid) => { unpinned.push(cid); await inner.unpin(cid) },
    health: async () => await inner.health(),
    stop: async () => await inner.stop()
  }
}

export async function startDevice (opts: DeviceOptions): Promise<TestDevice> {
  const logger = opts.logger ?? silentLogger()
  const dataDir = join(opts.dir, 'data')
  const db = await openDatabase(join(opts.dir, 'index'))
  const index = await openFileIndex({ db })
  const gets: string[] = []
  const received: string[] = []
  const unpinned: string[] = []
  const timing = { receiveMs: 0 }
  const storageMs = { add: 0, get: 0 }
  const storage = countingStorage(await createEmbeddedStorage({ blocksDir: join(opts.dir, 'ipfs', 'blocks'), datastoreDir: join(opts.dir, 'ipfs', 'datastore') }), gets, storageMs, unpinned)
  const schemas = opts.schemas ?? { ...TEST_SCHEMAS }
  const master = opts.owner.masterKey

  async function indexFile (path: string, scope: string, collectedAt: string, schemaId: string, cid: string, plaintext: Uint8Array, encryptedSize: number, origin: FileRecord['origin'], fileId: string | null): Promise<FileRecord> {
    const st = await lstat(join(dataDir, path), { bigint: true })
    const record: FileRecord = {
      path, scope, collectedAt, schemaId, cid, size: plaintext.byteLength, encryptedSize,
      sha256: sha256Hex(plaintext), mtimeMs: mtimeMsOf(st), state: fileId !== null ? 'registered' : 'stored',
      fileId, origin, updatedAt: Date.now()
    }
    return await index.put(record)
  }

  /**
   * Writes plaintext under the scope, next to an existing different file if the name is taken.
   * The same bytes already on disk are 'exists' when indexed, and are indexed now when not: a
   * device killed between writing a file and indexing it must finish the job on the next try.
   */
  async function place (scope: string, collectedAt: string, plaintext: Uint8Array, cid: string): Promise<string | 'exists'> {
    const base = collectedAtToFileName(collectedAt)
    for (const name of [base, base.replace(/\.json$/, `.${cid.slice(-12)}.json`)]) {
      const path = `${scope}/${name}`
      if ((await writeNewFile(join(dataDir, path), plaintext)).written) return path
      const current = await readFile(join(dataDir, path)).catch(() => null)
      if (current !== null && sha256Hex(current) === sha256Hex(plaintext)) return (await index.get(path)) === null ? path : 'exists'
    }
    throw new Error(`no free name for ${scope} ${collectedAt}`)
  }

  async function receive (entry: { cid: string; schemaId: string; fileId: string | null }, ciphertext: Uint8Array): Promise<ReceiveOutcome> {
    received.push(entry.cid)
    const failsAfter = opts.receiveFails?.get(entry.cid)
    if (failsAfter !== undefined) {
      await new Promise((resolve) => setTimeout(resolve, failsAfter))
      throw Object.assign(new Error('EIO: the disk failed'), { code: 'EIO' })
    }
    const scope = schemas[entry.schemaId]
    if (scope === undefined) return 'waiting-schema'
    let plaintext: Uint8Array
    try {
      plaintext = await decryptEnvelopeBytes(ciphertext, scopeKeyHex(master, scope))
    } catch {
      return 'rejected'
    }
    let env
    try {
      env = parseEnvelopeBytes(plaintext)
    } catch {
      return 'rejected'
    }
    if (env.scope !== scope) return 'rejected'
    const placed = await place(scope, env.collectedAt, plaintext, entry.cid)
    if (placed === 'exists') return 'exists'
    await indexFile(placed, scope, env.collectedAt, entry.schemaId, entry.cid, plaintext, ciphertext.byteLength, 'peer', entry.fileId)
    return 'written'
  }

  async function removeRecord (record: FileRecord): Promise<void> {
    await unlink(join(dataDir, record.path)).catch(() => {})
    await index.delete(record.path)
    if (record.cid !== null && (await index.byCid(record.cid)).length === 0) await storage.unpin(record.cid)
  }

  const node = await createSyncNode({
    networkKey: privateNetworkKey(master),
    peerKeyFile: join(opts.dir, 'identity', 'peer.key'),
    listen: opts.listen ?? ['/ip4/127.0.0.1/tcp/0'],
    mdns: opts.mdns ?? false,
    ...(opts.mdnsIntervalMs !== undefined ? { mdnsIntervalMs: opts.mdnsIntervalMs } : {}),
    bootstrapPeers: opts.bootstrapPeers ?? [],
    logger,
    redial: { minMs: 200, maxMs: 2_000 }
  })
  const engine = createSyncEngine({
    node,
    ownerAddress: opts.owner.ownerAddress,
    index,
    storage,
    state: openKv<unknown>(db, 'sync'),
    receive: async (entry, ciphertext) => {
      const started = performance.now()
      try {
        return await receive(entry, ciphertext)
      } finally {
        timing.receiveMs += performance.now() - started
      }
    },
    applyTombstone: async (_entry, records) => { for (const r of records) await removeRecord(r) },
    learnFileId: async (records, fileId) => {
      for (const r of records) await index.put({ ...r, fileId, state: 'registered', updatedAt: Date.now() })
    },
    logger,
    intervalMs: 0,
    ...opts.engine
  })
  await engine.start()
  await node.start()

  let stopped = false
  const device: TestDevice = {
    dir: opts.dir,
    dataDir,
    db,
    index,
    storage,
    node,
    engine,
    schemas,
    gets,
    received,
    unpinned,
    get receiveMs () { return timing.receiveMs },
    storageMs,
    async writeLocal (scope, data, collectedAt = new Date().toISOString()) {
      const env = buildEnvelope({ definitionUrl: `ipfs://schema-${schemaIdOf(scope)}`, scope, collectedAt, data })
      const plaintext = serializeEnvelope(env)
      const ciphertext = await encryptEnvelopeBytes(plaintext, scopeKeyHex(master, scope))
      const cid = await storage.add(ciphertext)
      const placed = await place(scope, env.collectedAt, plaintext, cid)
      if (placed === 'exists') throw new Error(`same file already written: ${scope} ${collectedAt}`)
      const record = await indexFile(placed, scope, env.collectedAt, schemaIdOf(scope), cid, plaintext, ciphertext.byteLength, 'local', null)
      engine.notifyLocalChange()
      return record
    },
    async deleteLocal (path) {
      const record = await index.get(path)
      if (record === null) throw new Error(`not indexed: ${path}`)
      await removeRecord(record)
      engine.notifyLocalChange()
    },
    addrs: () => node.multiaddrs(),
    async stop () {
      if (stopped) return
      stopped = true
      await engine.stop()
      await node.stop()
      await storage.stop()
      await db.close()
    }
  }
  return device
}

/** Poll `check` until it returns true; fails with `label` and the last observed value otherwise. */
export async function waitFor (label: string, check: () => Promise<boolean> | boolean, timeoutMs = 60_000): Promise<void> {
  const deadline = Date.now() + timeoutMs
  for (;;) {
    if (await check()) return
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${label}`)
    await new Promise((resolve) => setTimeout(resolve, 50))
  }
}

/** path → { sha256, cid } of every live indexed file of a device, for comparing devices. */
export async function fileSet (device: Pick<TestDevice, 'index'>): Promise<Map<string, { sha256: string; cid: string | null; state: string }>> {
  const out = new Map<string, { sha256: string; cid: string | null; state: string }>()
  for await (const r of device.index.each({ pageSize: 1000 })) out.set(r.path, { sha256: r.sha256, cid: r.cid, state: r.state })
  return out
}

/** Distinct ISO instants one second apart from `start`, for files that must not collide. */
export function instant (i: number, start = Date.UTC(2026, 0, 1)): string {
  return new Date(start + i * 1000).toISOString()
}
