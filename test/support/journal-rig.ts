// The ingest journal's test rig: everything a daemon builds for ingest (a LevelDB index, the
// embedded storage on disk, the journal, the pipeline, real OpenPGP) on a folder a test can close
// and open again, as a daemon killed and restarted would.
import type { TestContext } from 'node:test'
import assert from 'node:assert/strict'
import { mkdir } from 'node:fs/promises'
import { join } from 'node:path'
import * as openpgp from 'openpgp'
import { openDatabase, type HearthDatabase } from '../../src/db/database.js'
import { openFileIndex, type FileIndex } from '../../src/db/file-index.js'
import { createEmbeddedStorage } from '../../src/storage/embedded.js'
import { createFileSyncer } from '../../src/storage/deferred-sync.js'
import type { FileWriter } from '../../src/storage/file-writer.js'
import type { StorageBackend } from '../../src/storage/types.js'
import { createIngestJournal } from '../../src/ingest/journal.js'
import { createIngestPipeline, type IngestIndex } from '../../src/ingest/pipeline.js'
import { createSchemaValidators } from '../../src/registry/validators.js'
import { scopeKeyHex } from '../../src/protocol/keys.js'
import { silentLogger } from '../../src/log.js'
import { SCOPE, schemaLookup } from './ingest-fixtures.js'
import type { BlockDirs } from './stored-blocks.js'
import { MASTER, type ReceiveRig } from './receive-rig.js'

export { MASTER }

/** What receiveRig builds, with the file writer optional, and the files each checkpoint synced. */
export interface Rig extends Omit<ReceiveRig, 'writer'> {
  root: string
  synced: string[]
}

/** Everything a daemon builds for ingest, on `root`; `delayMs` large keeps entries in the journal. */
export async function rig (t: TestContext, root: string, delayMs = 60_000, wrapIndex?: (index: FileIndex) => IngestIndex, fileWriter?: FileWriter): Promise<Rig> {
  const dataDir = join(root, 'data')
  await mkdir(dataDir, { recursive: true })
  const db = await openDatabase(join(root, 'index'))
  const index = await openFileIndex({ db })
  const storage = await createEmbeddedStorage({ blocksDir: join(root, 'blocks'), datastoreDir: join(root, 'datastore') })
  const synced: string[] = []
  const syncer = createFileSyncer()
  const journal = createIngestJournal({
    db, dataDir, storage, index, logger: silentLogger(), delayMs,
    syncFiles: async (files) => { synced.push(...files); await syncer(files) }
  })
  const validators = createSchemaValidators()
  const pipeline = createIngestPipeline({
    dataDir, index: wrapIndex?.(index) ?? index, storage, schemas: schemaLookup, masterKey: MASTER, logger: silentLogger(), journal,
    ...(fileWriter !== undefined ? { fileWriter } : {}),
    validate: (schema, data) => validators.validateData(schema, data)
  })
  let closed = false
  const close = async (): Promise<void> => {
    if (closed) return
    closed = true
    await storage.stop()
    await db.close()
  }
  t.after(close)
  return { root, dataDir, db, index, storage, journal, pipeline, synced, close }
}

/** The index as the pipeline sees it: every call passed through to `index` but those `over` makes otherwise. */
export function indexWith (index: FileIndex, over: Partial<IngestIndex> = {}): IngestIndex {
  return {
    get: async (path) => await index.get(path),
    getMany: async (paths) => await index.getMany(paths),
    prior: async (path) => await index.prior(path),
    byCid: async (cid) => await index.byCid(cid),
    delete: async (path) => await index.delete(path),
    revert: async (path, earlier, opts) => { await index.revert(path, earlier, opts) },
    put: async (record, opts) => await index.put(record, opts),
    putDerived: async (path, derive, opts) => await index.putDerived(path, derive, opts),
    ...over
  }
}

export async function journalKeys (db: HearthDatabase): Promise<Array<[string, Uint8Array]>> {
  return await db.sublevel<Uint8Array>('ingest-journal', { valueEncoding: 'view' }).iterator().all()
}

export async function decrypts (storage: StorageBackend, cid: string, expected: Buffer): Promise<void> {
  const message = await openpgp.readMessage({ binaryMessage: await storage.get(cid) })
  const { data } = await openpgp.decrypt({ message, passwords: [scopeKeyHex(MASTER, SCOPE)], format: 'binary' })
  assert.deepEqual(Buffer.from(data), expected)
}

export async function postSome (r: Rig, n: number): Promise<Array<{ path: string; cid: string }>> {
  const results = await Promise.all(Array.from({ length: n }, async (_, i) => await r.pipeline.submit(SCOPE, { username: `user${i}` })))
  return results.map((res) => {
    assert.equal(res.status, 'stored')
    if (res.status !== 'stored') throw new Error('not stored')
    return { path: res.path, cid: res.record.cid! }
  })
}

/** The rig's store folders (for looking at its blocks once it is closed). */
export const blockDirs = (root: string): BlockDirs => ({ blocks: join(root, 'blocks'), datastore: join(root, 'datastore') })
