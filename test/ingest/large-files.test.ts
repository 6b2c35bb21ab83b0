// Large files through the pipeline as the daemon runs it: encryption streamed on a worker thread,
// its pieces chunked, hashed and written durably by the embedded node as they come.
import { test, type TestContext } from 'node:test'
import assert from 'node:assert/strict'
import { createHash, randomBytes } from 'node:crypto'
import { mkdir, readdir, readFile, writeFile } from 'node:fs/promises'
import { join } from 'node:path'
import * as openpgp from 'openpgp'
import { createIngestPipeline, type IngestPipeline } from '../../src/ingest/pipeline.js'
import type { EarlyEncryption } from '../../src/ingest/early-encryption.js'
import { createByteBudget, type ByteBudget } from '../../src/lifecycle/byte-budget.js'
import { createEncryptionWorkers, workerEncryptor, type Encryptor } from '../../src/ingest/encryptor.js'
import { createIngestJournal } from '../../src/ingest/journal.js'
import { createFileSyncer } from '../../src/storage/deferred-sync.js'
import type { WorkerPool } from '../../src/lifecycle/worker-pool.js'
import { createEmbeddedStorage } from '../../src/storage/embedded.js'
import type { StorageBackend } from '../../src/storage/types.js'
import type { FileIndex } from '../../src/db/file-index.js'
import { scopeKeyHex } from '../../src/protocol/keys.js'
import { HearthError, isHearthError } from '../../src/errors.js'
import { silentLogger } from '../../src/log.js'
import { SCHEMA, SCOPE, ingestWorkspace, schemaLookup } from '../support/ingest-fixtures.js'
import { buildEnvelope, serializeEnvelope } from '../../src/protocol/envelope.js'
import { tempDir } from '../support/tmp.js'
import { referenceCid } from '../support/reference-cid.js'

const MASTER = new Uint8Array(65).fill(9)
const MB = 1024 * 1024
/** What makes test/support/crashing-encryption-worker.ts die mid-job. */
const CRASH_MARKER = 'crash-the-encryption-worker'

interface Rig { pipeline: IngestPipeline, index: FileIndex, storage: StorageBackend, workers: WorkerPool, dataDir: string, blocksDir: string }

/** `journaled`: with the ingest journal, as the daemon runs the pipeline. */
/** `staging: false`: a storage that cannot stage (as Kubo): an early encryption's pieces are read after the validation. */
async function rig (t: TestContext, script?: URL, opts: { journaled?: boolean; encryptor?: (e: Encryptor) => Encryptor; maxJsonValues?: number; admission?: ByteBudget; staging?: boolean } = {}): Promise<Rig> {
  const { dataDir, db, index, validate } = await ingestWorkspace(t, 'hearth-large-')
  const dir = await tempDir(t)
  const embedded = await createEmbeddedStorage({ blocksDir: join(dir, 'blocks'), datastoreDir: join(dir, 'datastore') })
  t.after(async () => { await embedded.stop() })
  const storage = opts.staging === false ? withoutStaging(embedded) : embedded
  const workers = createEncryptionWorkers({ size: 1, maxQueued: 4, maxFileBytes: 32 * MB, ...(script !== undefined ? { script } : {}) })
  await workers.start()
  t.after(async () => { await workers.stop() })
  const journal = opts.journaled === true ? createIngestJournal({ db, dataDir, storage, index, logger: silentLogger(), syncFiles: createFileSyncer() }) : undefined
  if (journal !== undefined) t.after(async () => { await journal.close() })
  const encryptor = opts.encryptor?.(workerEncryptor(workers)) ?? workerEncryptor(workers)
  const pipeline = createIngestPipeline({ dataDir, index, storage, schemas: schemaLookup, validate, masterKey: MASTER, logger: silentLogger(), encryptor, ...(journal !== undefined ? { journal } : {}), ...(opts.maxJsonValues !== undefined ? { maxJsonValues: opts.maxJsonValues } : {}), ...(opts.admission !== undefined ? { admission: opts.admission } : {}) })
  return { pipeline, index, storage, workers, dataDir, blocksDir: join(dir, 'blocks') }
}

/** The backend without `stageStream` (its methods bound to it: they use its private fields). */
function withoutStaging (backend: StorageBackend): StorageBackend {
  return new Proxy(backend, {
    get (target, key) {
      if (key === 'stageStream') return undefined
      const value = Reflect.get(target, key) as unknown
      return typeof value === 'function' ? value.bind(target) : value
    }
  })
}

function bigProfile (bytes: number, marker = ''): Record<string, unknown> {
  return { username: 'big', bio: marker + 'é'.repeat(Math.floor(bytes / 2)) }
}

test('a multi-MB file is stored from the worker\'s pieces: plain openpgp.decrypt reads it, its CID is the importer\'s', async (t) => {
  const r = await rig(t)
  const result = await r.pipeline.submit(SCOPE, bigProfile(5 * MB))
  assert.equal(result.status, 'stored')
  const cid = result.record.cid!
  const ciphertext = await r.storage.get(cid)
  assert.equal(result.record.encryptedSize, ciphertext.byteLength)
  assert.equal(cid, await referenceCid(ciphertext), 'the CID of ipfs add --cid-version 1 of the stored bytes')
  const onDisk = await readFile(join(r.dataDir, result.path))
  const { data } = await openpgp.decrypt({ message: await openpgp.readMessage({ binaryMessage: ciphertext }), passwords: [scopeKeyHex(MASTER, SCOPE)], format: 'binary' })
  assert.equal(Buffer.compare(Buffer.from(data), onDisk), 0, 'the ciphertext is the data file, encrypted')
  assert.equal(JSON.parse(onDisk.toString()).data.bio.length, 5 * MB / 2)
  const record = await r.index.get(result.path)
  assert.equal(record?.cid, cid)
  assert.equal(record?.sha256, createHash('sha256').update(onDisk).digest('hex'), 'the plaintext digest the worker computed on the way')
  assert.equal((await r.workers.status()).finished, 1, 'encrypted on the worker')
})

test('a dropped multi-MB file takes the same path', async (t) => {
  const r = await rig(t)
  const posted = await r.pipeline.submit(SCOPE, bigProfile(3 * MB), { collectedAt: '2026-02-01T00:00:00Z' })
  assert.equal(posted.status, 'stored')
  // the same bytes dropped under another name are stored again (a new encryption, a new CID)
  const rel = `${SCOPE}/2026-02-01T00-00-00Z.json`
  await writeFile(join(r.dataDir, SCOPE, '2026-02-02T00-00-00Z.json'), (await readFile(join(r.dataDir, rel))).toString().replace('2026-02-01T00:00:00Z', '2026-02-02T00:00:00Z'))
  const dropped = await r.pipeline.ingestPath(`${SCOPE}/2026-02-02T00-00-00Z.json`)
  assert.equal(dropped.outcome, 'ingested')
  const ciphertext = await r.storage.get(dropped.record!.cid!)
  assert.equal(dropped.record!.cid, await referenceCid(ciphertext))
  assert.equal((await r.workers.status()).finished, 2)
})

test('a dropped multi-MB file with the journal is streamed to the worker, which hashes it: the main thread hashes it only when its record has the same size', async (t) => {
  const calls = { whole: 0, chunks: 0 }
  const r = await rig(t, undefined, {
    journaled: true,
    encryptor: (e) => ({
      encrypt: async (plaintext, password) => { calls.whole++; return await e.encrypt(plaintext, password) },
      encryptChunks: (plaintext, password) => { calls.chunks++; return e.encryptChunks(plaintext, password) }
    })
  })
  const rel = `${SCOPE}/2026-02-03T00-00-00Z.json`
  const bytes = (bio: string): Buffer => Buffer.from(serializeEnvelope(buildEnvelope({ definitionUrl: SCHEMA.definitionUrl, scope: SCOPE, collectedAt: '2026-02-03T00:00:00Z', data: { username: 'big', bio } })))
  const sha256 = (b: Uint8Array): string => createHash('sha256').update(b).digest('hex')
  const first = bytes('a'.repeat(2 * MB))
  await mkdir(join(r.dataDir, SCOPE), { recursive: true })
  await writeFile(join(r.dataDir, rel), first)
  const dropped = await r.pipeline.ingestPath(rel)
  assert.equal(dropped.outcome, 'ingested')
  assert.deepEqual(calls, { whole: 0, chunks: 1 }, 'streamed: the worker hashes its pieces and the plaintext')
  assert.equal(dropped.record!.sha256, sha256(first), 'the worker\'s digest')
  assert.equal(dropped.record!.cid, await referenceCid(await r.storage.get(dropped.record!.cid!)))
  // an edit of the same size: hashed first (it might be the same bytes), a new version; a touch: nothing
  const edited = bytes('b'.repeat(2 * MB))
  await writeFile(join(r.dataDir, rel), edited)
  const again = await r.pipeline.ingestPath(rel)
  assert.equal(again.outcome, 'ingested')
  assert.equal(again.record!.sha256, sha256(edited))
  assert.equal((await r.index.get(`${rel}#${dropped.record!.cid!}`))?.sha256, sha256(first), 'the first version archived')
  await writeFile(join(r.dataDir, rel), edited)
  assert.equal((await r.pipeline.ingestPath(rel)).outcome, 'unchanged', 'the same bytes written again')
  // a longer edit: a new version, hashed by the worker
  const longer = bytes('c'.repeat(3 * MB))
  await writeFile(join(r.dataDir, rel), longer)
  const third = await r.pipeline.ingestPath(rel)
  assert.equal(third.record!.sha256, sha256(longer))
  assert.equal((await r.index.get(`${rel}#${again.record!.cid!}`))?.sha256, sha256(edited))
  assert.deepEqual(calls, { whole: 0, chunks: 3 })
})

test('a worker that dies mid-file fails that POST with WORKER_FAILED, keeps no file, and the next POST is stored', async (t) => {
  const r = await rig(t, new URL('../support/crashing-encryption-worker.ts', import.meta.url))
  await assert.rejects(r.pipeline.submit(SCOPE, bigProfile(2 * MB, CRASH_MARKER)), (err) => isHearthError(err, 'WORKER_FAILED') && err.status === 503)
  assert.deepEqual((await readdir(join(r.dataDir, SCOPE))).filter((n) => !n.startsWith('.')), [], 'no data file left for a failed POST')
  const next = await r.pipeline.submit(SCOPE, bigProfile(2 * MB))
  assert.equal(next.status, 'stored')
  const status = await r.workers.status()
  assert.equal(status.crashed, 1)
  assert.equal(status.finished, 1)
})

test('a large body is stored as it came when canonical, serialised again when not: the file is serializeEnvelope\'s bytes either way', async (t) => {
  const r = await rig(t)
  const data = bigProfile(1 * MB)
  for (const [label, json] of [
    ['canonical', JSON.stringify(data)],
    ['pretty-printed', JSON.stringify(data, null, 2)],
    ['escaped slash', JSON.stringify(data).replace('"big"', '"b\\/g"')]
  ] as const) {
    const parsed = JSON.parse(json) as Record<string, unknown>
    const result = await r.pipeline.submit(SCOPE, parsed, { json: Buffer.from(json) })
    assert.equal(result.status, 'stored', label)
    const onDisk = await readFile(join(r.dataDir, result.path))
    const expected = serializeEnvelope(buildEnvelope({ definitionUrl: SCHEMA.definitionUrl, scope: SCOPE, collectedAt: result.collectedAt, data: parsed }))
    assert.equal(Buffer.compare(onDisk, Buffer.from(expected)), 0, label)
    const ciphertext = await r.storage.get(result.record.cid!)
    const { data: plain } = await openpgp.decrypt({ message: await openpgp.readMessage({ binaryMessage: ciphertext }), passwords: [scopeKeyHex(MASTER, SCOPE)], format: 'binary' })
    assert.equal(Buffer.compare(Buffer.from(plain), onDisk), 0, label)
  }
})

test('a large canonical body is encrypted while it is parsed and validated: one worker job, the same stored bytes', async (t) => {
  const r = await rig(t)
  const json = Buffer.from(JSON.stringify(bigProfile(2 * MB)))
  const early = await earlyFor(r, SCOPE, json)
  assert.ok(early !== null, 'started before the parse')
  const data = JSON.parse(json.toString()) as Record<string, unknown>
  const result = await r.pipeline.submit(SCOPE, data, { json: early.room, early })
  assert.equal(result.status, 'stored')
  assert.equal(result.collectedAt, early.collectedAt)
  const onDisk = await readFile(join(r.dataDir, result.path))
  const expected = serializeEnvelope(buildEnvelope({ definitionUrl: SCHEMA.definitionUrl, scope: SCOPE, collectedAt: result.collectedAt, data }))
  assert.equal(Buffer.compare(onDisk, Buffer.from(expected)), 0)
  const ciphertext = await r.storage.get(result.record.cid!)
  assert.equal(result.record.cid, await referenceCid(ciphertext))
  const { data: plain } = await openpgp.decrypt({ message: await openpgp.readMessage({ binaryMessage: ciphertext }), passwords: [scopeKeyHex(MASTER, SCOPE)], format: 'binary' })
  assert.equal(Buffer.compare(Buffer.from(plain), onDisk), 0)
  assert.equal((await r.workers.status()).finished, 1, 'encrypted once')
  assert.equal(await earlyFor(r, SCOPE, Buffer.from(JSON.stringify(data, null, 1))), null, 'a body that is not canonical waits for the parse')
  assert.equal(await r.pipeline.prepare('unknown.scope', json.byteLength), null, 'nor does one of a scope without a schema')
  assert.equal(await r.pipeline.prepare(SCOPE, 200_000), null, 'nor a body of one chunk or less')
  await untilIdle(r.workers) // the job for the body that was not canonical ends without being read
  const status = await r.workers.status()
  assert.deepEqual([status.cancelled, status.failed], [1, 0], 'it was cancelled, not failed')
})

test('a large body not in canonical form is serialised again into shared memory: the worker gets the envelope without a copy', async (t) => {
  const handed: boolean[] = []
  const r = await rig(t, undefined, {
    encryptor: (e) => ({ ...e, encryptChunks: (plaintext, passwordHex) => { handed.push(plaintext.buffer instanceof SharedArrayBuffer); return e.encryptChunks(plaintext, passwordHex) } })
  })
  const data = bigProfile(2 * MB)
  const spaced = Buffer.from(JSON.stringify(data, null, 1))
  const result = await r.pipeline.submit(SCOPE, data, { json: spaced })
  assert.equal(result.status, 'stored')
  assert.deepEqual(handed, [true], 'shared memory, which postMessage does not copy')
  const onDisk = await readFile(join(r.dataDir, result.path))
  const expected = serializeEnvelope(buildEnvelope({ definitionUrl: SCHEMA.definitionUrl, scope: SCOPE, collectedAt: result.collectedAt, data }))
  assert.equal(Buffer.compare(onDisk, Buffer.from(expected)), 0, 'the same bytes as serializeEnvelope gives')
  const ciphertext = await r.storage.get(result.record.cid!)
  const { data: plain } = await openpgp.decrypt({ message: await openpgp.readMessage({ binaryMessage: ciphertext }), passwords: [scopeKeyHex(MASTER, SCOPE)], format: 'binary' })
  assert.equal(Buffer.compare(Buffer.from(plain), onDisk), 0)
})

test('a large body of many small values is encrypted early too; past the token bound of ingest.maxJsonValues it waits for the parse', async (t) => {
  // 100,000 members (~1.5 MB, 400,001 tokens): past the fixed 50,000-token cap of before
  const data = { username: 'many', bio: 'b', ...Object.fromEntries(Array.from({ length: 100_000 }, (_, i) => [`k${i}`, i])) }
  const json = Buffer.from(JSON.stringify(data))
  const r = await rig(t)
  const early = await earlyFor(r, SCOPE, json)
  assert.ok(early !== null, 'started before the parse')
  const result = await r.pipeline.submit(SCOPE, data, { json: early.room, early })
  assert.equal(result.status, 'stored')
  assert.equal(result.collectedAt, early.collectedAt, 'the early encryption was the one stored')
  assert.equal((await r.workers.status()).finished, 1, 'encrypted once')
  const bounded = await rig(t, undefined, { maxJsonValues: 10_000 })
  assert.equal(await earlyFor(bounded, SCOPE, json), null, 'more tokens than 10,000 values can have: not scanned to the end')
})

test('an early encryption of data that fails validation stores nothing, and the next request is stored', async (t) => {
  const r = await rig(t)
  const invalid = { bio: 'x'.repeat(2 * MB) } // no username
  const json = Buffer.from(JSON.stringify(invalid))
  const early = await earlyFor(r, SCOPE, json)
  assert.ok(early !== null)
  await assert.rejects(r.pipeline.submit(SCOPE, invalid, { json: early.room, early }), (err) => isHearthError(err, 'SCHEMA_VALIDATION_FAILED'))
  assert.deepEqual((await readdir(join(r.dataDir, SCOPE)).catch(() => [])).filter((n) => !n.startsWith('.')), [])
  const ok = await r.pipeline.submit(SCOPE, bigProfile(2 * MB), { json: Buffer.from(JSON.stringify(bigProfile(2 * MB))) })
  assert.equal(ok.status, 'stored')
  const blocks = await listFiles(r.blocksDir)
  const dagBlocks = Math.ceil(ok.record.encryptedSize! / 262_144) + 1
  assert.equal(blocks.length, dagBlocks, 'only the stored file\'s blocks are in the blockstore')
})

test('a store that fails mid-file releases the worker job at once: its pieces dropped, the job cancelled, the worker free', async (t) => {
  const r = await rig(t, undefined, { staging: false })
  const { encryptAndStore } = await import('../../src/ingest/encrypt-store.js')
  const failing: StorageBackend = {
    ...r.storage,
    add: r.storage.add.bind(r.storage),
    async addStream (pieces) {
      for await (const _ of pieces) throw new HearthError('STORAGE_UNAVAILABLE', 'the disk went away after one piece')
      return ''
    }
  }
  const password = scopeKeyHex(MASTER, SCOPE)
  const plaintext = new Uint8Array(randomBytes(8 * MB))
  const encryptor = workerEncryptor(r.workers)
  await assert.rejects(encryptAndStore({ storage: failing, encryptor }, plaintext, password), (err) => isHearthError(err, 'STORAGE_UNAVAILABLE'))
  assert.equal((await r.workers.status()).cancelled, 1, 'the streamed job')
  const json = Buffer.from(JSON.stringify(bigProfile(2 * MB)))
  const early = await earlyFor(r, SCOPE, json)
  assert.ok(early !== null)
  await assert.rejects(encryptAndStore({ storage: failing, encryptor }, early.bytes, password, early.pieces), (err) => isHearthError(err, 'STORAGE_UNAVAILABLE'))
  assert.equal((await r.workers.status()).cancelled, 2, 'the early job')
  // the pool's one worker is free for the next file
  const stored = await encryptAndStore({ storage: r.storage, encryptor }, plaintext, password)
  assert.equal(stored.cid, await referenceCid(await r.storage.get(stored.cid)))
  assert.equal((await r.workers.status()).finished, 1)
})

/**
 * A body read as the API reads it: the early encryption prepared from its declared length, the body
 * copied into its room in socket-sized chunks (`pause` between them), then completed; null when
 * the body is not encrypted early.
 */
async function earlyFor (r: Rig, scope: string, json: Buffer, pause?: () => Promise<void>): Promise<EarlyEncryption | null> {
  const early = await r.pipeline.prepare(scope, json.byteLength)
  if (early === null) return null
  for (let at = 0; at < json.byteLength; at += 65_536) {
    json.copy(early.room, at, at, at + 65_536)
    early.received(Math.min(json.byteLength, at + 65_536))
    await pause?.()
  }
  return early.complete(early.room) ? early : null
}

async function untilIdle (workers: WorkerPool): Promise<void> {
  for (let i = 0; i < 500 && (await workers.status()).busy > 0; i++) await new Promise((resolve) => setTimeout(resolve, 10))
}

test('a large body is encrypted while it arrives: the first pieces are out before the last bytes came', async (t) => {
  const r = await rig(t, undefined, { staging: false })
  for await (const _ of workerEncryptor(r.workers).encryptChunks(new Uint8Array(300_000), scopeKeyHex(MASTER, SCOPE))) {} // the worker started
  const data = bigProfile(8 * MB)
  const json = Buffer.from(JSON.stringify(data))
  const early = await r.pipeline.prepare(SCOPE, json.byteLength)
  assert.ok(early !== null)
  const pieces = early.pieces[Symbol.asyncIterator]()
  const half = Math.floor(json.byteLength / 2)
  json.copy(early.room, 0, 0, half)
  early.received(half)
  const firstPiece = await pieces.next()
  assert.equal(firstPiece.done, false, 'a piece of the first half, with the second half not there yet')
  json.copy(early.room, half, half)
  early.received(json.byteLength)
  assert.equal(early.complete(early.room), true)
  const ciphertext: Uint8Array[] = [(firstPiece.value as { bytes: Uint8Array }).bytes]
  for (let p = await pieces.next(); p.done !== true; p = await pieces.next()) if ('bytes' in p.value) ciphertext.push(p.value.bytes)
  const { data: plain } = await openpgp.decrypt({ message: await openpgp.readMessage({ binaryMessage: Buffer.concat(ciphertext) }), passwords: [scopeKeyHex(MASTER, SCOPE)], format: 'binary' })
  const expected = serializeEnvelope(buildEnvelope({ definitionUrl: SCHEMA.definitionUrl, scope: SCOPE, collectedAt: early.collectedAt, data }))
  assert.equal(Buffer.compare(Buffer.from(plain), Buffer.from(expected)), 0, 'the envelope of the body as it came')
  assert.equal(Buffer.compare(Buffer.from(early.bytes), Buffer.from(expected)), 0)
})

test('while the worker is busy with another body, a body is given to it once it is all there, not while it arrives', async (t) => {
  const r = await rig(t)
  const dataA = bigProfile(2 * MB, 'a')
  const dataB = bigProfile(2 * MB, 'b')
  const jsonA = Buffer.from(JSON.stringify(dataA))
  const jsonB = Buffer.from(JSON.stringify(dataB))
  const a = await r.pipeline.prepare(SCOPE, jsonA.byteLength)
  assert.ok(a !== null)
  const b = await r.pipeline.prepare(SCOPE, jsonB.byteLength)
  assert.ok(b !== null)
  assert.deepEqual([(await r.workers.status()).busy, (await r.workers.status()).queued], [1, 0], 'A holds the worker while it arrives; B is not queued behind it')
  jsonB.copy(b.room)
  b.received(jsonB.byteLength)
  assert.equal(b.complete(b.room), true)
  assert.equal((await r.workers.status()).queued, 1, 'B, all there, waits for the worker')
  jsonA.copy(a.room)
  a.received(jsonA.byteLength)
  assert.equal(a.complete(a.room), true)
  for (const [early, data] of [[a, dataA], [b, dataB]] as const) {
    const result = await r.pipeline.submit(SCOPE, data, { json: early.room, early })
    assert.equal(result.status, 'stored')
    const ciphertext = await r.storage.get(result.record.cid!)
    const { data: plain } = await openpgp.decrypt({ message: await openpgp.readMessage({ binaryMessage: ciphertext }), passwords: [scopeKeyHex(MASTER, SCOPE)], format: 'binary' })
    assert.equal(Buffer.compare(Buffer.from(plain), await readFile(join(r.dataDir, result.path))), 0)
  }
  assert.equal((await r.workers.status()).finished, 2, 'each encrypted once')
})

test('while another large body is being handled, a body is given to the worker once it is all there', async (t) => {
  const admission = createByteBudget({ name: 'large bodies', limitBytes: 64 * MB, maxWaiting: 4 })
  const r = await rig(t, undefined, { admission })
  const json = Buffer.from(JSON.stringify(bigProfile(2 * MB)))
  let release = (): void => {}
  const other = admission.run(3 * MB, async () => { await new Promise<void>((resolve) => { release = resolve }) })
  const early = await r.pipeline.admit(json.byteLength, async () => await r.pipeline.prepare(SCOPE, json.byteLength))
  assert.ok(early !== null)
  assert.deepEqual([(await r.workers.status()).busy, (await r.workers.status()).queued], [0, 0], 'no worker waits on this body while the other arrives too')
  json.copy(early.room)
  early.received(json.byteLength)
  assert.equal(early.complete(early.room), true)
  const result = await r.pipeline.submit(SCOPE, JSON.parse(json.toString()), { json: early.room, early })
  assert.equal(result.status, 'stored')
  assert.equal(result.collectedAt, early.collectedAt)
  assert.equal((await r.workers.status()).finished, 1)
  release()
  await other
})

test('a body that arrives too slowly gives its worker back meanwhile and is encrypted once it is all there, before the parse; an aborted upload is cancelled', async (t) => {
  const r = await rig(t)
  const data = bigProfile(2 * MB)
  const json = Buffer.from(JSON.stringify(data))
  // a client that goes quiet after its first chunk: the worker is given back by the stall guard
  const quiet = await r.pipeline.prepare(SCOPE, json.byteLength)
  assert.ok(quiet !== null)
  json.copy(quiet.room, 0, 0, 65_536)
  quiet.received(65_536)
  await new Promise((resolve) => setTimeout(resolve, 300))
  for (let i = 0; i < 250 && (await r.workers.status()).cancelled === 0; i++) await new Promise((resolve) => setTimeout(resolve, 20)) // (a loaded machine's late timer)
  assert.equal((await r.workers.status()).cancelled, 1, 'the worker is not waiting on the quiet client')
  await untilIdle(r.workers) // (a worker still loading stops the job once it has loaded)
  // the pool's one worker is free: a file encrypted now is not stuck behind it
  const other = bigProfile(2 * MB, 'other')
  assert.equal((await r.pipeline.submit(SCOPE, other, { json: Buffer.from(JSON.stringify(other)) })).status, 'stored')
  json.copy(quiet.room, 65_536, 65_536)
  quiet.received(json.byteLength)
  assert.equal(quiet.complete(quiet.room), true, 'all there: its job is given again, before the parse')
  assert.equal((await r.workers.status()).busy, 1, 'encrypting while the body would be parsed and validated')
  const result = await r.pipeline.submit(SCOPE, data, { json: quiet.room, early: quiet })
  assert.equal(result.status, 'stored')
  assert.equal(result.collectedAt, quiet.collectedAt, 'the early encryption was the one stored')
  const ciphertext = await r.storage.get(result.record.cid!)
  const { data: plain } = await openpgp.decrypt({ message: await openpgp.readMessage({ binaryMessage: ciphertext }), passwords: [scopeKeyHex(MASTER, SCOPE)], format: 'binary' })
  assert.equal(Buffer.compare(Buffer.from(plain), await readFile(join(r.dataDir, result.path))), 0)
  // an upload aborted halfway: the route cancels it
  const aborted = await r.pipeline.prepare(SCOPE, json.byteLength)
  assert.ok(aborted !== null)
  aborted.received(1000)
  aborted.cancel()
  assert.equal((await r.pipeline.submit(SCOPE, bigProfile(2 * MB, 'last'), { json })).status, 'stored')
  const status = await r.workers.status()
  assert.deepEqual([status.finished, status.cancelled, status.busy], [3, 2, 0])
})

async function listFiles (dir: string): Promise<string[]> {
  const out: string[] = []
  for (const e of await readdir(dir, { withFileTypes: true, recursive: true })) if (e.isFile() && e.name.endsWith('.data')) out.push(e.name)
  return out
}

test('a worker job\'s pieces come with their SHA-256, the last one marked, then the plaintext\'s digest', async () => {
  const { runEncryptionJob } = await import('../../src/ingest/encryption-job.js')
  const password = scopeKeyHex(MASTER, SCOPE)
  const sha256 = (b: Uint8Array): Buffer => createHash('sha256').update(b).digest()
  for (const size of [300_000, 3 * 262_144, 2_000_001]) {
    const plaintext = new Uint8Array(randomBytes(size))
    const parts: Array<{ bytes?: Uint8Array, sha256?: Uint8Array, last?: true, plaintextSha256?: string }> = []
    for await (const part of runEncryptionJob({ op: 'chunks', plaintext, passwordHex: password, pieceBytes: 262_144 })) parts.push(part.value as typeof parts[number])
    const digest = parts.pop()!
    assert.deepEqual(digest, { plaintextSha256: sha256(plaintext).toString('hex') })
    for (const p of parts) assert.deepEqual(Buffer.from(p.sha256!), sha256(p.bytes!))
    assert.deepEqual(parts.map((p) => p.last === true), parts.map((_, i) => i === parts.length - 1))
    const { data } = await openpgp.decrypt({ message: await openpgp.readMessage({ binaryMessage: Buffer.concat(parts.map((p) => p.bytes!)) }), passwords: [password], format: 'binary' })
    assert.equal(Buffer.compare(Buffer.from(data), Buffer.from(plaintext)), 0)
  }
})

test('the worker hashes a piece only while the consumer is behind; one that keeps up gets pieces to hash itself', async () => {
  const { runEncryptionJob } = await import('../../src/ingest/encryption-job.js')
  const input = { op: 'chunks', plaintext: new Uint8Array(randomBytes(6 * 262_144)), passwordHex: scopeKeyHex(MASTER, SCOPE), pieceBytes: 262_144 }
  const hashedOf = async (taken: (sent: number) => number): Promise<boolean[]> => {
    const out: boolean[] = []
    for await (const part of runEncryptionJob(input, { taken: () => taken(out.length) })) {
      const value = part.value as { bytes?: Uint8Array, sha256?: Uint8Array }
      if (value.bytes === undefined) continue
      if (value.sha256 !== undefined) assert.deepEqual(Buffer.from(value.sha256), createHash('sha256').update(value.bytes).digest())
      out.push(value.sha256 !== undefined)
    }
    return out
  }
  assert.deepEqual(await hashedOf((sent) => sent), [false, false, false, false, false, false, false], 'a consumer waiting for each piece hashes them all')
  assert.deepEqual(await hashedOf(() => 0), [false, false, true, true, true, true, true], 'one that took nothing yet (parsing) gets them hashed, from the second waiting')
})
