// A journaled POST's data file created on the file writer's thread beside its index record
// (src/ingest/publish-beside.ts), on the journal's real parts: the record and its journal entry are
// committed while the file is created, with the mtime the file is given; a daemon killed on either
// side of that, or a power cut (during the replay too), is repaired at the next start; a name
// another writer takes meanwhile keeps what it had, and a kill before the revert puts nothing over
// the other file either.
import { test, type TestContext } from 'node:test'
import assert from 'node:assert/strict'
import { readFile, stat, utimes, writeFile } from 'node:fs/promises'
import { join } from 'node:path'
import type { FileIndex } from '../../src/db/file-index.js'
import type { FileRecord } from '../../src/db/types.js'
import { createFileWriter, type CreateOptions, type FileWriter } from '../../src/storage/file-writer.js'
import { writingFolder } from '../../src/ingest/atomic-write.js'
import { decodeJournalEntry } from '../../src/ingest/journal-entry.js'
import { parseCid } from '../../src/storage/cid.js'
import type { IngestIndex } from '../../src/ingest/pipeline.js'
import { collectedAtToFileName } from '../../src/protocol/envelope.js'
import { SCOPE } from '../support/ingest-fixtures.js'
import { tempDir } from '../support/tmp.js'
import { fileMtimeMs } from '../support/file-mtime.js'
import { setMtimeNs, tearFile } from '../support/power-cut.js'
import { futimesSeconds } from '../../src/storage/file-times.js'
import { sha256Hex } from '../../src/ingest/data-file.js'
import { blockDirs, decrypts, indexWith, journalKeys, rig } from '../support/journal-rig.js'
import { isPinned, readStoredBlock, removeStoredBlock } from '../support/stored-blocks.js'
import { rejectedVersion } from '../support/receive-rig.js'

/** What a test does around the thread's create of a data file. */
interface CreateHooks {
  /** Before the create (e.g. another writer takes the name). */
  before?: (path: string) => Promise<void>
  /**
   * The create's answer: 'hang' never comes (the daemon is killed before the thread links the
   * file), 'hang-after' never comes after the thread's create (killed once it is done), 'fail' is an error.
   */
  answer?: (path: string) => 'hang' | 'hang-after' | 'fail' | 'real'
  /** Instead of the options asked for (e.g. a filesystem that keeps its own times). */
  options?: (asked: CreateOptions | undefined) => CreateOptions | undefined
}

/** The daemon's file writer (its own thread, a temp folder, spares) with `hooks` around its creates; every create's options. */
function hookedWriter (t: TestContext, root: string, hooks: CreateHooks): { writer: FileWriter; asked: Array<CreateOptions | undefined> } {
  const real = createFileWriter({ tempDir: writingFolder(join(root, 'data')), spares: 2 })
  t.after(async () => { await real.close() })
  const asked: Array<CreateOptions | undefined> = []
  const writer: FileWriter = {
    ...real,
    async createNew (path, bytes, opts) {
      asked.push(opts)
      await hooks.before?.(path)
      const answer = hooks.answer?.(path) ?? 'real'
      if (answer === 'fail') throw Object.assign(new Error('ENOSPC: no space left on device, open'), { code: 'ENOSPC' })
      if (answer === 'hang') await new Promise(() => {})
      const written = await real.createNew(path, bytes, hooks.options?.(opts) ?? opts)
      if (answer === 'hang-after') await new Promise(() => {})
      return written
    }
  }
  return { writer, asked }
}

/** The index as the pipeline sees it, with `hold` deciding whether a record's write never comes back (a kill before its batch). */
function holdingIndex (hold: () => boolean, log?: string[]) {
  return (index: FileIndex): IngestIndex => indexWith(index, {
    putDerived: async (path, derive, opts) => {
      if (hold()) return await new Promise<FileRecord>(() => {})
      log?.push('index asked')
      const r = await index.putDerived(path, derive, opts)
      log?.push('index committed')
      return r
    }
  })
}

const at = (root: string, rel: string): string => join(root, 'data', rel)
const nameAt = (collectedAt: string): string => `${SCOPE}/${collectedAtToFileName(collectedAt)}`

test('a journaled POST is indexed while its data file is created: one batch holds its record (with the mtime the file is given) and its journal entry, which the checkpoint drops', async (t) => {
  const root = await tempDir(t, 'hearth-beside-')
  const log: string[] = []
  const { writer, asked } = hookedWriter(t, root, { before: async () => { log.push('create asked') } })
  const r = await rig(t, root, 60_000, holdingIndex(() => false, log), writer)
  for (let i = 0; i < 3; i++) {
    const res = await r.pipeline.submit(SCOPE, { username: `user${i}` })
    assert.equal(res.status, 'stored')
    if (res.status !== 'stored') return
    assert.equal(res.record.mtimeMs, await fileMtimeMs(at(root, res.path)), 'the record says the file\'s mtime: the start-up scan finds it unchanged')
    assert.equal(asked[i]?.mtimeMs, res.record.mtimeMs, 'the mtime was given to the create')
    await decrypts(r.storage, res.record.cid!, await readFile(at(root, res.path)))
    assert.equal((await r.pipeline.ingestPath(res.path)).outcome, 'unchanged')
  }
  // the file's create is asked for once the index has the record, and before its batch is back
  assert.deepEqual(log.slice(0, 3), ['index asked', 'create asked', 'index committed'])
  assert.equal((await journalKeys(r.db)).length, 3, 'each entry committed with its record')
  await r.journal.checkpoint()
  assert.equal((await journalKeys(r.db)).length, 0)
  assert.equal(r.synced.length, 3, 'the three data files synced by the checkpoint')
})

test('killed after a POST\'s record and entry are committed but before its data file is linked: replay writes the file, and the scan keeps the record', async (t) => {
  const root = await tempDir(t, 'hearth-beside-')
  const { writer } = hookedWriter(t, root, { answer: () => 'hang' })
  const first = await rig(t, root, 60_000, undefined, writer)
  const collectedAt = '2026-03-04T05:06:07.008Z'
  const rel = nameAt(collectedAt)
  void first.pipeline.submit(SCOPE, { username: 'never-answered' }, { collectedAt })
  let record: FileRecord | null = null
  for (let i = 0; i < 400 && record === null; i++) { record = await first.index.get(rel); await new Promise((resolve) => setTimeout(resolve, 10)) }
  assert.ok(record !== null, 'the record is committed')
  assert.equal((await journalKeys(first.db)).length, 1, 'with its entry')
  await first.close() // the kill: the file was never linked
  await assert.rejects(stat(at(root, rel)), { code: 'ENOENT' })
  // close() wrote the block waiting in memory for the checkpoint; a kill would not have
  await removeStoredBlock(blockDirs(root), parseCid(record.cid!), { pin: true })

  const second = await rig(t, root)
  assert.equal(await second.journal.replay(), 1)
  const bytes = await readFile(at(root, rel))
  assert.equal(JSON.parse(bytes.toString()).data.username, 'never-answered')
  await decrypts(second.storage, record.cid!, bytes) // the block from the journal
  assert.equal((await fileMtimeMs(at(root, rel))), record.mtimeMs, 'written again with the mtime its link names')
  const scanned = await second.pipeline.ingestPath(rel)
  assert.equal(scanned.outcome, 'unchanged', 'the same bytes and mtime: the record is kept')
  assert.equal(scanned.record?.cid, record.cid)
  assert.equal((await second.index.get(rel))?.mtimeMs, (await fileMtimeMs(at(root, rel))))
  assert.equal(await second.index.count(), 1)
})

test('killed after a POST\'s data file is linked but before its batch: nothing is indexed or journaled, and the scan stores the file as a local one', async (t) => {
  const root = await tempDir(t, 'hearth-beside-')
  const { writer } = hookedWriter(t, root, {})
  const first = await rig(t, root, 60_000, holdingIndex(() => true), writer)
  const collectedAt = '2026-03-04T05:06:07.008Z'
  const rel = nameAt(collectedAt)
  void first.pipeline.submit(SCOPE, { username: 'linked-only' }, { collectedAt })
  for (let i = 0; i < 400 && await stat(at(root, rel)).then(() => false, () => true); i++) await new Promise((resolve) => setTimeout(resolve, 10))
  await first.close()

  const second = await rig(t, root)
  assert.equal(await second.journal.replay(), 0)
  assert.equal(await second.index.get(rel), null)
  const scanned = await second.pipeline.ingestPath(rel)
  assert.equal(scanned.outcome, 'ingested')
  assert.equal(scanned.record?.origin, 'local')
  await decrypts(second.storage, scanned.record!.cid!, await readFile(at(root, rel)))
})

/** A record of `rel` whose file is gone (the index has not seen it deleted yet). */
function earlierRecord (rel: string, state: 'rejected' | 'stored'): FileRecord {
  if (state === 'rejected') return rejectedVersion(rel)
  const { reasons: _r, errorCode: _e, ...rest } = rejectedVersion(rel)
  return { ...rest, state, schemaId: '7', cid: 'bafkreigh2akiscaildcqabsyg3dfr6chu3fgpregiymsck7e7aqa4s52zy', encryptedSize: 40 }
}

/** Another writer's file, written at `rel` in the instant before the thread links ours. */
const THEIRS = '{"theirs":true}'

test('a POST whose name another writer takes before the link: the name keeps what it had (a record, a tombstone, or neither; no change logged), its entry dropped, and the POST moves on to the next millisecond', async (t) => {
  for (const earlier of ['none', 'rejected', 'tombstone'] as const) {
    const root = await tempDir(t, 'hearth-beside-')
    const collectedAt = '2026-03-04T05:06:07.008Z'
    const taken = nameAt(collectedAt)
    let takes = 0
    const { writer } = hookedWriter(t, root, { before: async (path) => { if (takes++ === 0) await writeFile(path, THEIRS, { flag: 'wx' }) } })
    const r = await rig(t, root, 60_000, undefined, writer)
    const before = earlier === 'rejected' ? earlierRecord(taken, 'rejected') : null
    if (before !== null) await r.index.put(before)
    if (earlier === 'tombstone') { await r.index.put(earlierRecord(taken, 'stored')); await r.index.delete(taken) }
    const seq = await r.index.currentSeq()
    const res = await r.pipeline.submit(SCOPE, { username: 'mine' }, { collectedAt })
    assert.equal(res.status, 'stored', earlier)
    if (res.status !== 'stored') return
    assert.equal(res.path, nameAt('2026-03-04T05:06:07.009Z'), 'the next millisecond')
    assert.equal(await readFile(at(root, taken), 'utf8'), THEIRS, 'the other writer\'s file is untouched')
    const now = await r.index.get(taken)
    if (before === null) assert.equal(now, null)
    else { const { seq: _s, ...rest } = now!; assert.deepEqual(rest, before, 'the earlier record is back') }
    assert.deepEqual((await r.index.changesSince(seq)).filter((c) => c.path === taken), [], `${earlier}: no change of the taken name logged (no tombstone, none told again)`)
    assert.deepEqual((await journalKeys(r.db)).map(([, v]) => decodeJournalEntry(v).path), [res.path], 'the taken name\'s entry went with the revert')
    assert.equal((await r.index.all()).some((x) => x.path.startsWith(`${taken}#`)), false, 'nothing archived under the taken name')
    await decrypts(r.storage, res.record.cid!, await readFile(at(root, res.path)))
    // the watcher's turn: the other writer's file is the name's own
    const scanned = await r.pipeline.ingestPath(taken)
    assert.equal(scanned.record?.origin, 'local')
    assert.equal(scanned.record?.sha256, (await r.index.get(taken))?.sha256)
    await r.close()
  }
})

test('a POST to a name whose record outlived its file: the old version is archived in the batch of the new record once the file is there', async (t) => {
  const root = await tempDir(t, 'hearth-beside-')
  const { writer } = hookedWriter(t, root, {})
  const r = await rig(t, root, 60_000, undefined, writer)
  const collectedAt = '2026-03-04T05:06:07.008Z'
  const rel = nameAt(collectedAt)
  const old = earlierRecord(rel, 'stored')
  await r.index.put(old)
  const res = await r.pipeline.submit(SCOPE, { username: 'again' }, { collectedAt })
  assert.equal(res.status, 'stored')
  if (res.status !== 'stored') return
  assert.equal(res.path, rel)
  assert.equal(res.record.mtimeMs, (await fileMtimeMs(at(root, rel))))
  assert.equal((await r.index.get(`${rel}#${old.cid!}`))?.cid, old.cid, 'the old version under its archive path')
  assert.equal((await r.index.get(rel))?.cid, res.record.cid)
  assert.equal((await journalKeys(r.db)).length, 1)
  await r.journal.checkpoint()
  assert.equal((await journalKeys(r.db)).length, 0, 'its entry synced and dropped')
})

test('killed between a taken name\'s record and its revert: replay finds another mtime at the name (the other file\'s time copied to our very millisecond), leaves that file alone, takes the record back (no tombstone) and unpins its block, and the scan indexes the other file as the name\'s own', async (t) => {
  const root = await tempDir(t, 'hearth-beside-')
  const collectedAt = '2026-03-04T05:06:07.008Z'
  const rel = nameAt(collectedAt)
  const { writer, asked } = hookedWriter(t, root, {
    before: async (path) => {
      await writeFile(path, THEIRS, { flag: 'wx' })
      // a copy that kept its times (cp -p, rsync -t), made in our millisecond
      const ms = Math.floor(asked.at(-1)!.mtimeMs!)
      await utimes(path, futimesSeconds(ms), futimesSeconds(ms))
      assert.equal(await fileMtimeMs(path), ms)
    },
    answer: () => 'hang-after' // the link found the name taken; the revert never ran
  })
  const first = await rig(t, root, 60_000, undefined, writer)
  const seq = await first.index.currentSeq()
  void first.pipeline.submit(SCOPE, { username: 'mine' }, { collectedAt })
  let ours: FileRecord | null = null
  for (let i = 0; i < 400 && ours === null; i++) { ours = await first.index.get(rel); await new Promise((resolve) => setTimeout(resolve, 10)) }
  assert.ok(ours !== null, 'committed with its entry')
  await first.close()

  const second = await rig(t, root)
  assert.equal(await second.journal.replay(), 1)
  assert.equal((await journalKeys(second.db)).length, 0)
  assert.equal(await readFile(at(root, rel), 'utf8'), THEIRS, 'the other writer\'s file stays')
  assert.equal(await second.index.get(rel), null, 'our record, never acknowledged, taken back')
  assert.deepEqual((await second.index.changesSince(seq)).filter((c) => c.deleted), [], 'no tombstone')
  const scanned = await second.pipeline.ingestPath(rel)
  assert.equal(scanned.outcome, 'rejected', 'theirs is not an envelope: indexed as the name\'s own, rejected')
  assert.equal(await second.index.get(`${rel}#${ours.cid!}`), null, 'nothing of ours archived under the name')
  await second.close()
  assert.equal(await isPinned(blockDirs(root), parseCid(ours.cid!)), false, 'the block no record names is not pinned again')
})

test('a POST whose data file cannot be created (a full disk) is answered STORAGE_FULL and leaves no record, entry or tombstone', async (t) => {
  const root = await tempDir(t, 'hearth-beside-')
  const { writer } = hookedWriter(t, root, { answer: () => 'fail' })
  const r = await rig(t, root, 60_000, undefined, writer)
  const seq = await r.index.currentSeq()
  await assert.rejects(r.pipeline.submit(SCOPE, { username: 'no-room' }), { code: 'STORAGE_FULL' })
  assert.equal(await r.index.count(), 0)
  assert.deepEqual(await journalKeys(r.db), [])
  assert.deepEqual((await r.index.changesSince(seq)).filter((c) => c.deleted), [])
})

test('on a filesystem that keeps its own times the record and the journal entry are corrected to the file\'s mtime (a torn file is still restored), and later POSTs are indexed after their file', async (t) => {
  const root = await tempDir(t, 'hearth-beside-')
  const { writer, asked } = hookedWriter(t, root, { options: () => ({}) })
  const r = await rig(t, root, 60_000, undefined, writer)
  const paths: string[] = []
  for (let i = 0; i < 2; i++) {
    const res = await r.pipeline.submit(SCOPE, { username: `coarse${i}` })
    assert.equal(res.status, 'stored')
    if (res.status !== 'stored') return
    paths.push(res.path)
    assert.equal((await r.index.get(res.path))?.mtimeMs, (await fileMtimeMs(at(root, res.path))), 'the file\'s own mtime')
    assert.equal((await r.pipeline.ingestPath(res.path)).outcome, 'unchanged')
  }
  assert.equal(typeof asked[0]?.mtimeMs, 'number', 'the first asked for an mtime')
  assert.equal(asked[1]?.mtimeMs, undefined, 'the second is indexed after its file, with the mtime the file got')
  const entries = (await journalKeys(r.db)).map(([, v]) => decodeJournalEntry(v))
  assert.deepEqual(entries.map((e) => e.path), paths, 'one entry each, the first one\'s replaced')
  assert.equal(entries[0]!.link?.mtimeMs, (await fileMtimeMs(at(root, paths[0]!))), 'its link names the file\'s mtime')
  const bytes = await readFile(at(root, paths[0]!))
  await r.close()
  await tearFile(at(root, paths[0]!), { length: 0 }) // a power cut
  const again = await rig(t, root)
  assert.equal(await again.journal.replay(), 2)
  assert.deepEqual(await readFile(at(root, paths[0]!)), bytes, 'the torn file is restored, not taken for another writer\'s')
  assert.notEqual(await again.index.get(paths[0]!), null, 'and its record kept')
})

test('a power cut during a replay (the file it wrote back torn again) loses no acknowledged POST: the next replay still knows that file by the mtime its link names and restores it', async (t) => {
  const root = await tempDir(t, 'hearth-beside-')
  const { writer } = hookedWriter(t, root, {})
  const first = await rig(t, root, 60_000, undefined, writer)
  const res = await first.pipeline.submit(SCOPE, { username: 'acknowledged' })
  assert.equal(res.status, 'stored')
  if (res.status !== 'stored') return
  const file = at(root, res.path)
  const bytes = await readFile(file)
  const entries = await journalKeys(first.db)
  assert.equal(entries.length, 1)
  await first.close() // a power cut before the checkpoint...
  await tearFile(file, { length: 0 }) // ...and the file's pages lost

  const second = await rig(t, root)
  assert.equal(await second.journal.replay(), 1)
  assert.deepEqual(await readFile(file), bytes)
  assert.equal((await fileMtimeMs(file)), res.record.mtimeMs, 'written back with the mtime its link names')
  // the power goes again before the replay's writes are durable: the entries' drop is lost, and
  // the file it wrote is torn as an unsynced one would be
  await second.db.batch(entries.map(([key, value]) => ({ type: 'put', sublevel: second.db.sublevel('ingest-journal', { valueEncoding: 'view' }), key, value })), { sync: true })
  await second.close()
  await tearFile(file, { length: 0 })

  const third = await rig(t, root)
  assert.equal(await third.journal.replay(), 1)
  assert.deepEqual(await readFile(file), bytes, 'restored again, not taken for another writer\'s file')
  assert.equal((await third.index.get(res.path))?.cid, res.record.cid, 'the acknowledged record kept')
  await decrypts(third.storage, res.record.cid!, bytes)
  assert.equal((await third.pipeline.ingestPath(res.path)).outcome, 'unchanged')
})

test('a POST\'s file whose time the platform kept to the nanosecond past the mark\'s microsecond (as Node 24 does), torn by a power cut, is known by its link and restored, from a binary entry and from one in the JSON form of earlier versions', async (t) => {
  const root = await tempDir(t, 'hearth-beside-')
  const { writer } = hookedWriter(t, root, {})
  const first = await rig(t, root, 60_000, undefined, writer)
  const posted = []
  for (const username of ['binary', 'json']) {
    const res = await first.pipeline.submit(SCOPE, { username })
    assert.equal(res.status, 'stored')
    if (res.status !== 'stored') return
    posted.push({ rel: res.path, record: res.record, bytes: await readFile(at(root, res.path)) })
  }
  const entries = await journalKeys(first.db)
  assert.equal(entries.length, 2)
  // the second entry as the JSON form wrote it (bytes in base64, the same link)
  const [key, value] = entries[1]!
  const e = decodeJournalEntry(value)
  assert.ok(e.link?.mtimeMs !== undefined && e.data !== undefined && e.ciphertext !== undefined, 'a link with the mtime asked for')
  const json = { path: e.path, data: Buffer.from(e.data).toString('base64'), ciphertext: Buffer.from(e.ciphertext).toString('base64'), cid: e.cid, link: e.link }
  await first.db.batch([{ type: 'put', sublevel: first.db.sublevel('ingest-journal', { valueEncoding: 'view' }), key, value: Buffer.from(JSON.stringify(json)) }], { sync: true })
  await first.close() // a power cut before the checkpoint
  for (const p of posted) {
    const micros = BigInt(Math.round(p.record.mtimeMs * 1000))
    await setMtimeNs(at(root, p.rel), micros * 1000n + 576n) // the mark's microsecond, and nanoseconds
    await tearFile(at(root, p.rel), { length: 0 })
  }

  const second = await rig(t, root)
  assert.equal(await second.journal.replay(), 2)
  for (const p of posted) {
    assert.deepEqual(await readFile(at(root, p.rel)), p.bytes, `${p.rel} restored, not taken for another writer's file`)
    assert.equal((await second.index.get(p.rel))?.cid, p.record.cid, 'the acknowledged record kept')
    assert.equal(await fileMtimeMs(at(root, p.rel)), p.record.mtimeMs, 'written back with the mtime its link names')
    assert.equal((await second.pipeline.ingestPath(p.rel)).outcome, 'unchanged')
  }
})

test('a POST to a name that had a record, its file torn by a power cut between its entry\'s batch and its record\'s: replay restores the file (ours by its mtime) and unpins the block no record names, and the scan indexes the file as the name\'s next version', async (t) => {
  const root = await tempDir(t, 'hearth-beside-')
  const { writer } = hookedWriter(t, root, {})
  let writes = 0
  const first = await rig(t, root, 60_000, holdingIndex(() => writes++ >= 1), writer) // the second write never comes back
  const collectedAt = '2026-03-04T05:06:07.008Z'
  const rel = nameAt(collectedAt)
  const old = earlierRecord(rel, 'stored')
  await first.index.put(old)
  void first.pipeline.submit(SCOPE, { username: 'again' }, { collectedAt })
  for (let i = 0; i < 400 && writes < 2; i++) await new Promise((resolve) => setTimeout(resolve, 10))
  assert.equal(writes, 2, 'the file created, its record\'s write asked for')
  const [entry] = (await journalKeys(first.db)).map(([, v]) => decodeJournalEntry(v))
  assert.ok(entry?.data !== undefined && entry.cid !== undefined, 'the entry committed in the first batch')
  assert.equal((await first.index.get(rel))?.cid, old.cid, 'the name\'s record still the old one')
  await first.close()
  await tearFile(at(root, rel), { length: 0 })

  const second = await rig(t, root)
  assert.equal(await second.journal.replay(), 1)
  assert.deepEqual(await readFile(at(root, rel)), Buffer.from(entry.data), 'the torn file restored')
  assert.equal((await second.index.get(rel))?.cid, old.cid, 'the record as it was')
  const scanned = await second.pipeline.ingestPath(rel)
  assert.equal(scanned.record?.state, 'stored')
  assert.equal(scanned.record?.sha256, sha256Hex(entry.data))
  assert.equal((await second.index.get(`${rel}#${old.cid!}`))?.cid, old.cid, 'the old version archived')
  await second.close()
  assert.equal(await isPinned(blockDirs(root), parseCid(entry.cid)), false, 'the entry\'s ciphertext, which no record names, unpinned')
})

test('a POST to a name with a record, taken by another writer while a DELETE (no path lock) tombstones the name: the deletion stays, only the POST\'s entry is dropped', async (t) => {
  const root = await tempDir(t, 'hearth-beside-')
  const collectedAt = '2026-03-04T05:06:07.008Z'
  const taken = nameAt(collectedAt)
  let deleteNow = async (): Promise<void> => {}
  let takes = 0
  const { writer } = hookedWriter(t, root, {
    before: async (path) => { if (takes++ === 0) { await deleteNow(); await writeFile(path, THEIRS, { flag: 'wx' }) } }
  })
  const r = await rig(t, root, 60_000, undefined, writer)
  deleteNow = async () => { assert.equal(await r.index.delete(taken), true) }
  const old = earlierRecord(taken, 'stored')
  await r.index.put(old)
  const seq = await r.index.currentSeq()
  const res = await r.pipeline.submit(SCOPE, { username: 'mine' }, { collectedAt })
  assert.equal(res.status, 'stored')
  if (res.status !== 'stored') return
  assert.equal(res.path, nameAt('2026-03-04T05:06:07.009Z'))
  assert.equal(await r.index.get(taken), null, 'the old record is not put back over the deletion')
  assert.deepEqual((await r.index.changesSince(seq)).filter((c) => c.path === taken).map((c) => c.deleted), [true], 'the tombstone is the name\'s last change')
  assert.deepEqual((await journalKeys(r.db)).map(([, v]) => decodeJournalEntry(v).path), [res.path])
})

/** The index as the pipeline sees it, with the `n`th record derive (from 1) failing once it ran: the index leaves its change out of the batch, not the batch's other writes. */
function failingDerive (n: number, cids: string[] = []) {
  let derives = 0
  return (index: FileIndex): IngestIndex => indexWith(index, {
    putDerived: async (path, derive, opts) => await index.putDerived(path, (current, replaced) => {
      const made = derive(current, replaced)
      if (made.record.cid !== null) cids.push(made.record.cid)
      if (++derives === n) throw new Error('derive failed')
      return made
    }, opts)
  })
}

test('a POST whose record\'s derive fails: the entry its batch committed all the same goes to the checkpoint (which syncs the unindexed file and drops it), and its block is not kept', async (t) => {
  const root = await tempDir(t, 'hearth-beside-')
  const { writer } = hookedWriter(t, root, {})
  const cids: string[] = []
  const r = await rig(t, root, 60_000, failingDerive(1, cids), writer)
  const collectedAt = '2026-03-04T05:06:07.008Z'
  const rel = nameAt(collectedAt)
  await assert.rejects(r.pipeline.submit(SCOPE, { username: 'unindexed' }, { collectedAt }), /derive failed/)
  assert.equal(await r.index.get(rel), null)
  assert.ok((await stat(at(root, rel))).isFile(), 'the file stays, for the queue to index')
  assert.equal((await journalKeys(r.db)).length, 1, 'the entry committed without its record')
  await r.journal.checkpoint()
  assert.deepEqual(await journalKeys(r.db), [], 'dropped by the checkpoint')
  assert.ok(r.synced.includes(at(root, rel)), 'which synced the file')
  await r.close()
  assert.equal(cids.length, 1)
  assert.equal(await readStoredBlock(blockDirs(root), parseCid(cids[0]!)), null, 'no block stored for a record never written')
})

test('on a filesystem that keeps its own times, a failed fix of the record\'s mtime leaves no entry behind the checkpoint, and the record it was to fix keeps its block', async (t) => {
  const root = await tempDir(t, 'hearth-beside-')
  const { writer } = hookedWriter(t, root, { options: () => ({}) })
  const r = await rig(t, root, 60_000, failingDerive(2), writer)
  const collectedAt = '2026-03-04T05:06:07.008Z'
  const rel = nameAt(collectedAt)
  await assert.rejects(r.pipeline.submit(SCOPE, { username: 'coarse' }, { collectedAt }), /derive failed/)
  const record = await r.index.get(rel)
  assert.ok(record !== null, 'the first batch\'s record stays')
  assert.equal((await journalKeys(r.db)).length, 1, 'the fix\'s batch put the new entry in the old one\'s place without its change')
  await r.journal.checkpoint()
  assert.deepEqual(await journalKeys(r.db), [], 'the checkpoint dropped the new entry')
  await decrypts(r.storage, record.cid!, await readFile(at(root, rel)))
})

test('a POST whose index write fails once its file is created: its ciphertext is dropped, not pinned by the next checkpoint with no record naming it (the file created beside the batch or before it)', async (t) => {
  for (const beside of [true, false]) {
    const root = await tempDir(t, 'hearth-beside-')
    const writer = beside ? hookedWriter(t, root, {}).writer : undefined
    const cids: string[] = []
    const r = await rig(t, root, 60_000, (index) => indexWith(index, {
      putDerived: async (_path, derive) => {
        cids.push(derive(null, { record: null, tombstone: null }).record.cid!)
        throw new Error('index failed')
      }
    }), writer)
    await assert.rejects(r.pipeline.submit(SCOPE, { username: `failed-${String(beside)}` }), /index failed/)
    await r.journal.checkpoint()
    await r.close() // writes what still waits in memory
    assert.equal(cids.length, 1)
    assert.equal(await readStoredBlock(blockDirs(root), parseCid(cids[0]!)), null, beside ? 'beside' : 'before')
  }
})
