// The ingest pipeline on its own: a real index in a temp folder, an in-memory storage backend
// with real CIDs, real OpenPGP, one schema. What the daemon tests reach only through processes.
import { test, type TestContext } from 'node:test'
import assert from 'node:assert/strict'
import { mkdir, readdir, readFile, rm, writeFile } from 'node:fs/promises'
import { join } from 'node:path'
import type { FileIndex } from '../../src/db/file-index.js'
import { createIngestPipeline, type IngestPipeline, type IngestResult } from '../../src/ingest/pipeline.js'
import { decryptEnvelopeBytes, encryptEnvelopeBytes } from '../../src/protocol/encryption.js'
import { scopeKeyHex } from '../../src/protocol/keys.js'
import { silentLogger } from '../../src/log.js'
import type { MemoryStorage } from '../support/memory-storage.js'
import { SCHEMA, SCOPE, envelope, ingestWorkspace, schemaLookup } from '../support/ingest-fixtures.js'

const MASTER = new Uint8Array(65).fill(7)

/** `handed`: each indexed version's path with the data handed on beside it (undefined: none). */
interface Rig { pipeline: IngestPipeline, index: FileIndex, storage: MemoryStorage, dataDir: string, stored: string[], indexed: string[], handed: Array<[string, unknown]> }

async function rig (t: TestContext): Promise<Rig> {
  const { dataDir, index, storage, validate } = await ingestWorkspace(t, 'hearth-pipeline-')
  const stored: string[] = []
  const indexed: string[] = []
  const handed: Array<[string, unknown]> = []
  const pipeline = createIngestPipeline({
    dataDir,
    index,
    storage,
    schemas: schemaLookup,
    validate,
    masterKey: MASTER,
    logger: silentLogger(),
    onStored: (r) => { stored.push(r.path) },
    onIndexed: (r, data) => { indexed.push(r.path); handed.push([r.path, data]) }
  })
  return { pipeline, index, storage, dataDir, stored, indexed, handed }
}


async function decryptRecord (r: Rig, path: string): Promise<any> {
  const record = await r.index.get(path)
  assert.ok(record?.cid, `${path} has a CID`)
  const plain = await decryptEnvelopeBytes(await r.storage.get(record.cid), scopeKeyHex(MASTER, SCOPE))
  return JSON.parse(new TextDecoder().decode(plain))
}

test('a dropped file is validated, encrypted, stored and indexed once; a second pass changes nothing', async (t) => {
  const r = await rig(t)
  await mkdir(join(r.dataDir, SCOPE))
  await writeFile(join(r.dataDir, SCOPE, '2026-01-21T10-00-00Z.json'), envelope('alice', '2026-01-21T10:00:00Z'))
  const first = await r.pipeline.ingestPath(`${SCOPE}/2026-01-21T10-00-00Z.json`)
  assert.equal(first.outcome, 'ingested')
  assert.equal(first.record?.state, 'stored')
  assert.equal(first.record?.schemaId, '7')
  assert.equal((await decryptRecord(r, first.path)).data.username, 'alice')
  const again = await r.pipeline.ingestPath(`${SCOPE}/2026-01-21T10-00-00Z.json`)
  assert.equal(again.outcome, 'unchanged')
  assert.equal(r.storage.blobs.size, 1, 'nothing stored twice')
  assert.deepEqual(r.stored, [first.path])
})

/** A file stored as 'alice', then edited on disk to 'alice2' (not ingested yet). */
async function storedThenEdited (r: Rig): Promise<{ rel: string, v1: IngestResult }> {
  const rel = `${SCOPE}/2026-01-21T10-00-00Z.json`
  await mkdir(join(r.dataDir, SCOPE))
  await writeFile(join(r.dataDir, rel), envelope('alice', '2026-01-21T10:00:00Z'))
  const v1 = await r.pipeline.ingestPath(rel)
  await writeFile(join(r.dataDir, rel), envelope('alice2', '2026-01-21T10:00:00Z'))
  return { rel, v1 }
}

test('an edited stored file becomes a new version; the old one keeps its ciphertext under path#cid', async (t) => {
  const r = await rig(t)
  const { rel, v1 } = await storedThenEdited(r)
  const v2 = await r.pipeline.ingestPath(rel)
  assert.equal(v2.outcome, 'ingested')
  assert.notEqual(v2.record?.cid, v1.record?.cid)
  const old = await r.index.get(`${rel}#${v1.record!.cid!}`)
  assert.equal(old?.cid, v1.record?.cid, 'the old version is indexed under path#cid')
  assert.equal((await decryptRecord(r, `${rel}#${v1.record!.cid!}`)).data.username, 'alice')
  assert.equal((await decryptRecord(r, rel)).data.username, 'alice2')
})

test('an invalid file is rejected with its reasons and stays where it is; an unknown scope waits', async (t) => {
  const r = await rig(t)
  await mkdir(join(r.dataDir, SCOPE))
  await writeFile(join(r.dataDir, SCOPE, 'bad.json'), JSON.stringify({ $schema: SCHEMA.definitionUrl, version: '1.0', scope: SCOPE, collectedAt: '2026-01-21T10:00:00Z', data: { name: 'x' } }))
  const bad = await r.pipeline.ingestPath(`${SCOPE}/bad.json`)
  assert.equal(bad.outcome, 'rejected')
  assert.equal(bad.record?.errorCode, 'SCHEMA_VALIDATION_FAILED')
  assert.match(bad.reason ?? '', /username/)
  assert.ok((await readdir(join(r.dataDir, SCOPE))).includes('bad.json'))
  await mkdir(join(r.dataDir, 'spotify.savedTracks'))
  await writeFile(join(r.dataDir, 'spotify.savedTracks', 'a.json'), JSON.stringify({ $schema: 'ipfs://x', version: '1.0', scope: 'spotify.savedTracks', collectedAt: '2026-01-21T10:00:00Z', data: {} }))
  const waiting = await r.pipeline.ingestPath('spotify.savedTracks/a.json')
  assert.equal(waiting.outcome, 'waiting-schema')
  assert.equal(r.storage.blobs.size, 0)
  assert.deepEqual(r.stored, [])
})

test('submits stamped in one millisecond each get their own file; a taken name moves on by a millisecond', async (t) => {
  const r = await rig(t)
  const results = await Promise.all(Array.from({ length: 20 }, async (_, i) => await r.pipeline.submit(SCOPE, { username: `u${i}` })))
  assert.equal(new Set(results.map((x) => x.path)).size, 20, 'twenty distinct files')
  assert.ok(results.every((x) => x.status === 'stored'))
  // a caller-given collectedAt whose name is taken by other bytes moves on by one millisecond
  const at = '2026-02-01T00:00:00.000Z'
  const a = await r.pipeline.submit(SCOPE, { username: 'first' }, { collectedAt: at })
  const b = await r.pipeline.submit(SCOPE, { username: 'second' }, { collectedAt: at })
  assert.equal(a.path, `${SCOPE}/2026-02-01T00-00-00.000Z.json`)
  assert.equal(b.path, `${SCOPE}/2026-02-01T00-00-00.001Z.json`)
  // the same bytes again with the same collectedAt are a re-delivery, not a new file
  const again = await r.pipeline.submit(SCOPE, { username: 'first' }, { collectedAt: at })
  assert.equal(again.status, 'duplicate')
  assert.equal(again.path, a.path)
  assert.equal((await readdir(join(r.dataDir, SCOPE))).length, 22)
})

test('with storage down a submit is written and reported queued, and stored once storage is back', async (t) => {
  const r = await rig(t)
  r.storage.down = true
  const queued = await r.pipeline.submit(SCOPE, { username: 'offline' })
  assert.equal(queued.status, 'queued')
  assert.match(await readFile(join(r.dataDir, queued.path), 'utf8'), /offline/)
  r.storage.down = false
  const later = await r.pipeline.ingestPath(queued.path)
  assert.equal(later.outcome, 'ingested')
  assert.equal((await decryptRecord(r, queued.path)).data.username, 'offline')
})

test('a received ciphertext is written under its collectedAt name, a clash gets a CID-suffixed name, a repeat is "exists"', async (t) => {
  const r = await rig(t)
  const key = scopeKeyHex(MASTER, SCOPE)
  const at = '2026-03-01T12:00:00Z'
  const peerCipher = await encryptEnvelopeBytes(new TextEncoder().encode(envelope('from-peer', at)), key)
  const cid = await r.storage.add(peerCipher)
  assert.equal(await r.pipeline.receive(peerCipher, { cid, schemaId: '7', origin: 'peer' }), 'written')
  const rel = `${SCOPE}/2026-03-01T12-00-00Z.json`
  assert.equal((await r.index.get(rel))?.cid, cid, 'indexed under the sender\'s CID')
  assert.equal(JSON.parse(await readFile(join(r.dataDir, rel), 'utf8')).data.username, 'from-peer')
  assert.equal(await r.pipeline.receive(peerCipher, { cid, schemaId: '7', origin: 'peer' }), 'exists')

  // another envelope with the same collectedAt: same name taken by other bytes → suffixed name
  const other = await encryptEnvelopeBytes(new TextEncoder().encode(envelope('other', at)), key)
  const otherCid = await r.storage.add(other)
  assert.equal(await r.pipeline.receive(other, { cid: otherCid, schemaId: '7', origin: 'peer', fileId: '42' }), 'written')
  const suffixed = `${SCOPE}/2026-03-01T12-00-00Z.${otherCid.slice(-12)}.json`
  const rec = await r.index.get(suffixed)
  assert.equal(rec?.state, 'registered')
  assert.equal(rec?.fileId, '42')
  assert.deepEqual(r.stored, [], 'received files are not queued for registration again')
  assert.deepEqual(r.indexed, [rel, suffixed])

  // a ciphertext under a key of another scope does not decrypt: refused, nothing written
  const foreign = await encryptEnvelopeBytes(new TextEncoder().encode(envelope('x', at)), scopeKeyHex(MASTER, 'spotify.savedTracks'))
  await assert.rejects(r.pipeline.receive(foreign, { cid: await r.storage.add(foreign), schemaId: '7', origin: 'peer' }), (e: Error & { code?: string }) => e.code === 'DECRYPTION_FAILED')
  assert.equal((await readdir(join(r.dataDir, SCOPE))).length, 2)
})

test('while an edit is encrypted and stored, the old version is listed once: its archive record comes in the batch of the new one', async (t) => {
  const r = await rig(t)
  const { rel, v1 } = await storedThenEdited(r)
  const seenWhileStoring: string[][] = []
  const add = r.storage.add.bind(r.storage)
  r.storage.add = async (...args: Parameters<typeof add>) => {
    seenWhileStoring.push((await r.index.versions(SCOPE)).map((v) => v.path))
    return await add(...args)
  }
  const v2 = await r.pipeline.ingestPath(rel)
  assert.equal(v2.outcome, 'ingested')
  assert.deepEqual(seenWhileStoring, [[rel]], 'the edit was stored while only the current version was listed')
  assert.deepEqual((await r.index.versions(SCOPE)).map((v) => v.path).sort(), [rel, `${rel}#${v1.record!.cid!}`].sort())
})

test('a POST to the name of a deleted file archives the old version in the batch of its record (no read before the write)', async (t) => {
  const r = await rig(t)
  const collectedAt = '2026-01-21T10:00:00Z'
  const first = await r.pipeline.submit(SCOPE, { username: 'alice' }, { collectedAt })
  assert.equal(first.status, 'stored')
  await rm(join(r.dataDir, first.path))
  const second = await r.pipeline.submit(SCOPE, { username: 'bob' }, { collectedAt })
  assert.equal(second.status, 'stored')
  assert.equal(second.path, first.path, 'the name was free on disk again')
  const oldCid = first.status === 'stored' ? first.record.cid! : ''
  assert.equal((await decryptRecord(r, `${first.path}#${oldCid}`)).data.username, 'alice', 'the old version under path#cid')
  assert.equal((await decryptRecord(r, first.path)).data.username, 'bob')
  assert.deepEqual((await r.index.versions(SCOPE)).map((v) => v.path).sort(), [first.path, `${first.path}#${oldCid}`])
})

test('a version indexed from parsed JSON (a body, a dropped file, a peer\'s file) is announced with the data read back would give; data not from JSON is not', async (t) => {
  const r = await rig(t)
  await mkdir(join(r.dataDir, SCOPE))
  const dropped = `${SCOPE}/2026-01-21T10-00-00Z.json`
  await writeFile(join(r.dataDir, dropped), envelope('dropped', '2026-01-21T10:00:00Z'))
  assert.equal((await r.pipeline.ingestPath(dropped)).outcome, 'ingested')
  const json = new TextEncoder().encode('{"username":"posted"}')
  const posted = await r.pipeline.submit(SCOPE, JSON.parse(new TextDecoder().decode(json)), { json })
  const at = '2026-03-01T12:00:00Z'
  const peerCipher = await encryptEnvelopeBytes(new TextEncoder().encode(envelope('from-peer', at)), scopeKeyHex(MASTER, SCOPE))
  assert.equal(await r.pipeline.receive(peerCipher, { cid: await r.storage.add(peerCipher), schemaId: '7', origin: 'peer' }), 'written')
  // an in-process caller's value: a Date is a string once stored, so this data is not handed on
  const inMemory = await r.pipeline.submit(SCOPE, { username: 'in-memory', seen: new Date(0) } as Record<string, unknown>)
  const received = `${SCOPE}/2026-03-01T12-00-00Z.json`
  assert.deepEqual(r.handed.map(([path]) => path), [dropped, posted.path, received, inMemory.path])
  for (const [path, data] of r.handed.slice(0, 3)) assert.deepEqual(data, (await decryptRecord(r, path)).data, `${path}: the data handed on is the stored data`)
  assert.equal(r.handed[3]![1], undefined)
})
