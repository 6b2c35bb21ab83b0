// What a daemon builds to receive files from a peer, on a home folder `root`: the LevelDB index,
// the embedded storage, the ingest journal (its checkpoint far off unless told) and the pipeline
// with the file-writer thread. Shared by the receive crash tests and the process they SIGKILL.
import { mkdir } from 'node:fs/promises'
import { join } from 'node:path'
import { openDatabase, type HearthDatabase } from '../../src/db/database.js'
import { openFileIndex, type FileIndex } from '../../src/db/file-index.js'
import type { FileRecord } from '../../src/db/types.js'
import { createEmbeddedStorage } from '../../src/storage/embedded.js'
import { createFileSyncer } from '../../src/storage/deferred-sync.js'
import { createFileWriter, type FileWriter } from '../../src/storage/file-writer.js'
import type { StorageBackend } from '../../src/storage/types.js'
import { writingFolder } from '../../src/ingest/atomic-write.js'
import { createIngestJournal, type IngestJournal } from '../../src/ingest/journal.js'
import { createIngestPipeline, type IngestIndex, type IngestPipeline } from '../../src/ingest/pipeline.js'
import { createSchemaValidators } from '../../src/registry/validators.js'
import { scopeKeyHex } from '../../src/protocol/keys.js'
import { buildEnvelope, collectedAtToFileName, serializeEnvelope } from '../../src/protocol/envelope.js'
import { encryptEnvelopeBytes } from '../../src/protocol/encryption.js'
import { silentLogger } from '../../src/log.js'
import { SCHEMA, SCOPE, schemaLookup } from './ingest-fixtures.js'

export const MASTER = new Uint8Array(65).fill(7)

export interface ReceiveRig {
  dataDir: string
  db: HearthDatabase
  index: FileIndex
  storage: StorageBackend
  journal: IngestJournal
  pipeline: IngestPipeline
  writer: FileWriter
  close (): Promise<void>
}

export async function receiveRig (root: string, opts: { wrapIndex?: (index: FileIndex) => IngestIndex; delayMs?: number } = {}): Promise<ReceiveRig> {
  const dataDir = join(root, 'data')
  await mkdir(dataDir, { recursive: true })
  const db = await openDatabase(join(root, 'index'))
  const index = await openFileIndex({ db })
  const writer = createFileWriter({ tempDir: writingFolder(dataDir), spares: 2 })
  const storage = await createEmbeddedStorage({ blocksDir: join(root, 'blocks'), datastoreDir: join(root, 'datastore'), writer })
  const journal = createIngestJournal({ db, dataDir, storage, index, logger: silentLogger(), delayMs: opts.delayMs ?? 60_000, syncFiles: createFileSyncer() })
  const validators = createSchemaValidators()
  const pipeline = createIngestPipeline({
    dataDir, index: opts.wrapIndex?.(index) ?? index, storage, schemas: schemaLookup, masterKey: MASTER, logger: silentLogger(), journal, fileWriter: writer,
    validate: (schema, data) => validators.validateData(schema, data)
  })
  let closed = false
  return {
    dataDir, db, index, storage, journal, pipeline, writer,
    async close () {
      if (closed) return
      closed = true
      await storage.stop()
      await writer.close()
      await db.close()
    }
  }
}

/** A file as a peer sends it (its envelope and ciphertext) and the name it gets here. */
export async function peerFile (username: string, collectedAt = '2026-01-02T03:04:05.000Z'): Promise<{ plaintext: Uint8Array; ciphertext: Uint8Array; path: string }> {
  const plaintext = serializeEnvelope(buildEnvelope({ definitionUrl: SCHEMA.definitionUrl, scope: SCOPE, collectedAt, data: { username } }))
  const ciphertext = await encryptEnvelopeBytes(plaintext, scopeKeyHex(MASTER, SCOPE))
  return { plaintext, ciphertext, path: `${SCOPE}/${collectedAtToFileName(collectedAt)}` }
}

/** A version of `path` the index knows though its file is gone (a rejected one). */
export function rejectedVersion (path: string): FileRecord {
  return { path, scope: SCOPE, collectedAt: null, schemaId: null, cid: null, size: 3, encryptedSize: null, sha256: 'ab'.repeat(32), mtimeMs: 1, state: 'rejected', reasons: ['not JSON'], errorCode: 'INVALID_JSON', origin: 'local', updatedAt: 1 }
}
