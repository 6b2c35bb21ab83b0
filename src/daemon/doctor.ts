// `hearth doctor`: checks a stopped daemon's home and repairs what it can (issue 12, item 7).
//   1. the index database: opened; when LevelDB says it is damaged, LevelDB's repair is run, and
//      when that is not enough the damaged folder is moved aside and a new index started (every
//      data file is indexed again by the next start's scan);
//   2. the index's own structure (secondary keys, counters): checked, rebuilt when inconsistent;
//   3. the ingest journal of a daemon that was killed or lost power: replayed as its next start
//      would (the blocks of its last acknowledged files were still in its memory);
//   4. every stored ciphertext: read back and verified against its CID; a missing or damaged one
//      is fetched under the same CID from the owner's other devices (the addresses this home
//      keeps, over a short-lived loopback-only sync node: doctor-sources.ts) and then the
//      configured IPFS gateways (`restore.gateways`), every block verified; when none has it, it
//      is encrypted and stored again from the plaintext file in data/ if that file still holds the
//      recorded bytes (SHA-256); otherwise it is unrepairable. A registered file of this device
//      stored again under a new CID goes back to `stored` (the next start registers the new CID)
//      with its old file id kept as superseded;
//   5. data files the index does not know: counted (the daemon's start scan ingests them);
//   6. the search index: checked by SQLite and FTS5; damaged or missing, built again from every
//      stored version (otherwise brought up to date).
import { rename } from 'node:fs/promises'
import { opendir } from 'node:fs/promises'
import { join } from 'node:path'
import { createHash } from 'node:crypto'
import { ClassicLevel } from 'classic-level'
import { HearthError, isHearthError, unwrapHearthError } from '../errors.js'
import type { HomeLayout } from '../home.js'
import type { Logger } from '../log.js'
import { openDatabase, openKv, type HearthDatabase } from '../db/database.js'
import { openFileIndex } from '../db/file-index.js'
import type { FileRecord } from '../db/types.js'
import { openStorage, type StorageConfig } from '../storage/factory.js'
import type { StorageBackend } from '../storage/types.js'
import { loadIdentity } from '../identity/identity.js'
import { scopeKeyHex } from '../protocol/keys.js'
import { encryptEnvelopeBytes } from '../protocol/encryption.js'
import { readDataFileOrNull } from '../ingest/data-file.js'
import { classifyDataPath } from '../ingest/layout.js'
import type { RestoreSettings } from '../sync/restore-sources.js'
import { openOfflineDevices } from '../sync/offline-devices.js'
import { deviceStamp } from '../identity/device.js'
import { doctorSources, type DoctorSources } from './doctor-sources.js'
import { createIngestJournal } from '../ingest/journal.js'
import { createFileSyncer } from '../storage/deferred-sync.js'
import { rebuildSearchIndex, type SearchRepair } from '../search/index.js'
import { searchInputs } from './search-setup.js'

export interface DoctorReport {
  /** ok, repaired (LevelDB repair), recreated (moved aside: `movedTo`), or rebuilt (secondary keys). */
  index: 'ok' | 'repaired' | 'recreated' | 'rebuilt'
  movedTo?: string
  indexProblems: string[]
  /** Stored ciphertexts read back and verified. */
  checked: number
  /** Stored again: from the plaintext in data/ (a new CID) or fetched from a gateway (the same CID). */
  restored: Array<{ path: string; oldCid: string; cid: string; registered: boolean; from: string; supersedes?: string }>
  unrepairable: Array<{ path: string; cid: string; reason: string }>
  /** Data files on disk the index does not know (the next start ingests them). */
  notIndexed: number
  /** The search index: ok, or rebuilt (damaged or missing), with what it holds now. */
  search: SearchRepair | null
}

export interface DoctorDeps {
  home: HomeLayout
  storage: StorageConfig
  /** Gateways to fetch a lost ciphertext from (and the deadlines and size bound for devices too). */
  restore?: RestoreSettings
  /** The owner's devices to ask first: none while sync is disabled; `peers` beside those `hearth peers add` kept. */
  sync?: { enabled: boolean; peers: readonly string[] }
  logger: Logger
  onProgress?: (line: string) => void
}

const PAGE = 500

export async function runDoctor (deps: DoctorDeps): Promise<DoctorReport> {
  const { home } = deps
  const progress = deps.onProgress ?? (() => {})
  const report: DoctorReport = { index: 'ok', indexProblems: [], checked: 0, restored: [], unrepairable: [], notIndexed: 0, search: null }
  const db = await openIndexDatabase(home, report, progress)
  let storage: StorageBackend | null = null
  let remote: DoctorSources | null = null
  try {
    const index = await openFileIndex({ db })
    const check = await index.verify()
    if (!check.ok) {
      report.indexProblems = check.problems
      progress(`index: ${check.problemCount} inconsistencies; rebuilding its secondary keys`)
      await index.rebuild()
      if (report.index === 'ok') report.index = 'rebuilt'
    }
    const identity = await loadIdentity(home)
    storage = await openStorage(deps.storage, home, deps.logger)
    const backend = storage
    // otherwise an acknowledged file whose block was still in the killed daemon's memory would be
    // stored again from data/ under a new CID
    const syncer = createFileSyncer()
    const replayed = await createIngestJournal({ db, dataDir: home.data, storage: backend, index, syncFiles: syncer, logger: deps.logger }).replay()
      .finally(() => { syncer.close() })
    if (replayed > 0) progress(`ingest journal: ${replayed} acknowledged files written again`)
    remote = doctorSources({
      restore: deps.restore,
      syncEnabled: deps.sync?.enabled ?? false,
      storage: backend,
      openDevices: async () => await openOfflineDevices({
        masterKey: identity.masterKey,
        ownerAddress: identity.ownerAddress,
        peerKeyFile: join(home.identity, 'peer-key'),
        deviceStamp: await deviceStamp(home.root),
        configuredPeers: deps.sync?.peers ?? [],
        kv: openKv(db, 'sync'),
        index,
        readTimeoutMs: deps.restore?.requestTimeoutMs ?? 30_000,
        logger: deps.logger
      }),
      logger: deps.logger,
      onProgress: progress
    })
    for (let after: string | undefined; ;) {
      const page = await index.all({ limit: PAGE, ...(after !== undefined ? { after } : {}) })
      if (page.length === 0) break
      after = page[page.length - 1]!.path
      for (const record of page) {
        if (record.cid === null) continue
        report.checked++
        const problem = await ciphertextProblem(backend, record.cid)
        if (problem === null) continue
        // the same CID from a device or gateway first: its registration and other devices' records stay true
        const fetched = await remote.fetch(record.cid)
        if ('source' in fetched) {
          report.restored.push({ path: record.path, oldCid: record.cid, cid: record.cid, registered: record.fileId != null, from: fetched.source })
          continue
        }
        const restored = await restoreFromPlaintext(home, backend, identity.masterKey, record)
        if (restored === null) {
          report.unrepairable.push({ path: record.path, cid: record.cid, reason: `${problem}; no plaintext file with the recorded bytes to store it again from${fetched.tried}` })
          continue
        }
        // the chain names the lost CID: this device's registration is redone for the new one
        const supersedes = record.fileId != null && record.origin === 'local' ? record.fileId : null
        await index.put({
          ...record,
          cid: restored.cid,
          encryptedSize: restored.encryptedSize,
          updatedAt: Date.now(),
          ...(supersedes !== null ? { state: 'stored', fileId: null, supersededFileIds: [...(record.supersededFileIds ?? []), supersedes] } : {})
        })
        report.restored.push({ path: record.path, oldCid: record.cid, cid: restored.cid, registered: record.fileId != null, from: 'data/', ...(supersedes !== null ? { supersedes } : {}) })
      }
      progress(`ciphertexts: ${report.checked} checked, ${report.restored.length} stored again, ${report.unrepairable.length} unrepairable`)
    }
    report.notIndexed = await countNotIndexed(home.data, async (rel) => await index.get(rel) !== null)
    const inputs = await searchInputs({ home, index, storage: backend, masterKey: identity.masterKey, logger: deps.logger })
    report.search = await rebuildSearchIndex({ ...inputs, dir: home.search, onProgress: progress })
    return report
  } finally {
    await remote?.close().catch(() => {})
    await storage?.stop().catch(() => {})
    await db.close().catch(() => {})
  }
}

async function openIndexDatabase (home: HomeLayout, report: DoctorReport, progress: (line: string) => void): Promise<HearthDatabase> {
  try {
    return await openReadable(home.index)
  } catch (err) {
    if (!isHearthError(err, 'INDEX_CORRUPT')) throw err
    progress(`index: ${err.message.split(';')[0]}; running LevelDB's repair`)
  }
  try {
    await ClassicLevel.repair(home.index)
    const db = await openReadable(home.index)
    report.index = 'repaired'
    return db
  } catch (err) {
    if (isHearthError(err) && err.code !== 'INDEX_CORRUPT') throw err
  }
  const movedTo = `${home.index}.damaged-${new Date().toISOString().replace(/[:.]/g, '-')}`
  await rename(home.index, movedTo)
  progress(`index: beyond repair; moved to ${movedTo} and started anew (the next start indexes every data file again)`)
  report.index = 'recreated'
  report.movedTo = movedTo
  return await openDatabase(home.index)
}

/**
 * The index opened and every entry read once: a garbled table opens fine and is noticed only
 * when its blocks are read (INDEX_CORRUPT either way).
 */
async function openReadable (dir: string): Promise<HearthDatabase> {
  const db = await openDatabase(dir)
  try {
    for await (const _ of db.level.iterator()) { /* each block read and checked by LevelDB */ }
    return db
  } catch (err) {
    await db.close().catch(() => {})
    throw unwrapHearthError(err)
  }
}

/** Why the ciphertext of `cid` cannot be read back intact, or null when it can. */
async function ciphertextProblem (storage: StorageBackend, cid: string): Promise<string | null> {
  try {
    await storage.get(cid)
    return null
  } catch (err) {
    if (isHearthError(err, 'STORAGE_NOT_FOUND')) return 'the ciphertext is missing'
    if (isHearthError(err, 'STORAGE_VERIFY_FAILED')) return 'the ciphertext is damaged (it does not match its CID)'
    if (isHearthError(err, 'STORAGE_UNAVAILABLE')) throw err
    return `the ciphertext cannot be read: ${(err as Error).message}`
  }
}

async function restoreFromPlaintext (home: HomeLayout, storage: StorageBackend, masterKey: Uint8Array, record: FileRecord): Promise<{ cid: string; encryptedSize: number } | null> {
  if (record.path.includes('#')) return null // a superseded version: its plaintext is gone from data/
  const bytes = await readDataFileOrNull(home.data, record.path, record.size)
  if (bytes === null || createHash('sha256').update(bytes).digest('hex') !== record.sha256) return null
  const ciphertext = await encryptEnvelopeBytes(bytes, scopeKeyHex(masterKey, record.scope))
  const cid = await storage.add(ciphertext)
  return { cid, encryptedSize: ciphertext.byteLength }
}

async function countNotIndexed (dataDir: string, indexed: (rel: string) => Promise<boolean>): Promise<number> {
  let count = 0
  const top = await opendir(dataDir).catch(() => null)
  if (top === null) return 0
  for await (const scope of top) {
    if (!scope.isDirectory()) continue
    const dir = await opendir(join(dataDir, scope.name)).catch(() => null)
    if (dir === null) continue
    for await (const f of dir) {
      const rel = `${scope.name}/${f.name}`
      if (classifyDataPath(rel).kind === 'data' && !(await indexed(rel))) count++
    }
  }
  return count
}

export function doctorFailed (report: DoctorReport): HearthError | null {
  if (report.unrepairable.length === 0) return null
  return new HearthError('STORAGE_NOT_FOUND', `${report.unrepairable.length} stored version(s) cannot be repaired: their ciphertext is missing or damaged, no device or gateway had it, and data/ no longer holds their plaintext`,
    { unrepairable: report.unrepairable.slice(0, 100) })
}
