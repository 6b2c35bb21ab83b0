// A batch of files just seen written (pipeline.ingestMany): the same outcomes as one file at a
// time, with the shared work done once — on real files and a real index. Symlinks, FIFOs and
// folders go the general way (resolved, refused without blocking, ignored); a path named twice or
// already being ingested is ingested once; a half-written file is `incomplete` and nothing is recorded.
import { test, type TestContext } from 'node:test'
import assert from 'node:assert/strict'
import { execFileSync } from 'node:child_process'
import { mkdir, symlink, writeFile } from 'node:fs/promises'
import { join } from 'node:path'
import { createHash } from 'node:crypto'
import { createIngestPipeline, type IngestIndex, type IngestPipeline, type Validate } from '../../src/ingest/pipeline.js'
import { decryptEnvelopeBytes } from '../../src/protocol/encryption.js'
import { scopeKeyHex } from '../../src/protocol/keys.js'
import { silentLogger } from '../../src/log.js'
import { memoryStorage, type MemoryStorage } from '../support/memory-storage.js'
import { openDatabase } from '../../src/db/database.js'
import { openFileIndex, type FileIndex } from '../../src/db/file-index.js'
import { createSchemaValidators } from '../../src/registry/validators.js'
import { SCOPE, envelope, ingestWorkspace, schemaLookup } from '../support/ingest-fixtures.js'
import { tempDir } from '../support/tmp.js'

const MASTER = new Uint8Array(65).fill(7)

async function rig (t: TestContext): Promise<{ pipeline: IngestPipeline; index: FileIndex; storage: MemoryStorage; dataDir: string; stored: string[]; validate: Validate }> {
  const { dataDir, index, storage, validate } = await ingestWorkspace(t, 'hearth-ingest-many-')
  const stored: string[] = []
  const pipeline = createIngestPipeline({ dataDir, index, storage, schemas: schemaLookup, validate, masterKey: MASTER, logger: silentLogger(), onStored: (r) => { stored.push(r.path) } })
  await mkdir(join(dataDir, SCOPE))
  return { pipeline, index, storage, dataDir, stored, validate }
}

const name = (i: number): string => `2026-03-01T00-00-${String(i).padStart(2, '0')}Z.json`
const at = (i: number): string => `2026-03-01T00:00:${String(i).padStart(2, '0')}Z`

/** Envelopes number `from` to `to` (exclusive) written into the scope folder; their paths. */
async function writeEnvelopes (dataDir: string, from: number, to: number): Promise<string[]> {
  const rels: string[] = []
  for (let i = from; i < to; i++) {
    await writeFile(join(dataDir, SCOPE, name(i)), envelope(`user${i}`, at(i)))
    rels.push(`${SCOPE}/${name(i)}`)
  }
  return rels
}

test('a batch of dropped files: each stored once and decryptable, results in order, a second batch changes nothing', async (t) => {
  const r = await rig(t)
  const rels = await writeEnvelopes(r.dataDir, 0, 20)
  const batch = [...rels, rels[3]!, `${SCOPE}/notes.txt`, `${SCOPE}/${name(99)}`]
  const results = await r.pipeline.ingestMany(batch, { justWritten: true })
  assert.deepEqual(results.map((x) => x.ok ? x.value.outcome : 'error'), [...rels.map(() => 'ingested'), 'ingested', 'ignored', 'missing'])
  assert.deepEqual(r.stored.sort(), [...rels].sort(), 'a path named twice is ingested once')
  assert.equal(r.storage.blobs.size, 20)
  for (const rel of [rels[0]!, rels[19]!]) {
    const record = await r.index.get(rel)
    const plain = JSON.parse(new TextDecoder().decode(await decryptEnvelopeBytes(await r.storage.get(record!.cid!), scopeKeyHex(MASTER, SCOPE))))
    assert.equal(plain.collectedAt, at(rels.indexOf(rel)))
  }
  const again = await r.pipeline.ingestMany(rels, { justWritten: true })
  assert.ok(again.every((x) => x.ok && x.value.outcome === 'unchanged'))
  assert.equal(r.storage.blobs.size, 20, 'nothing encrypted again')
})

test('in a batch, a symlink is resolved (inside: stored; outside: refused), a FIFO is refused without blocking, a folder is ignored', async (t) => {
  const r = await rig(t)
  const outside = await tempDir(t, 'hearth-outside-')
  await writeFile(join(outside, 'secret.json'), envelope('secret', at(1)))
  await mkdir(join(r.dataDir, 'elsewhere'))
  await writeFile(join(r.dataDir, 'elsewhere', 'target.json'), envelope('linked', at(2)))
  await symlink(join(outside, 'secret.json'), join(r.dataDir, SCOPE, name(1)))
  await symlink(join(r.dataDir, 'elsewhere', 'target.json'), join(r.dataDir, SCOPE, name(2)))
  execFileSync('mkfifo', [join(r.dataDir, SCOPE, name(3))])
  await mkdir(join(r.dataDir, SCOPE, name(4)))
  const results = await r.pipeline.ingestMany([1, 2, 3, 4].map((i) => `${SCOPE}/${name(i)}`), { justWritten: true })
  const view = results.map((x) => x.ok ? [x.value.outcome, x.value.record?.errorCode ?? null] : ['error', null])
  assert.deepEqual(view, [['rejected', 'PATH_OUTSIDE_DATA'], ['ingested', null], ['rejected', 'FILE_UNREADABLE'], ['ignored', null]])
})

test('in a batch, a scope folder that is a symlink out of the data folder is refused; one that stays inside is read', async (t) => {
  const r = await rig(t)
  const outside = await tempDir(t, 'hearth-outside-')
  await mkdir(join(outside, 'other.scope'))
  await writeFile(join(outside, 'other.scope', name(1)), envelope('secret', at(1)).replace(`"${SCOPE}"`, '"other.scope"'))
  await symlink(join(outside, 'other.scope'), join(r.dataDir, 'other.scope'))
  await mkdir(join(r.dataDir, '.real'))
  await writeFile(join(r.dataDir, '.real', name(2)), envelope('linked', at(2)))
  await symlink(join(r.dataDir, '.real'), join(r.dataDir, 'linked.scope'))
  const results = await r.pipeline.ingestMany([`other.scope/${name(1)}`, `linked.scope/${name(2)}`], { justWritten: true })
  const view = results.map((x) => x.ok ? [x.value.outcome, x.value.record?.errorCode ?? null] : ['error', null])
  assert.deepEqual(view, [['rejected', 'PATH_OUTSIDE_DATA'], ['rejected', 'SCOPE_MISMATCH']], 'the linked folder inside is read (its envelope names another scope)')
})

test('a half-written file is incomplete when it may still be written (nothing recorded), rejected otherwise', async (t) => {
  const r = await rig(t)
  const rel = `${SCOPE}/${name(5)}`
  await writeFile(join(r.dataDir, rel), envelope('half', at(5)).slice(0, 40))
  const [early] = await r.pipeline.ingestMany([rel], { waitIfIncomplete: true, justWritten: true })
  assert.ok(early?.ok)
  assert.equal(early.value.outcome, 'incomplete')
  assert.equal(early.value.seen?.size, 40)
  assert.equal(await r.index.get(rel), null, 'nothing recorded')
  const [last] = await r.pipeline.ingestMany([rel], { justWritten: true })
  assert.ok(last?.ok)
  assert.equal(last.value.outcome, 'rejected')
  assert.equal(last.value.record?.errorCode, 'INVALID_JSON')
})

test('a file ingested by another path while in a batch is ingested once', async (t) => {
  const r = await rig(t)
  const rel = `${SCOPE}/${name(6)}`
  await writeFile(join(r.dataDir, rel), envelope('raced', at(6)))
  const [one, [many]] = await Promise.all([r.pipeline.ingestPath(rel), r.pipeline.ingestMany([rel], { justWritten: true })])
  assert.ok(many?.ok)
  assert.deepEqual([one.outcome, many.value.outcome].sort(), ['ingested', 'unchanged'])
  assert.equal(r.storage.blobs.size, 1)
})

test('a scan\'s batch (files not just written): unchanged files are left alone, a changed one is a new version, a FIFO or folder goes the general way', async (t) => {
  const r = await rig(t)
  const rels = await writeEnvelopes(r.dataDir, 10, 14)
  assert.ok((await r.pipeline.ingestMany(rels)).every((x) => x.ok && x.value.outcome === 'ingested'))
  const before = await r.index.get(rels[1]!)
  await writeFile(join(r.dataDir, rels[1]!), envelope('edited', at(11)))
  execFileSync('mkfifo', [join(r.dataDir, SCOPE, name(14))])
  await mkdir(join(r.dataDir, SCOPE, name(15)))
  const results = await r.pipeline.ingestMany([...rels, `${SCOPE}/${name(14)}`, `${SCOPE}/${name(15)}`, `${SCOPE}/${name(16)}`])
  assert.deepEqual(results.map((x) => x.ok ? x.value.outcome : 'error'), ['unchanged', 'ingested', 'unchanged', 'unchanged', 'rejected', 'ignored', 'missing'])
  assert.equal(r.storage.blobs.size, 5, 'only the edited file encrypted again')
  assert.equal((await r.index.get(`${rels[1]!}#${before!.cid!}`))?.state, 'stored', 'its old version archived')
})

test('a scan\'s changed file is looked up once: its stat and record from the batch, no second read of either', async (t) => {
  const r = await rig(t)
  const rels = await writeEnvelopes(r.dataDir, 20, 23)
  assert.ok((await r.pipeline.ingestMany(rels)).every((x) => x.ok && x.value.outcome === 'ingested'))
  await writeFile(join(r.dataDir, rels[2]!), envelope('edited', at(22)))
  const reads = { get: 0, getMany: 0 }
  const counted: IngestIndex = {
    get: async (path) => { reads.get++; return await r.index.get(path) },
    getMany: async (paths) => { reads.getMany++; return await r.index.getMany(paths) },
    prior: async (path) => await r.index.prior(path),
    put: async (record, opts) => await r.index.put(record, opts),
    putDerived: async (path, derive, opts) => await r.index.putDerived(path, derive, opts),
    byCid: async (cid) => await r.index.byCid(cid),
    delete: async (path) => await r.index.delete(path),
    revert: async (path, earlier, opts) => { await r.index.revert(path, earlier, opts) }
  }
  const pipeline = createIngestPipeline({ dataDir: r.dataDir, index: counted, storage: r.storage, schemas: schemaLookup, validate: r.validate, masterKey: MASTER, logger: silentLogger() })
  const results = await pipeline.ingestMany(rels)
  assert.deepEqual(results.map((x) => x.ok ? x.value.outcome : 'error'), ['unchanged', 'unchanged', 'ingested'])
  assert.deepEqual(reads, { get: 0, getMany: 1 }, 'the records of the batch in one read, none again per file')
  assert.equal((await r.index.get(rels[2]!))?.sha256, createHash('sha256').update(envelope('edited', at(22))).digest('hex'))
})

test('a batch whose shared index read fails reports that error for each of its files (nothing is thrown or lost)', async (t) => {
  const root = await tempDir(t, 'hearth-ingest-many-closed-')
  const dataDir = join(root, 'data')
  await mkdir(join(dataDir, SCOPE), { recursive: true })
  const db = await openDatabase(join(root, 'index'))
  const index = await openFileIndex({ db })
  const validators = createSchemaValidators()
  const pipeline = createIngestPipeline({ dataDir, index, storage: memoryStorage(), schemas: schemaLookup, validate: (s, d) => validators.validateData(s, d), masterKey: MASTER, logger: silentLogger() })
  const rels = await writeEnvelopes(dataDir, 30, 33)
  await db.close()
  const results = await pipeline.ingestMany(rels, { justWritten: true })
  assert.equal(results.length, 3)
  assert.ok(results.every((x) => !x.ok && x.error instanceof Error), 'an error for each file')
})
