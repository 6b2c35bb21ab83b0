// The ingest journal on real parts: a LevelDB index, the embedded storage on disk, real OpenPGP.
// A POST is answered once its journal entry is committed with the index record; the checkpoint
// syncs the files and drops the entry; after a power cut (simulated by deleting and tearing the
// files the journal still covers) replay restores them, replaying again changes nothing, and a
// torn tail of the log is ignored.
import { test } from 'node:test'
import assert from 'node:assert/strict'
import { readFile, readdir, rm, stat, truncate, writeFile } from 'node:fs/promises'
import { join } from 'node:path'
import type { FileIndex } from '../../src/db/file-index.js'
import type { FileRecord } from '../../src/db/types.js'
import { createFileWriter, type FileWriter } from '../../src/storage/file-writer.js'
import { writingFolder } from '../../src/ingest/atomic-write.js'
import { parseCid } from '../../src/storage/cid.js'
import { decodeJournalEntry, encodeJournalEntry } from '../../src/ingest/journal-entry.js'
import type { IngestIndex } from '../../src/ingest/pipeline.js'
import { scopeKeyHex } from '../../src/protocol/keys.js'
import { SCHEMA, SCOPE } from '../support/ingest-fixtures.js'
import { buildEnvelope, collectedAtToFileName, serializeEnvelope } from '../../src/protocol/envelope.js'
import { encryptEnvelopeBytes } from '../../src/protocol/encryption.js'
import { tempDir } from '../support/tmp.js'
import { tearFile } from '../support/power-cut.js'
import { overwriteStoredBlock, readStoredBlock, removeStoredBlock } from '../support/stored-blocks.js'
import { MASTER, blockDirs, decrypts, indexWith, journalKeys, postSome, rig, type Rig } from '../support/journal-rig.js'

test('a journaled POST is indexed with its entry in one batch; the checkpoint stores its block, syncs its files and drops the entry', async (t) => {
  const r = await rig(t, await tempDir(t, 'hearth-journal-'))
  const [one] = await postSome(r, 1)
  assert.equal((await journalKeys(r.db)).length, 1, 'the entry is committed with the index record')
  assert.equal(r.journal.pending, 1)
  assert.deepEqual(r.synced, [], 'nothing synced before the checkpoint')
  await decrypts(r.storage, one!.cid, await readFile(join(r.dataDir, one!.path))) // served from memory meanwhile
  await r.journal.checkpoint()
  assert.equal((await journalKeys(r.db)).length, 0)
  assert.deepEqual(r.synced, [join(r.dataDir, one!.path)], 'the data file; its small block went into the synced batch of its pin')
  await decrypts(r.storage, one!.cid, await readFile(join(r.dataDir, one!.path)))
  await r.close()
  assert.equal((await readStoredBlock(blockDirs(r.root), parseCid(one!.cid)))?.tier, 'small', 'kept in LevelDB, no file')
})

test('replay after a power cut restores missing and torn files, and replaying again changes nothing', async (t) => {
  const root = await tempDir(t, 'hearth-journal-')
  const first = await rig(t, root)
  const acked = await postSome(first, 6)
  const bytes = new Map<string, Buffer>()
  for (const a of acked) bytes.set(a.path, await readFile(join(first.dataDir, a.path)))
  const entries = await journalKeys(first.db)
  assert.equal(entries.length, 6)
  await first.close() // a crash: no checkpoint ran
  // What a power cut can do to files written without a sync: gone, empty, or garbage (and a
  // damaged disk to blocks: replay writes them again whatever holds them)
  const [a, b, c] = acked as [typeof acked[0], typeof acked[0], typeof acked[0]]
  await rm(join(root, 'data', a.path))
  await removeStoredBlock(blockDirs(root), parseCid(a.cid))
  await tearFile(join(root, 'data', b.path), { length: 0 })
  await overwriteStoredBlock(blockDirs(root), parseCid(b.cid), Buffer.alloc((await readStoredBlock(blockDirs(root), parseCid(b.cid)))!.bytes.byteLength))
  await tearFile(join(root, 'data', c.path), { garbage: Buffer.alloc(bytes.get(c.path)!.length, 0x20) })

  const second = await rig(t, root)
  assert.equal(await second.journal.replay(), 6)
  assert.equal((await journalKeys(second.db)).length, 0)
  const check = async (rg: Rig): Promise<void> => {
    for (const ack of acked) {
      const onDisk = await readFile(join(rg.dataDir, ack.path))
      assert.deepEqual(onDisk, bytes.get(ack.path), `${ack.path} restored`)
      assert.equal((await rg.index.get(ack.path))?.cid, ack.cid)
      await decrypts(rg.storage, ack.cid, onDisk)
    }
    assert.equal(await rg.index.count(), acked.length)
    assert.deepEqual((await readdir(join(rg.dataDir, SCOPE))).filter((n) => n.startsWith('.')), [], 'no temp left')
  }
  await check(second)

  // the entries' drop lost as well (it is not synced): the same entries replay again, harmlessly
  await second.db.batch(entries.map(([key, value]) => ({ type: 'put', sublevel: second.db.sublevel('ingest-journal', { valueEncoding: 'view' }), key, value })), { sync: true })
  assert.equal(await second.journal.replay(), 6)
  await check(second)
  assert.equal(await second.journal.replay(), 0, 'nothing left to replay')
})

test('entries in the format before binary entries (JSON, bytes in base64: a crash before the upgrade) still replay', async (t) => {
  const root = await tempDir(t, 'hearth-journal-')
  const first = await rig(t, root)
  const acked = await postSome(first, 4)
  const bytes = new Map<string, Buffer>()
  for (const a of acked) bytes.set(a.path, await readFile(join(first.dataDir, a.path)))
  const entries = await journalKeys(first.db)
  assert.equal(entries.length, 4)
  // what the code before wrote: the JSON value encoding, data and ciphertext in base64
  const old = first.db.sublevel<{ path: string; data?: string; ciphertext?: string; cid?: string }>('ingest-journal')
  await first.db.batch(entries.map(([key, value]) => {
    const e = decodeJournalEntry(value)
    assert.ok(e.data !== undefined && e.ciphertext !== undefined && e.cid !== undefined)
    return { type: 'put' as const, sublevel: old, key, value: { path: e.path, data: Buffer.from(e.data).toString('base64'), ciphertext: Buffer.from(e.ciphertext).toString('base64'), cid: e.cid } }
  }), { sync: true })
  assert.ok((await journalKeys(first.db)).every(([, v]) => v[0] === 0x7b), 'JSON text')
  await first.close()
  for (const a of acked) {
    await rm(join(root, 'data', a.path))
    await removeStoredBlock(blockDirs(root), parseCid(a.cid))
  }
  const second = await rig(t, root)
  assert.equal(await second.journal.replay(), 4)
  assert.equal((await journalKeys(second.db)).length, 0)
  for (const a of acked) {
    const onDisk = await readFile(join(second.dataDir, a.path))
    assert.deepEqual(onDisk, bytes.get(a.path), `${a.path} restored`)
    await decrypts(second.storage, a.cid, onDisk)
  }
})

test('a journal entry reads back as written; a value that is not one is refused', () => {
  const received = { path: 's.x/r.json', scope: 's.x', collectedAt: null, schemaId: null, cid: 'bafkreir', size: 3, encryptedSize: 9, sha256: 'ab', state: 'stored' as const, origin: 'peer' as const }
  for (const entry of [
    { path: 's.x/a.json', data: Buffer.from('{"a":1}'), ciphertext: Buffer.from([0, 1, 2, 255]), cid: 'bafkreia' },
    { path: 's.x/ü.json', data: new Uint8Array(0) },
    { path: 's.x/r.json', received }
  ]) {
    const back = decodeJournalEntry(encodeJournalEntry(entry))
    assert.deepEqual({ ...back, ...(back.data !== undefined ? { data: Buffer.from(back.data) } : {}), ...(back.ciphertext !== undefined ? { ciphertext: Buffer.from(back.ciphertext) } : {}) },
      { ...entry, ...(entry.data !== undefined ? { data: Buffer.from(entry.data) } : {}) })
  }
  const whole = encodeJournalEntry({ path: 's.x/a.json', data: Buffer.from('abc') })
  assert.throws(() => decodeJournalEntry(whole.subarray(0, whole.byteLength - 1)), /torn/)
  assert.throws(() => decodeJournalEntry(Buffer.from([9, 9])), /not an ingest journal entry/)
})

test('a torn tail of the journal (the log LevelDB was appending to) is ignored: earlier entries replay', async (t) => {
  const root = await tempDir(t, 'hearth-journal-')
  const first = await rig(t, root)
  const early = await postSome(first, 3)
  await postSome(first, 1) // the last batch, torn below
  await first.close()
  const indexDir = join(root, 'index')
  const logs = (await readdir(indexDir)).filter((n) => n.endsWith('.log')).sort()
  const log = join(indexDir, logs.at(-1)!)
  const size = (await stat(log)).size
  await truncate(log, size - 200) // the power went out while the last batch was being written

  const second = await rig(t, root)
  const replayed = await second.journal.replay()
  assert.ok(replayed >= early.length, `the entries before the torn batch replay (${replayed})`)
  for (const ack of early) {
    const onDisk = await readFile(join(second.dataDir, ack.path))
    assert.equal((await second.index.get(ack.path))?.cid, ack.cid)
    await decrypts(second.storage, ack.cid, onDisk)
  }
  assert.ok(await second.index.count() >= early.length)
})

test('a file received from a peer is journaled with its record (its ciphertext too when storage left a block file unsynced) and replayed after a power cut', async (t) => {
  // a ciphertext up to 32 KiB is kept in storage's LevelDB, synced with its pin; a larger one is a block file written unsynced
  for (const [username, tier] of [['from-a-peer', 'small'], ['x'.repeat(40 * 1024), 'file']] as const) {
    const root = await tempDir(t, 'hearth-journal-')
    const first = await rig(t, root)
    const { plaintext, ciphertext } = await fromAPeer(username)
    const stored = await first.storage.addUnsynced!(ciphertext)
    assert.ok(stored !== null)
    assert.equal(await first.pipeline.receive(ciphertext, { cid: stored.cid, schemaId: SCHEMA.id, origin: 'peer', unsyncedFiles: stored.files }), 'written')
    assert.equal(first.pipeline.journaled, true)
    const entries = await journalKeys(first.db)
    assert.equal(entries.length, 1, 'journaled with the index record')
    const entry = decodeJournalEntry(entries[0]![1])
    assert.ok(entry.data !== undefined, 'the data file\'s bytes')
    if (tier === 'small') {
      assert.deepEqual(stored.files, [])
      assert.equal(entry.ciphertext, undefined, 'a block kept in LevelDB is durable already: not journaled again')
    } else {
      assert.equal(stored.files.length, 1)
      assert.ok(entry.ciphertext !== undefined, 'the unsynced block file\'s bytes')
    }
    assert.deepEqual(first.synced, [], 'neither the block nor the data file synced on its own')
    const path = (await first.index.byCid(stored.cid))[0]!.path
    await first.close()
    await rm(join(root, 'data', path))
    if (tier === 'file') await overwriteStoredBlock(blockDirs(root), parseCid(stored.cid), new Uint8Array(0)) // torn by the power cut

    const second = await rig(t, root)
    assert.equal(await second.journal.replay(), 1)
    assert.deepEqual(await readFile(join(second.dataDir, path)), Buffer.from(plaintext), tier)
    assert.equal((await second.index.get(path))?.origin, 'peer')
    await decrypts(second.storage, stored.cid, Buffer.from(plaintext))
    await second.close()
  }
})

/** A received file's envelope and ciphertext; `username` sets its size. */
async function fromAPeer (username: string): Promise<{ plaintext: Uint8Array; ciphertext: Uint8Array; path: string }> {
  const collectedAt = '2026-01-02T03:04:05.000Z'
  const plaintext = serializeEnvelope(buildEnvelope({ definitionUrl: SCHEMA.definitionUrl, scope: SCOPE, collectedAt, data: { username } }))
  const ciphertext = await encryptEnvelopeBytes(plaintext, scopeKeyHex(MASTER, SCOPE))
  return { plaintext, ciphertext, path: `${SCOPE}/${collectedAtToFileName(collectedAt)}` }
}

/** The index as the pipeline sees it, with `hook` called right after (or before) a received file's record is written. */
function atPeerRecord (when: 'after' | 'before', hook: (record: FileRecord) => Promise<void>) {
  return (index: FileIndex): IngestIndex => indexWith(index, {
    put: async (record, opts) => {
      if (record.origin === 'peer' && when === 'before') await hook(record)
      await index.put(record, opts)
      if (record.origin === 'peer' && when === 'after') await hook(record)
    },
    putDerived: async (path, derive, opts) => {
      if (when === 'before') {
        const current = await index.get(path)
        const { record } = derive(current, { record: current, tombstone: null })
        if (record.origin === 'peer') await hook(record)
      }
      let written: FileRecord | null = null
      const r = await index.putDerived(path, (current, replaced) => { const d = derive(current, replaced); written = d.record; return d }, opts)
      if (when === 'after' && (written as FileRecord | null)?.origin === 'peer') await hook(written!)
      return r
    }
  })
}

/** The index as the pipeline sees it, with the receiver killed right after (or before) a received file's record is written. */
function killedAtPeerRecord (when: 'after' | 'before') {
  return atPeerRecord(when, async () => { throw new Error('killed') })
}

const dataFiles = async (dataDir: string): Promise<string[]> => (await readdir(join(dataDir, SCOPE))).filter((n) => !n.startsWith('.'))

test('a receiver killed once a received file is indexed and journaled but before its data file exists: replay writes it as the peer\'s, and the scan keeps it', async (t) => {
  const root = await tempDir(t, 'hearth-journal-')
  const first = await rig(t, root, 60_000, killedAtPeerRecord('after'))
  // over 32 KiB: its block is a file written unsynced, which the power cut below tears
  const { plaintext, ciphertext, path } = await fromAPeer('x'.repeat(40 * 1024))
  const stored = await first.storage.addUnsynced!(ciphertext)
  assert.ok(stored !== null)
  await assert.rejects(first.pipeline.receive(ciphertext, { cid: stored.cid, schemaId: SCHEMA.id, origin: 'peer', unsyncedFiles: stored.files }), /killed/)
  assert.deepEqual(await dataFiles(first.dataDir), [], 'the data file is written only after its record is committed')
  assert.equal((await first.index.get(path))?.origin, 'peer')
  assert.equal((await journalKeys(first.db)).length, 1)
  await first.close()
  await overwriteStoredBlock(blockDirs(root), parseCid(stored.cid), new Uint8Array(0)) // and a torn block file

  const second = await rig(t, root)
  assert.equal(await second.journal.replay(), 1)
  assert.deepEqual(await readFile(join(second.dataDir, path)), Buffer.from(plaintext))
  // what the start-up scan does with the file: the peer's record is kept, nothing stored again
  const scanned = await second.pipeline.ingestPath(path)
  assert.equal(scanned.outcome, 'unchanged')
  assert.equal(scanned.record?.origin, 'peer')
  assert.equal(scanned.record?.cid, stored.cid)
  assert.equal(await second.index.count(), 1)
  assert.deepEqual(await dataFiles(second.dataDir), [path.split('/')[1]])
  await decrypts(second.storage, stored.cid, Buffer.from(plaintext))
  // the next pull offers the file again: already here
  assert.equal(await second.pipeline.receive(ciphertext, { cid: stored.cid, schemaId: SCHEMA.id, origin: 'peer' }), 'exists')
})

test('a large received file (no journal entry) killed between its data file and its record is indexed from its intent as the peer\'s; killed before, it is received again', async (t) => {
  const root = await tempDir(t, 'hearth-journal-')
  const first = await rig(t, root, 60_000, killedAtPeerRecord('before'))
  const { plaintext, ciphertext, path } = await fromAPeer('x'.repeat(300 * 1024))
  const cid = await first.storage.add(ciphertext)
  await assert.rejects(first.pipeline.receive(ciphertext, { cid, schemaId: SCHEMA.id, origin: 'peer' }), /killed/)
  assert.deepEqual(await dataFiles(first.dataDir), [path.split('/')[1]], 'written (synced), not indexed')
  assert.equal(await first.index.count(), 0)
  assert.equal((await journalKeys(first.db)).length, 1, 'its intent')
  await first.close()

  const second = await rig(t, root)
  assert.equal(await second.journal.replay(), 1)
  assert.equal((await second.index.get(path))?.origin, 'peer')
  const scanned = await second.pipeline.ingestPath(path)
  assert.equal(scanned.outcome, 'unchanged')
  assert.equal(scanned.record?.cid, cid)
  assert.equal(await second.index.count(), 1)
  assert.equal(await second.pipeline.receive(ciphertext, { cid, schemaId: SCHEMA.id, origin: 'peer' }), 'exists')
  await second.close()

  // killed after the intent, before the data file: replay leaves nothing, the next pull receives it
  const other = await tempDir(t, 'hearth-journal-')
  const third = await rig(t, other)
  const { updatedAt: _u, mtimeMs: _m, ...received } = scanned.record!
  await third.journal.intend(received)
  await third.close()
  const fourth = await rig(t, other)
  assert.equal(await fourth.journal.replay(), 1)
  assert.equal(await fourth.index.count(), 0)
  await fourth.storage.add(ciphertext)
  assert.equal(await fourth.pipeline.receive(ciphertext, { cid, schemaId: SCHEMA.id, origin: 'peer' }), 'written')
  assert.equal((await fourth.index.get(path))?.origin, 'peer')
  assert.deepEqual(await readFile(join(fourth.dataDir, path)), Buffer.from(plaintext))
  assert.equal((await journalKeys(fourth.db)).length, 0, 'the record dropped its intent')
})

test('a received file whose name another writer takes between its record and its link: the name gets its earlier record or tombstone back (or neither) in the batch that drops the journal entry, and the file goes under its fallback name', async (t) => {
  for (const [earlier, thread] of [['none', false], ['a record', false], ['a tombstone', false], ['none', true]] as const) {
    const root = await tempDir(t, 'hearth-journal-')
    // the data file staged and linked on this thread, or on the file writer's (as in the daemon)
    const writer = thread ? createFileWriter({ tempDir: writingFolder(join(root, 'data')), spares: 2 }) : undefined
    t.after(async () => { await writer?.close() })
    const collectedAt = '2026-01-02T03:04:05.000Z'
    const theirs = serializeEnvelope(buildEnvelope({ definitionUrl: SCHEMA.definitionUrl, scope: SCOPE, collectedAt, data: { username: 'someone-else' } }))
    let taken = 0
    const r = await rig(t, root, 60_000, atPeerRecord('after', async (record) => {
      // the other writer, in the instant between the record's commit and the link
      if (taken++ === 0) await writeFile(join(root, 'data', record.path), theirs, { flag: 'wx' })
    }), writer)
    const { plaintext, ciphertext, path } = await fromAPeer(`taken-${earlier}-${String(thread)}`)
    let before: FileRecord | null = null
    if (earlier === 'a record') {
      // a version of the name the index still knows though its file is gone (a rejected one)
      before = { path, scope: SCOPE, collectedAt: null, schemaId: null, cid: null, size: 3, encryptedSize: null, sha256: 'ab'.repeat(32), mtimeMs: 1, state: 'rejected', reasons: ['not JSON'], errorCode: 'INVALID_JSON', origin: 'local', updatedAt: 1 }
      await r.index.put(before)
    }
    const deletedCid = 'bafkreideletedearlier'
    if (earlier === 'a tombstone') {
      // the name's earlier file was deleted (peers told so): its tombstone must survive the revert
      await r.index.put({ path, scope: SCOPE, collectedAt, schemaId: SCHEMA.id, cid: deletedCid, size: 3, encryptedSize: 9, sha256: 'cd'.repeat(32), mtimeMs: 1, state: 'stored', origin: 'local', updatedAt: 1 })
      await r.index.delete(path)
    }
    const seq = await r.index.currentSeq()
    const stored = await r.storage.addUnsynced!(ciphertext)
    assert.ok(stored !== null)
    assert.equal(await r.pipeline.receive(ciphertext, { cid: stored.cid, schemaId: SCHEMA.id, origin: 'peer', unsyncedFiles: stored.files }), 'written')
    // the taken name: the other writer's file, and the index as it was before
    assert.deepEqual(await readFile(join(r.dataDir, path)), Buffer.from(theirs))
    const now = await r.index.get(path)
    if (before === null) assert.equal(now, null, earlier)
    else { const { seq: _s, ...rest } = now!; assert.deepEqual(rest, before, earlier) }
    // the peer's file under its fallback name, as the peer's
    const fallback = path.replace(/\.json$/, `.${stored.cid.slice(-12)}.json`)
    assert.deepEqual(await readFile(join(r.dataDir, fallback)), Buffer.from(plaintext))
    assert.deepEqual((await r.index.byCid(stored.cid)).map((x) => [x.path, x.origin]), [[fallback, 'peer']])
    // no tombstone of the peer's CID: nothing tells the peers to delete what the sending device
    // holds; the name's earlier deletion is told again
    assert.deepEqual((await r.index.changesSince(seq)).filter((c) => c.deleted).map((c) => [c.path, c.deleted ? c.cid : null]), earlier === 'a tombstone' ? [[path, deletedCid]] : [], earlier)
    // one journal entry left, the fallback name's: the taken name's went with the revert
    assert.deepEqual((await journalKeys(r.db)).map(([, v]) => decodeJournalEntry(v).path), [fallback])
    // the watcher's turn: the other writer's file is the name's own, not a new version of the peer's
    const scanned = await r.pipeline.ingestPath(path)
    assert.equal(scanned.outcome, 'ingested')
    assert.equal(scanned.record?.origin, 'local')
    assert.equal(await r.index.get(`${path}#${stored.cid}`), null, 'the peer\'s version is not archived under the taken name')
    assert.deepEqual((await r.index.byCid(stored.cid)).map((x) => x.path), [fallback])
    // and a replay after a crash now puts nothing over the other writer's file
    await r.close()
    const again = await rig(t, root)
    await again.journal.replay()
    assert.deepEqual(await readFile(join(again.dataDir, path)), Buffer.from(theirs))
    assert.deepEqual(await readFile(join(again.dataDir, fallback)), Buffer.from(plaintext))
    await again.close()
  }
})

test('a received file whose link fails otherwise than on a taken name (a full disk): the name keeps what it had and the journal entry goes, in one batch, before the error is thrown', async (t) => {
  const root = await tempDir(t, 'hearth-journal-')
  const real = createFileWriter({ tempDir: writingFolder(join(root, 'data')), spares: 2 })
  t.after(async () => { await real.close() })
  const writer: FileWriter = {
    ...real,
    async publish (staged, path) {
      await real.publish(staged, null) // the temp removed, nothing linked
      if (path !== null) throw Object.assign(new Error('ENOSPC: no space left on device, link'), { code: 'ENOSPC' })
      return { written: false }
    }
  }
  const r = await rig(t, root, 60_000, undefined, writer)
  const { ciphertext, path } = await fromAPeer('link-fails')
  const stored = await r.storage.addUnsynced!(ciphertext)
  assert.ok(stored !== null)
  const seq = await r.index.currentSeq()
  await assert.rejects(r.pipeline.receive(ciphertext, { cid: stored.cid, schemaId: SCHEMA.id, origin: 'peer', unsyncedFiles: stored.files }), { code: 'ENOSPC' })
  assert.equal(await r.index.get(path), null, 'no record of a file that is not there')
  assert.deepEqual((await r.index.changesSince(seq)).filter((c) => c.deleted), [], 'and no tombstone')
  assert.deepEqual(await journalKeys(r.db), [], 'no entry for a replay to write the file from')
  assert.deepEqual(await dataFiles(r.dataDir), [])
})
