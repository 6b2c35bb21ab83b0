// A receiver SIGKILLed (a real signal, test/support/receive-kill.ts) at the points of a received
// file's write where the disk and the index disagree; a restart on the same home (replay, then
// what the start-up scan does) must leave every received file whole and indexed as the peer's,
// and never put a peer's bytes over another writer's file.
import { test, type TestContext } from 'node:test'
import assert from 'node:assert/strict'
import { spawn } from 'node:child_process'
import { readFile, readdir, truncate } from 'node:fs/promises'
import { fileURLToPath } from 'node:url'
import { join } from 'node:path'
import * as openpgp from 'openpgp'
import { scopeKeyHex } from '../../src/protocol/keys.js'
import { parseCid } from '../../src/storage/cid.js'
import { SCHEMA, SCOPE } from '../support/ingest-fixtures.js'
import { MASTER, peerFile, receiveRig, rejectedVersion } from '../support/receive-rig.js'
import { readStoredBlock } from '../support/stored-blocks.js'
import { tempDir } from '../support/tmp.js'

const killer = fileURLToPath(new URL('../support/receive-kill.ts', import.meta.url))

/** Runs the scenario until it SIGKILLs itself; returns what it printed before. */
async function killedAt (t: TestContext, scenario: 'deferred' | 'taken', root: string, ...args: string[]): Promise<Record<string, unknown>> {
  const child = spawn(process.execPath, ['--import', 'tsx', killer, scenario, root, ...args], { stdio: ['ignore', 'pipe', 'pipe'] })
  t.after(() => { if (child.exitCode === null && child.signalCode === null) child.kill('SIGKILL') })
  let out = ''
  let err = ''
  child.stdout.on('data', (d: Buffer) => { out += d.toString() })
  child.stderr.on('data', (d: Buffer) => { err += d.toString() })
  const signal = await new Promise<NodeJS.Signals | null>((resolve) => { child.on('exit', (_code, sig) => { resolve(sig) }) })
  assert.equal(signal, 'SIGKILL', `${scenario}: ${err}`)
  return JSON.parse(out.trim().split('\n').at(-1)!) as Record<string, unknown>
}

async function decrypted (ciphertext: Uint8Array): Promise<Buffer> {
  const message = await openpgp.readMessage({ binaryMessage: ciphertext })
  const { data } = await openpgp.decrypt({ message, passwords: [scopeKeyHex(MASTER, SCOPE)], format: 'binary' })
  return Buffer.from(data)
}

const names = async (dataDir: string): Promise<string[]> => (await readdir(join(dataDir, SCOPE))).filter((n) => !n.startsWith('.')).sort()

test('a received small file whose block storage kept in memory (as sync stores it), killed before the checkpoint: replay writes the block from the journal, and the file is whole and the peer\'s', async (t) => {
  const root = await tempDir(t, 'hearth-receive-kill-')
  const { plaintext } = await peerFile('killed-deferred')
  const got = await killedAt(t, 'deferred', root)
  assert.equal(got.outcome, 'written')
  assert.equal(got.pendingEntries, 1, 'journaled, waiting for the checkpoint')
  const cid = got.cid as string
  const path = got.path as string
  assert.equal(await readStoredBlock({ blocks: join(root, 'blocks'), datastore: join(root, 'datastore') }, parseCid(cid)), null, 'the block was not written by the receive')
  // and a power cut tore the data file (the name linked, its bytes lost): the same inode, other bytes
  await truncate(join(root, 'data', path), 10)

  const rig = await receiveRig(root)
  t.after(async () => { await rig.close() })
  assert.equal(await rig.journal.replay(), 1)
  assert.deepEqual(await readFile(join(rig.dataDir, path)), Buffer.from(plaintext))
  const record = await rig.index.get(path)
  assert.equal(record?.origin, 'peer')
  assert.equal(record?.cid, cid)
  assert.deepEqual(await decrypted(await rig.storage.get(cid)), Buffer.from(plaintext))
  assert.equal((await rig.pipeline.ingestPath(path)).outcome, 'unchanged', 'the scan keeps it as the peer\'s')
})

test('a received file whose name another writer took, killed between the link\'s EEXIST and the revert: the restart keeps the other writer\'s file, puts the name\'s earlier record back (or none) instead of the peer\'s, and the peer\'s file comes again under its fallback name', async (t) => {
  for (const earlier of [false, true]) {
    await t.test(earlier ? 'an earlier record' : 'no earlier record', async (t) => { await takenThenKilled(t, earlier) })
  }
})

async function takenThenKilled (t: TestContext, earlier: boolean): Promise<void> {
  const root = await tempDir(t, 'hearth-receive-kill-')
  const file = await peerFile('killed-taken')
  const got = await killedAt(t, 'taken', root, ...(earlier ? ['earlier'] : []))
  const cid = got.cid as string
  const path = got.path as string

  const rig = await receiveRig(root)
  t.after(async () => { await rig.close() })
  await rig.journal.replay()
  assert.deepEqual((await readFile(join(rig.dataDir, path))).toString(), got.theirs, 'the other writer\'s file is not overwritten')
  const { seq: _s, ...now } = await rig.index.get(path) ?? { seq: 0 }
  assert.deepEqual(earlier ? now : null, earlier ? rejectedVersion(path) : null, 'the peer\'s record is taken back')
  if (!earlier) assert.equal(await rig.index.get(path), null)
  assert.deepEqual(await rig.index.byCid(cid), [], 'so the peer\'s file is fetched again')
  // the start-up scan indexes the other writer's file as the name's own
  const scanned = await rig.pipeline.ingestPath(path)
  assert.equal(scanned.record?.origin, 'local')
  assert.equal(scanned.record?.state, 'rejected', 'not an envelope: rejected, kept')
  // the next pull: the peer's file under its fallback name, whole
  await rig.storage.add(file.ciphertext)
  assert.equal(await rig.pipeline.receive(file.ciphertext, { cid, schemaId: SCHEMA.id, origin: 'peer' }), 'written')
  const fallback = path.replace(/\.json$/, `.${cid.slice(-12)}.json`)
  assert.deepEqual(await readFile(join(rig.dataDir, fallback)), Buffer.from(file.plaintext))
  assert.deepEqual((await rig.index.byCid(cid)).map((r) => [r.path, r.origin]), [[fallback, 'peer']])
  assert.deepEqual(await names(rig.dataDir), [path.split('/')[1], fallback.split('/')[1]].sort())
}
