// What the ingest pipeline needs and what it answers: its dependencies, outcomes and results.
// Kept apart from pipeline.ts (the steps) so callers read the contract without the mechanics.
import { isHearthError } from '../errors.js'
import type { Logger } from '../log.js'
import type { FileOrigin, FileRecord } from '../db/types.js'
import type { Derive, Replaced } from '../db/file-index.js'
import type { BatchOp } from '../db/database.js'
import type { StorageBackend } from '../storage/types.js'
import type { ResolvedSchema } from '../registry/types.js'
import type { EncryptOptions } from '../protocol/encryption.js'
import type { IngestJournal } from './journal.js'
import type { Encryptor } from './encryptor.js'
import type { EarlyEncryption } from './early-encryption.js'
import type { OwnWrites } from './own-writes.js'
import type { ByteBudget } from '../lifecycle/byte-budget.js'
import type { FileWriter } from '../storage/file-writer.js'
import type { DecryptedFile } from './decryptor.js'

/** The slice of the file index the pipeline needs. */
/** States of a file whose ciphertext is stored (and maybe registered). */
export const FINAL_STATES = new Set(['stored', 'registered'])
/** Data files up to this size are journaled; larger ones are fsynced before the answer. */
export const JOURNAL_MAX_BYTES = 256 * 1024

export interface IngestIndex {
  get (path: string): Promise<FileRecord | null | undefined>
  /** What a write of the path would replace: its record or its deletion's tombstone (FileIndex.prior). */
  prior (path: string): Promise<Replaced>
  /** The records of many paths in one read, in their order (a batch of dropped files). */
  getMany (paths: readonly string[]): Promise<Array<FileRecord | null>>
  /**
   * `also`: writes committed in the same atomic batch (the ingest journal's entry); `alongside`:
   * records committed in it too (the archived version of an edited file).
   */
  put (record: FileRecord, opts?: { also?: BatchOp[]; alongside?: readonly FileRecord[] }): Promise<unknown>
  /** The record `derive` makes from the path's current one, written without reading it first (FileIndex.putDerived). */
  putDerived (path: string, derive: Derive, opts?: { also?: BatchOp[] }): Promise<FileRecord>
  byCid (cid: string): Promise<FileRecord[]>
  /** Removes a path's record (FileIndex.delete): a file that stored nothing and is gone from the data folder. */
  delete (path: string): Promise<boolean>
  /** Undoes a write: what it replaced back, the earlier record or tombstone, or neither (FileIndex.revert). */
  revert (path: string, earlier: FileRecord | Replaced | null, opts?: { also?: BatchOp[] }): Promise<void>
}

export interface SchemaLookup {
  byScope (scope: string): Promise<ResolvedSchema | null>
  byId (id: string): Promise<ResolvedSchema | null>
  /** The schema an envelope's `$schema` names, when it is known. */
  byDefinitionUrl? (definitionUrl: string): Promise<ResolvedSchema | null>
}

export type Validate = (schema: ResolvedSchema, data: unknown) => { ok: true } | { ok: false; reasons: string[] }

export interface IngestDeps {
  dataDir: string
  index: IngestIndex
  storage: StorageBackend
  schemas: SchemaLookup
  validate: Validate
  masterKey: Uint8Array
  logger: Logger
  /** A file written on this device was stored: queue its chain registration. */
  onStored?: (record: FileRecord) => void
  /**
   * Any new version was indexed (local or received): wake sync. `data`: its envelope's data when
   * it was parsed from the stored JSON (a request body, a dropped file, a peer's file), so what
   * reads versions back (search) can take it instead.
   */
  onIndexed?: (record: FileRecord, data?: unknown) => void
  /** A file could not be stored because a remote service failed: retry it later. */
  onDeferred?: (path: string) => void
  /** Told about every file the pipeline writes itself, so the watcher skips its event. */
  ownWrites?: Pick<OwnWrites, 'expect' | 'cancel'>
  /** Where journaled data files are written (a thread of their own); default: the threadpool. */
  fileWriter?: FileWriter
  /** Largest data file read (ingest.maxFileBytes); larger ones are rejected with FILE_TOO_LARGE. */
  maxFileBytes?: number
  /** Most JSON values in a data file's data or a peer's file (ingest.maxJsonValues): JSON_TOO_MANY_VALUES. */
  maxJsonValues?: number
  /**
   * The ingest journal: when given, small files are written without fsyncs of their own and
   * acknowledged once their journal entry is committed with the index record (journal.ts).
   */
  journal?: IngestJournal
  /** Encryption settings; the default is Hearth's S2K choice (bench/ingest compares OpenPGP's). */
  encryption?: EncryptOptions
  /** Who encrypts (the encryption workers in the daemon); default: this thread, with `encryption`. */
  encryptor?: Encryptor
  /** Where large request bodies wait for room before they are read (`admit`); default: no bound. */
  admission?: ByteBudget
}

/** `incomplete`: not JSON yet and read with `waitIfIncomplete` (a writer may still be at it): nothing recorded. */
export type IngestOutcome = 'ingested' | 'unchanged' | 'rejected' | 'waiting-schema' | 'ignored' | 'missing' | 'incomplete'

export interface IngestResult {
  outcome: IngestOutcome
  path: string
  record?: FileRecord
  reason?: string
  /** The size and mtime an `incomplete` file had when it was read. */
  seen?: { size: number; mtimeMs: number }
}

export interface IngestPathOptions {
  origin?: FileOrigin
  /**
   * The file was handed on early (the watcher's short quiet period): bytes that are not JSON are
   * answered `incomplete` instead of rejected, and the caller looks again later.
   */
  waitIfIncomplete?: boolean
}

export interface SubmitOptions {
  /** The file's collectedAt (a connector's re-delivery); default: now. */
  collectedAt?: string
  /** The JSON text `data` was parsed from (a request body): stored as it came when it is already canonical. */
  json?: Uint8Array
  /** The encryption `prepare` started for this body (its collectedAt is the file's); submit uses or cancels it. */
  early?: EarlyEncryption | null
}

export type SubmitResult = {
  status: 'stored' | 'duplicate'
  path: string
  scope: string
  collectedAt: string
  record: FileRecord
} | {
  /** Written to the data folder; storing it waits for the storage backend to come back. */
  status: 'queued'
  path: string
  scope: string
  collectedAt: string
  reason: string
}

/** Failures of a remote service or the encryption workers: the file stays on disk and is retried, never rejected. */
export function isTransientFailure (err: unknown): boolean {
  return isHearthError(err) && (err.code === 'STORAGE_UNAVAILABLE' || err.code === 'STORAGE_FULL' || err.code === 'TIMEOUT' || isWorkerFailure(err))
}

/** The encryption workers refused (busy) or lost (crashed) the job: nothing was stored, retrying works. */
export function isWorkerFailure (err: unknown): boolean {
  return isHearthError(err) && (err.code === 'WORKERS_BUSY' || err.code === 'WORKER_FAILED')
}

export interface ReceivedFile {
  cid: string
  schemaId: string
  fileId?: string | null
  origin: Exclude<FileOrigin, 'local'>
  /**
   * The ciphertext's files that storage wrote without a sync (`storage.addUnsynced`): with the
   * journal, a receive that writes the file journals the ciphertext with the index record; the
   * caller syncs them itself otherwise (see `IngestPipeline.journaled`).
   */
  unsyncedFiles?: string[]
  /**
   * Storage keeps the ciphertext in memory, unwritten (`storage.addDeferred`): a receive that
   * writes or indexes the file journals the ciphertext with the index record, whatever
   * `unsyncedFiles` lists (the journal's checkpoint writes the block); the caller has storage
   * write it otherwise.
   */
  deferred?: boolean
  /**
   * Its decryption, started earlier by `IngestPipeline.prepareReceive` (on a worker thread while
   * the file waited for its turn); used instead of decrypting here.
   */
  decrypted?: Promise<DecryptedFile>
}
