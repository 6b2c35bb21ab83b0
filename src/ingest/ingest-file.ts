// Ingesting one data file found on disk (docs/protocol.md §3.1): read → hash → parse → schema →
// validate → encrypt and store → index. The file on disk is the source of truth and every step is
// idempotent: a file already indexed with the same size and mtime (or the same bytes) costs one
// look, and a crash at any point is repaired by running the same steps again.
import { stat } from 'node:fs/promises'
import { asStorageFull, isHearthError, type ErrorCode } from '../errors.js'
import type { FileOrigin, FileRecord } from '../db/types.js'
import type { ResolvedSchema } from '../registry/types.js'
import { parseEnvelopeBytes, type Envelope } from '../protocol/envelope.js'
import { classifyDataPath, absoluteDataPath, type PathClass } from './layout.js'
import { sizeAndMtime } from '../storage/file-times.js'
import { readDataFile, sha256Hex, type DataFile } from './data-file.js'
import type { PathLocks } from './path-locks.js'
import { journalEntryOf, type JournalEntry, type StoredCiphertext } from './journal.js'
import { FINAL_STATES, JOURNAL_MAX_BYTES, isTransientFailure, type IngestDeps, type IngestIndex, type IngestResult, type IngestPathOptions } from './pipeline-contract.js'

/** States a file leaves by itself (schema known, storage back): never skipped as unchanged. */
const WAITING_STATES = new Set(['waiting-schema', 'waiting-storage'])

/** The cheap first check: indexed with the same size and mtime (and not waiting) → nothing to do. */
export function unchangedSince (existing: FileRecord | null, st: { size: number; mtimeMs: number }): boolean {
  return existing !== null && !WAITING_STATES.has(existing.state) && existing.size === st.size && existing.mtimeMs === st.mtimeMs
}

/** A stored version of a name under its archive path `path#cid`; none for a version not stored. */
export function archivedVersion (existing: FileRecord): FileRecord | undefined {
  return FINAL_STATES.has(existing.state) ? { ...existing, path: `${existing.path}#${existing.cid ?? 'old'}`, updatedAt: Date.now() } : undefined
}

/**
 * A file gone from the data folder whose record stored nothing (rejected, or waiting for its
 * schema, never encrypted) leaves the index with it: no list or count names a file that is not
 * there. A stored version stays (its ciphertext is the data; `hearth rm` deletes a scope).
 */
export function storesNothing (record: FileRecord | null | undefined): record is FileRecord {
  return record != null && record.cid === null && (record.state === 'rejected' || record.state === 'waiting-schema') && !record.path.includes('#')
}

/** The `missing` outcome of a path whose file is gone, forgetting its record when it stored nothing. */
export async function goneFile (index: Pick<IngestIndex, 'delete'>, rel: string, existing: FileRecord | null | undefined): Promise<IngestResult> {
  if (storesNothing(existing)) await index.delete(rel)
  return { outcome: 'missing', path: rel }
}

export type DataPath = Extract<PathClass, { kind: 'data' }>

/** A file already looked up (and maybe read) by the caller. */
export interface SeenFile {
  existing: FileRecord | null
  /** Its size and mtime: from a `stat`, or from `read`. */
  stat: { size: number; mtimeMs: number }
  /** Its bytes, when the caller read them (a file just written). */
  read?: DataFile
  /** The schema an envelope names, shared by the files of one batch. */
  schemaByUrl?: (definitionUrl: string) => Promise<ResolvedSchema | null>
}

/** What the pipeline lends the file steps (pipeline.ts). */
export interface FileIngestContext {
  deps: IngestDeps
  locks: PathLocks
  maxFileBytes: number
  record: (base: Omit<FileRecord, 'updatedAt'>, journaled?: JournalEntry, archived?: FileRecord) => Promise<FileRecord>
  reject: (base: Omit<FileRecord, 'updatedAt' | 'state'>, code: ErrorCode, reasons: string[], archived?: FileRecord) => Promise<IngestResult>
  resolveSchema: (scope: string) => Promise<ResolvedSchema | null>
  encryptAndStore: (env: Envelope, bytes: Uint8Array, unsynced: boolean) => Promise<StoredCiphertext>
}

export interface FileIngest {
  ingestPath (rel: string, opts?: IngestPathOptions): Promise<IngestResult>
  /** One file whose lock the caller holds; see SeenFile. */
  ingestLocked (file: DataPath, origin: FileOrigin, waitIfIncomplete: boolean, seen?: SeenFile): Promise<IngestResult>
}

export function createFileIngest (ctx: FileIngestContext): FileIngest {
  const { deps, locks, maxFileBytes, record, reject, resolveSchema, encryptAndStore } = ctx
  const log = deps.logger
  const journal = deps.journal
  const schemaByUrl = async (definitionUrl: string): Promise<ResolvedSchema | null> => await deps.schemas.byDefinitionUrl?.(definitionUrl).catch(() => null) ?? null

  /**
   * Ingests one data file; the caller holds its path lock. `seen`: its record and stat (and for a
   * dropped file its bytes) already read (a batch, ingest-many.ts); otherwise it is stat'ed, looked
   * up and read here.
   */
  async function ingestLocked (file: DataPath, origin: FileOrigin, waitIfIncomplete: boolean, seen?: SeenFile): Promise<IngestResult> {
    const { rel, scopeFolder, scopeProblem } = file
    const abs = absoluteDataPath(deps.dataDir, rel)
    let st: { size: number; mtimeMs: number }
    let existing: FileRecord | null
    if (seen !== undefined) {
      st = seen.stat
      existing = seen.existing
    } else {
      let found
      try {
        // follows a symlink (stat never opens, so a FIFO cannot block here): the size and mtime
        // compared below are the target's, the ones that change when the data does
        found = await stat(abs, { bigint: true })
      } catch (err) {
        if ((err as NodeJS.ErrnoException).code === 'ENOENT') return await goneFile(deps.index, rel, await deps.index.get(rel))
        throw err
      }
      if (found.isDirectory()) return { outcome: 'ignored', path: rel, reason: 'a folder' }
      st = sizeAndMtime(found)
      existing = await deps.index.get(rel) ?? null
    }
    if (existing !== null && unchangedSince(existing, st)) {
      return { outcome: 'unchanged', path: rel, record: existing }
    }
    const base = {
      path: rel,
      scope: scopeFolder,
      collectedAt: null,
      schemaId: null,
      cid: null,
      size: st.size,
      encryptedSize: null,
      sha256: '',
      mtimeMs: st.mtimeMs,
      origin: existing?.origin ?? origin
    }
    if (scopeProblem !== null) return await reject(base, 'INVALID_SCOPE', [`folder name is not a scope: ${scopeProblem}`])

    let bytes: Uint8Array
    let readMtimeMs: number
    try {
      ({ bytes, mtimeMs: readMtimeMs } = seen?.read ?? await readDataFile(deps.dataDir, rel, { maxBytes: maxFileBytes }))
    } catch (err) {
      if (isHearthError(err)) return await reject(base, err.code, (err.details?.reasons as string[] | undefined) ?? [err.message])
      const code = (err as NodeJS.ErrnoException).code
      if (code === 'ENOENT') return await goneFile(deps.index, rel, existing)
      return await reject(base, 'FILE_UNREADABLE', [`cannot read the file: ${code ?? (err as Error).message}`])
    }
    base.size = bytes.byteLength
    // A large file's digest comes from the encryption worker, which hashes it on the way; it is
    // needed here first only when the file may be the same bytes as its record's (same size).
    const small = bytes.byteLength <= JOURNAL_MAX_BYTES
    const sameSize = existing !== null && existing.size === bytes.byteLength
    if (small || sameSize) base.sha256 = sha256Hex(bytes)
    /** The record's fields with the digest, for an outcome that stores nothing. */
    const hashed = <B extends { sha256: string }>(b: B): B => b.sha256 !== '' ? b : { ...b, sha256: sha256Hex(bytes) }
    if (existing !== null && sameSize && existing.sha256 === base.sha256 && !WAITING_STATES.has(existing.state)) {
      // same bytes, only the mtime moved (touch, copy): keep the record, remember the new mtime
      if (existing.mtimeMs !== st.mtimeMs) await record({ ...existing, mtimeMs: st.mtimeMs })
      return { outcome: 'unchanged', path: rel, record: existing }
    }
    // Stored contents are immutable (docs/protocol.md §2.3): an edited file is a new version. The old
    // version keeps its ciphertext and registration under a path that names its CID, written in
    // the batch of the name's next record, whatever that record says.
    const archived = existing !== null && (!sameSize || existing.sha256 !== base.sha256) ? archivedVersion(existing) : undefined

    let env: Envelope
    try {
      env = parseEnvelopeBytes(bytes, { maxValues: deps.maxJsonValues })
    } catch (err) {
      // a proper prefix of a JSON object is never JSON: a file still being written lands here
      if (waitIfIncomplete && isHearthError(err) && err.code === 'INVALID_JSON') return { outcome: 'incomplete', path: rel, seen: { size: base.size, mtimeMs: readMtimeMs } }
      if (isHearthError(err)) return await reject(hashed(base), err.code, (err.details?.reasons as string[] | undefined) ?? [err.message], archived)
      throw err
    }
    const withEnvelope = { ...base, collectedAt: env.collectedAt }
    if (env.scope !== scopeFolder) {
      return await reject(hashed(withEnvelope), 'SCOPE_MISMATCH', [`envelope scope ${JSON.stringify(env.scope)} does not match its folder ${JSON.stringify(scopeFolder)}`], archived)
    }
    // a file names the schema version it was written for; validate against that one when known
    const named = await (seen?.schemaByUrl ?? schemaByUrl)(env.$schema)
    const schema = named !== null && named.scope === env.scope ? named : await resolveSchema(env.scope)
    if (schema === null) {
      const r = await record({ ...hashed(withEnvelope), state: 'waiting-schema', reasons: [`no schema known yet for scope ${env.scope}`] }, undefined, archived)
      return { outcome: 'waiting-schema', path: rel, record: r }
    }
    const verdict = deps.validate(schema, env.data)
    if (!verdict.ok) return await reject({ ...hashed(withEnvelope), schemaId: schema.id }, 'SCHEMA_VALIDATION_FAILED', verdict.reasons, archived)

    let stored: StoredCiphertext
    try {
      // a file over the journal's size is streamed to the worker and stored durably before its record
      stored = await encryptAndStore(env, bytes, journal !== undefined && small)
    } catch (err) {
      // storage down: the file is safe on disk and retried; the index says so, so `versions`
      // and `status` show it instead of nothing
      if (isTransientFailure(err)) await record({ ...hashed(withEnvelope), schemaId: schema.id, state: 'waiting-storage', reasons: [`storage unavailable: ${(err as Error).message}`] }, undefined, archived)
      throw err
    }
    const { cid, encryptedSize } = stored
    // a dropped file's bytes are its writer's; the journal holds its ciphertext, and the
    // checkpoint syncs the file with the block
    const sha256 = withEnvelope.sha256 !== '' ? withEnvelope.sha256 : stored.plaintextSha256 ?? sha256Hex(bytes)
    const r = await record({ ...withEnvelope, sha256, schemaId: schema.id, cid, encryptedSize, state: 'stored' }, journalEntryOf(rel, stored, null, [abs]), archived)
    log.info({ path: rel, cid, schemaId: schema.id }, 'file stored')
    if (r.origin === 'local') deps.onStored?.(r)
    deps.onIndexed?.(r, env.data)
    return { outcome: 'ingested', path: rel, record: r }
  }

  async function ingestPath (rel: string, opts: IngestPathOptions = {}): Promise<IngestResult> {
    const cls = classifyDataPath(rel)
    if (cls.kind === 'ignored') return { outcome: 'ignored', path: cls.rel, reason: cls.reason }
    try {
      return await locks.run(cls.rel, async () => await ingestLocked(cls, opts.origin ?? 'local', opts.waitIfIncomplete === true))
    } catch (err) {
      // a full disk (blocks, index) is waited out like an unreachable storage backend
      throw asStorageFull(err, `storing ${cls.rel}`)
    }
  }

  return { ingestPath, ingestLocked }
}
