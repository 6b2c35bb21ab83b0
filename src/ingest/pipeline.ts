// The one ingest pipeline (docs/protocol.md §3.1) for files found on disk, envelopes built from a request,
// and ciphertexts received from a peer or restored from the chain (receive.ts):
//   resolve schema → validate → encrypt → store/pin → index → (queue registration).
// The file on disk is the source of truth and every step is idempotent: a crash at any point is
// repaired by running the same step again on the next scan, and a file already indexed with the
// same bytes is never processed twice.
import { unlink } from 'node:fs/promises'
import { asStorageFull, HearthError, type ErrorCode } from '../errors.js'
import type { FileRecord } from '../db/types.js'
import type { ResolvedSchema } from '../registry/types.js'
import { assertScope, scopeProblem } from '../protocol/scope.js'
import { buildEnvelope, collectedAtToFileName, type Envelope } from '../protocol/envelope.js'
import { scopeKeyHex } from '../protocol/keys.js'
import { inThreadEncryptor } from './encryptor.js'
import { encryptAndStore as encryptAndStoreBytes } from './encrypt-store.js'
import { envelopeSerializer } from './envelope-bytes.js'
import { startEarlyEncryption, type EarlyEncryption } from './early-encryption.js'
import { stageEarly } from './early-store.js'
import type { EncryptionPart } from './encryption-job.js'
import { CHUNK_SIZE } from '../storage/cid.js'
import { markedMtime } from '../storage/file-times.js'
import { absoluteDataPath } from './layout.js'
import { DEFAULT_MAX_FILE_BYTES, sha256Hex } from './data-file.js'
import { PathLocks } from './path-locks.js'
import { commitWithEntry, journalEntryOf, type JournalEntry, type StoredCiphertext } from './journal.js'
import { writeOwnDataFile } from './own-writes.js'
import { createBesidePublisher, deriveNew } from './publish-beside.js'
import { createSubmitNames, exists, nextMillisecond, sameBytesAt } from './submit-names.js'
import { createReceiver, createReceivePreparer, type ReceivePreparer } from './receive.js'
import { createFileIngest } from './ingest-file.js'
import { createBatchIngest, settle, type IngestMany, type Settled } from './ingest-many.js'
import type { DurableWrite } from '../storage/durable-file.js'

import { FINAL_STATES, JOURNAL_MAX_BYTES, isTransientFailure, isWorkerFailure, type IngestDeps, type IngestResult, type IngestPathOptions, type SubmitResult, type SubmitOptions, type ReceivedFile } from './pipeline-contract.js'
export { isTransientFailure, isWorkerFailure, type IngestIndex, type SchemaLookup, type Validate, type IngestDeps, type IngestOutcome, type IngestResult, type IngestPathOptions, type SubmitResult, type SubmitOptions, type ReceivedFile } from './pipeline-contract.js'

/** Request bodies up to this size skip the large-body budget (IngestDeps.admission). */
const ADMIT_FREELY_BYTES = 1024 * 1024

function isPlainObject (v: unknown): v is Record<string, unknown> {
  return typeof v === 'object' && v !== null && !Array.isArray(v)
}

export interface IngestPipeline {
  ingestPath (rel: string, opts?: IngestPathOptions): Promise<IngestResult>
  /** Files just seen written, their shared work done once (ingest-many.ts); a result or an error each, in their order. */
  ingestMany: IngestMany
  submit (scope: string, data: unknown, opts?: SubmitOptions): Promise<SubmitResult>
  /**
   * For a request body of `declaredBytes` still to be read: starts encrypting the envelope it will
   * be stored as while it arrives, when that does not depend on the parse (a large body of a known
   * scope, canonical once it is all there: early-encryption.ts). Read the body into its `room`,
   * then `complete` it, then hand it to `submit` (`early`), which uses it or drops it.
   */
  prepare (scope: string, declaredBytes: number, collectedAt?: string): Promise<EarlyEncryption | null>
  /**
   * Runs `fn` (reading a request body and submitting it) once a body of `bytes` (null: unknown,
   * counted as the whole budget) fits the large-body budget; bodies up to 1 MiB never wait.
   */
  admit<T> (bytes: number | null, fn: () => Promise<T>): Promise<T>
  receive (ciphertext: Uint8Array, meta: ReceivedFile): Promise<'written' | 'exists'>
  /** Starts decrypting a received file with `decrypt` ahead of its `receive` (`meta.decrypted`); see receive.ts. */
  prepareReceive: ReceivePreparer
  readonly inFlight: number
  /** Whether `receive` journals a ciphertext stored without a sync when it writes its file. */
  readonly journaled: boolean
}

export function createIngestPipeline (deps: IngestDeps): IngestPipeline {
  const locks = new PathLocks()
  const log = deps.logger
  const maxFileBytes = deps.maxFileBytes ?? DEFAULT_MAX_FILE_BYTES

  const journal = deps.journal

  /**
   * Indexes `base`; with `journaled`, its journal entry is committed in the same synced batch, and
   * with `archived`, the earlier version of the same name under its archive path: readers never
   * see that version both archived and still current.
   */
  async function record (base: Omit<FileRecord, 'updatedAt'>, journaled?: JournalEntry, archived?: FileRecord): Promise<FileRecord> {
    const r: FileRecord = { ...base, updatedAt: Date.now() }
    await commitWithEntry(journal, journaled, async (also) => await deps.index.put(r, {
      ...(also === undefined ? {} : { also }),
      ...(archived === undefined ? {} : { alongside: [archived] })
    }))
    return r
  }

  // HKDF per scope is ~3.5 % of a small file's CPU: derived once per scope (one entry per scope)
  const scopeKeys = new Map<string, string>()
  function scopeKey (scope: string): string {
    let key = scopeKeys.get(scope)
    if (key === undefined) { key = scopeKeyHex(deps.masterKey, scope); scopeKeys.set(scope, key) }
    return key
  }

  async function reject (base: Omit<FileRecord, 'updatedAt' | 'state'>, code: ErrorCode, reasons: string[], archived?: FileRecord): Promise<IngestResult> {
    const r = await record({ ...base, state: 'rejected', errorCode: code, reasons, cid: null, encryptedSize: null }, undefined, archived)
    log.warn({ path: r.path, errorCode: code, reasons }, 'file rejected')
    return { outcome: 'rejected', path: r.path, record: r, reason: reasons.join('; ') }
  }

  async function resolveSchema (scope: string): Promise<ResolvedSchema | null> {
    try {
      return await deps.schemas.byScope(scope)
    } catch (err) {
      // every source failing is "not known yet", never a reason to drop the file
      log.warn({ scope, err: (err as Error).message }, 'schema resolution failed')
      return null
    }
  }

  const encryptor = deps.encryptor ?? inThreadEncryptor(deps.encryption)
  /**
   * Encrypts and stores; `unsynced` lets storage skip its syncs when it can (the journal covers
   * them). A file over one chunk is encrypted as a stream and stored piece by piece (encrypt-store.ts).
   */
  async function encryptAndStore (env: Envelope, bytes: Uint8Array, unsynced = false, early?: EarlyEncryption): Promise<StoredCiphertext> {
    // an early encryption's ciphertext staged while the body arrived is committed; else its pieces are stored now
    const staged = early?.commit() ?? null
    if (staged !== null) return await staged
    if (early !== undefined) return await encryptAndStoreBytes({ storage: deps.storage, encryptor }, bytes, scopeKey(env.scope), early.pieces)
    if (!unsynced || deps.storage.addUnsynced === undefined) return await encryptAndStoreBytes({ storage: deps.storage, encryptor }, bytes, scopeKey(env.scope))
    const ciphertext = await encryptor.encrypt(bytes, scopeKey(env.scope))
    // the block is written (and pinned) by the journal's checkpoint, a whole batch at once
    const added = await deps.storage.addDeferred?.(ciphertext) ?? await deps.storage.addUnsynced(ciphertext)
    if (added !== null) return { cid: added.cid, encryptedSize: ciphertext.byteLength, unsynced: { ciphertext, files: added.files } }
    const cid = await deps.storage.add(ciphertext)
    return { cid, encryptedSize: ciphertext.byteLength }
  }

  const { ingestPath, ingestLocked } = createFileIngest({ deps, locks, maxFileBytes, record, reject, resolveSchema, encryptAndStore })
  const ingestMany = createBatchIngest({ deps, locks, maxFileBytes, ingestLocked })

  const { stampNow, checkScopeFolder } = createSubmitNames(deps.dataDir)

  /** A ciphertext stored for a name that turned out taken: unpinned again (its CID is unique). */
  async function dropStored (stored: Settled<StoredCiphertext>): Promise<void> {
    if (stored.ok) await deps.storage.unpin(stored.value.cid).catch(() => {})
  }

  /**
   * After a failed index write of `rel`: its ciphertext unpinned unless a record of the name names
   * it (kept when the index cannot tell), so a deferred block is not pinned by the next
   * checkpoint with nothing referencing it.
   */
  async function dropUnrecorded (rel: string, stored: Settled<StoredCiphertext>): Promise<void> {
    if (!stored.ok) return
    const now = await deps.index.get(rel).catch(() => 'unknown' as const)
    if (now !== 'unknown' && now?.cid !== stored.value.cid) await dropStored(stored)
  }

  /**
   * Indexes a new file's record (with its journal entry) without reading the name's current record
   * first: the index write reads it. A deleted file's name written again keeps the old version
   * under its archive path, in the same batch (see ingestLocked); `keepOrigin`: the record keeps
   * that version's origin.
   */
  async function recordNew (base: Omit<FileRecord, 'updatedAt'>, journaled: JournalEntry | undefined, keepOrigin: boolean): Promise<FileRecord> {
    return await commitWithEntry(journal, journaled, async (also) => await deps.index.putDerived(base.path, deriveNew(base, keepOrigin), also === undefined ? {} : { also }))
  }

  /** A journaled POST's data file created beside its record (publish-beside.ts) rather than before it. */
  const beside = journal === undefined ? null : createBesidePublisher({ index: deps.index, journal })

  /** The record of a file `submit` stored. */
  function storedRecord (rel: string, env: Envelope, bytes: Uint8Array, schema: ResolvedSchema, mtimeMs: number, stored: StoredCiphertext): Omit<FileRecord, 'updatedAt'> {
    return {
      path: rel,
      scope: env.scope,
      collectedAt: env.collectedAt,
      schemaId: schema.id,
      cid: stored.cid,
      size: bytes.byteLength,
      encryptedSize: stored.encryptedSize,
      sha256: stored.plaintextSha256 ?? sha256Hex(bytes),
      mtimeMs,
      state: 'stored',
      origin: 'local'
    }
  }

  /** `parsed`: env.data was parsed from JSON (a request body), so it is what a read-back would give. */
  function announceStored (r: FileRecord, env: Envelope, parsed: boolean): SubmitResult {
    log.info({ path: r.path, cid: r.cid, schemaId: r.schemaId }, 'file stored')
    if (r.origin === 'local') deps.onStored?.(r)
    deps.onIndexed?.(r, parsed ? env.data : undefined)
    return { status: 'stored', path: r.path, scope: env.scope, collectedAt: env.collectedAt, record: r }
  }

  /**
   * Indexes a stored file while its data file is created (`write`, with `mtimeMs`); the caller
   * holds its path lock. 'taken': the name held another file, nothing of this one kept.
   */
  async function recordBeside (rel: string, abs: string, env: Envelope, bytes: Uint8Array, schema: ResolvedSchema, mtimeMs: number, stored: StoredCiphertext, write: () => Promise<Settled<DurableWrite>>, parsed: boolean): Promise<SubmitResult | 'taken'> {
    let r: FileRecord | 'taken'
    let created = false
    try {
      r = await beside!.record(storedRecord(rel, env, bytes, schema, mtimeMs, stored), journalEntryOf(rel, stored, { bytes, abs })!, async () => {
        const written = await write()
        created = written.ok && written.value.written
        return written
      })
    } catch (err) {
      // the file is there but not indexed: handed back to the queue (the watcher skips files we wrote)
      if (created) deps.onDeferred?.(rel)
      await dropUnrecorded(rel, { ok: true, value: stored })
      throw err
    }
    return r === 'taken' ? r : announceStored(r, env, parsed)
  }

  /** Indexes a file `submit` has just written and stored (the caller holds its path lock). */
  async function recordSubmitted (rel: string, env: Envelope, bytes: Uint8Array, schema: ResolvedSchema, mtimeMs: number, stored: Settled<StoredCiphertext>, unsyncedFile: string | null, parsed: boolean): Promise<SubmitResult> {
    const data = unsyncedFile === null ? null : { bytes, abs: unsyncedFile }
    const submitted = { path: rel, scope: env.scope, collectedAt: env.collectedAt }
    if (!stored.ok) {
      const error = asStorageFull(stored.error, `storing ${rel}`)
      if (!isTransientFailure(error)) throw error
      // the file is on disk and retried; the index says so, so `versions` and `status` show it
      await recordNew({
        ...submitted, schemaId: schema.id, cid: null, size: bytes.byteLength, encryptedSize: null, sha256: sha256Hex(bytes), mtimeMs,
        state: 'waiting-storage', reasons: [`storage unavailable: ${(error as Error).message}`], origin: 'local'
      }, data === null ? undefined : { path: rel, data: data.bytes, files: [data.abs] }, false)
      deps.onDeferred?.(rel)
      return { status: 'queued', ...submitted, reason: (error as Error).message }
    }
    return announceStored(await recordNew(storedRecord(rel, env, bytes, schema, mtimeMs, stored.value), journalEntryOf(rel, stored.value, data), true), env, parsed)
  }

  async function submit (scope: string, data: unknown, opts: SubmitOptions = {}): Promise<SubmitResult> {
    try {
      return await submitOnce(scope, data, opts)
    } catch (err) {
      // a full disk (data folder, blocks, index) answers 507 STORAGE_FULL, not 500
      throw asStorageFull(err, `storing data of ${scope}`)
    } finally {
      // unused (a failed validation, a taken name): the worker's job is dropped and what it staged
      // removed before the answer, so an error answered leaves nothing of the body behind
      await opts.early?.cancel()
    }
  }

  /** Starts encrypting a large body while it arrives, before it is parsed (early-encryption.ts); null when it cannot. */
  async function prepare (scope: string, declaredBytes: number, collectedAt?: string): Promise<EarlyEncryption | null> {
    if (declaredBytes <= CHUNK_SIZE || scopeProblem(scope) !== null) return null
    const schema = await resolveSchema(scope)
    if (schema === null) return null
    const head = { definitionUrl: schema.definitionUrl, scope, collectedAt: collectedAt ?? stampNow(scope) }
    // this body is one of the large bodies the budget runs (admit); any other is arriving or being stored too
    const alone = (deps.admission?.status().running ?? 0) <= (declaredBytes > ADMIT_FREELY_BYTES ? 1 : 0)
    // its ciphertext is stored as it comes, while the body arrives and is validated (early-store.ts)
    const stage = deps.storage.stageStream !== undefined ? (parts: AsyncIterable<Uint8Array | EncryptionPart>) => stageEarly(deps.storage, parts) : undefined
    return startEarlyEncryption(encryptor, declaredBytes, head, scopeKey(scope), { alone, ...(stage !== undefined ? { stage } : {}), ...(deps.maxJsonValues !== undefined ? { maxJsonValues: deps.maxJsonValues } : {}) })
  }

  async function submitOnce (scope: string, data: unknown, opts: SubmitOptions): Promise<SubmitResult> {
    assertScope(scope)
    if (!isPlainObject(data)) throw new HearthError('INVALID_BODY', 'the body must be a JSON object: the data of the file')
    const schema = await resolveSchema(scope)
    if (schema === null) throw new HearthError('NO_SCHEMA_FOR_SCOPE', `no schema is known for scope ${scope}; add one with \`hearth schema add\``, { scope })
    const verdict = deps.validate(schema, data)
    if (!verdict.ok) {
      throw new HearthError('SCHEMA_VALIDATION_FAILED', `data does not match schema ${schema.id} of ${scope}: ${verdict.reasons.slice(0, 5).join('; ')}`, { reasons: verdict.reasons, schemaId: schema.id })
    }
    await checkScopeFolder(scope)
    const early = opts.early?.definitionUrl === schema.definitionUrl ? opts.early : null
    let collectedAt = early?.collectedAt ?? opts.collectedAt ?? stampNow(scope)
    const serialize = envelopeSerializer(early === null ? opts.json : undefined, deps.maxJsonValues)
    // data parsed from a body is what reading the stored version back gives (values that are not
    // JSON's own, a Date say, would not be): only such data is handed on with its record
    const parsed = opts.json !== undefined
    for (let attempt = 0; attempt < 1000; attempt++) {
      const env = buildEnvelope({ definitionUrl: schema.definitionUrl, scope, data, collectedAt })
      // the first name tried is the one the early encryption was started for
      const useEarly = attempt === 0 && early !== null
      const bytes = useEarly ? early.bytes : serialize(env)
      const rel = `${scope}/${collectedAtToFileName(env.collectedAt)}`
      const abs = absoluteDataPath(deps.dataDir, rel)
      const outcome = await locks.run(rel, async (): Promise<'taken' | 'same' | SubmitResult> => {
        // a caller-given collectedAt is often a re-delivery: answer the common collision cheaply
        if (opts.collectedAt !== undefined && await exists(abs)) return await sameBytesAt(deps.dataDir, rel, bytes)
        // One pass: the envelope is already built and validated, so it is stored from memory rather
        // than read back and validated again, and the file write runs side by side with the
        // encryption and the storage add, which start from the same bytes.
        // With the journal, neither the file nor the block is synced here: the one sync is the
        // index batch's, which carries both (group-committed with concurrent requests); a file
        // created on the writer's thread is indexed while it is created (publish-beside.ts).
        const journaled = journal !== undefined && bytes.byteLength <= JOURNAL_MAX_BYTES
        const besides = journaled && !useEarly && deps.fileWriter !== undefined && beside?.enabled === true
        // the file's mark for a replay (journal.ts): random microseconds no copied file's time has
        const mtimeMs = markedMtime(Date.now())
        const storing = settle(encryptAndStore(env, bytes, journaled, useEarly ? early : undefined))
        const create = async (): Promise<Settled<DurableWrite>> => await settle(writeOwnDataFile(deps.ownWrites, rel, abs, bytes, journaled
          ? { synced: false, ...(deps.fileWriter !== undefined ? { writer: deps.fileWriter } : {}), ...(besides ? { mtimeMs } : {}) }
          : {}))
        const encrypted = besides ? await storing : null
        let stored: Settled<StoredCiphertext>
        if (encrypted?.ok === true) {
          stored = encrypted
          const done = await recordBeside(rel, abs, env, bytes, schema, mtimeMs, encrypted.value, create, parsed)
          if (done !== 'taken') return done
        } else {
          const written = await create()
          stored = await storing
          if (!written.ok) {
            await dropStored(stored)
            throw written.error
          }
          const write = written.value
          if (write.written && !stored.ok && isWorkerFailure(stored.error)) {
            // answered as an error, so nothing is kept: the caller's retry must not make a second file
            await unlink(abs).catch(() => {})
            throw stored.error
          }
          if (write.written) {
            try {
              return await recordSubmitted(rel, env, bytes, schema, write.mtimeMs, stored, journaled ? abs : null, parsed)
            } catch (err) {
              // the watcher skips files we wrote: one left unindexed is handed back to the queue
              deps.onDeferred?.(rel)
              await dropUnrecorded(rel, stored)
              throw err
            }
          }
        }
        await dropStored(stored)
        // Only a caller-given collectedAt makes identical bytes a re-delivery (connector
        // re-imports); two requests stamped "now" are two collections even with equal data.
        return opts.collectedAt === undefined ? 'taken' : await sameBytesAt(deps.dataDir, rel, bytes)
      })
      if (outcome === 'taken') { collectedAt = nextMillisecond(env.collectedAt); continue }
      if (outcome !== 'same') return outcome
      let result: IngestResult
      try {
        result = await ingestPath(rel)
      } catch (err) {
        if (!isTransientFailure(err)) throw err
        deps.onDeferred?.(rel)
        return { status: 'queued', path: rel, scope, collectedAt: env.collectedAt, reason: (err as Error).message }
      }
      if (result.record === undefined || !FINAL_STATES.has(result.record.state)) {
        throw new HearthError('INTERNAL', `file ${rel} was written but not stored (${result.outcome}: ${result.reason ?? ''})`)
      }
      return { status: 'duplicate', path: rel, scope, collectedAt: env.collectedAt, record: result.record }
    }
    throw new HearthError('CONFLICT', `could not find a free file name for ${scope} near ${opts.collectedAt ?? 'now'}`)
  }

  const receive = createReceiver({ ...deps, locks, record, scopeKey })
  const prepareReceive = createReceivePreparer({ schemas: deps.schemas, scopeKey, ...(deps.maxJsonValues !== undefined ? { maxJsonValues: deps.maxJsonValues } : {}) })

  async function admit<T> (bytes: number | null, fn: () => Promise<T>): Promise<T> {
    // a worker that ended while idle loads while the body is read and parsed, not after
    if (bytes === null || bytes > CHUNK_SIZE) encryptor.expectLarge?.()
    if (deps.admission === undefined || (bytes !== null && bytes <= ADMIT_FREELY_BYTES)) return await fn()
    return await deps.admission.run(bytes ?? Number.MAX_SAFE_INTEGER, fn)
  }

  return {
    ingestPath,
    ingestMany,
    submit,
    prepare,
    admit,
    receive,
    prepareReceive,
    get inFlight () { return locks.inFlight },
    journaled: journal !== undefined
  }
}
