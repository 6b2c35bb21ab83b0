// SIGKILL in the middle of a burst of 16 concurrent POSTs, then restart: every write that was
// acknowledged (201) is there — its file, its index record with the acknowledged CID, and a
// ciphertext that plain openpgp.decrypt opens to exactly the file — and nothing is half-written.
// The second test also loses what a power cut can lose: the files the ingest journal still
// covers (written without a sync) are deleted or torn before the restart, which replays them.
import { test, type TestContext } from 'node:test'
import assert from 'node:assert/strict'
import { readdir, readFile, rm } from 'node:fs/promises'
import { join } from 'node:path'
import * as openpgp from 'openpgp'
import { startDaemonProcess, type DaemonProcess } from '../support/daemon.js'
import { openDatabase } from '../../src/db/database.js'
import { decodeJournalEntry } from '../../src/ingest/journal-entry.js'
import { removeStoredBlock } from '../support/stored-blocks.js'
import { parseCid } from '../../src/storage/cid.js'
import { waitFor } from '../support/data-files.js'
import { tearFile } from '../support/power-cut.js'
import { loadIdentity } from '../../src/identity/identity.js'
import { scopeKeyHex } from '../../src/protocol/keys.js'

const SCOPE = 'instagram.profile'
const CLIENTS = 16
const KILL_AFTER = 200

interface Ack { path: string; url: string; username: string }

/** 16 clients POST until KILL_AFTER are acknowledged, then the daemon is SIGKILLed; the acknowledged ones. */
async function burstThenKill (d: DaemonProcess): Promise<Ack[]> {
  const acked: Ack[] = []
  let next = 0
  let killed = false
  const clients = Array.from({ length: CLIENTS }, async () => {
    while (!killed) {
      const username = `user${next++}`
      const r = await d.request({ method: 'POST', path: `/v1/data/${SCOPE}`, body: { username, bio: 'b'.repeat(900) } }).catch(() => null)
      if (r === null) return // the daemon is gone: this request was never acknowledged
      if (r.status === 201) acked.push({ path: r.json.path, url: r.json.url, username })
      else if (!killed) throw new Error(`POST answered ${r.status}: ${JSON.stringify(r.json)}`)
    }
  })
  await waitFor('enough acknowledged writes', async () => acked.length >= KILL_AFTER, 120_000)
  killed = true
  await d.kill('SIGKILL')
  await Promise.all(clients)
  return [...acked]
}

/** Restarts on the same home and checks every acknowledged write: file, index record, ciphertext. */
async function restartAndCheck (t: TestContext, home: string, acknowledged: Ack[]): Promise<void> {
  const d2 = await startDaemonProcess(t, { home })
  const identity = await loadIdentity(d2.home)
  const password = scopeKeyHex(identity.masterKey, SCOPE)
  const names = (await readdir(join(d2.home.data, SCOPE))).filter((n) => !n.startsWith('.'))
  for (const name of names) JSON.parse(await readFile(join(d2.home.data, SCOPE, name), 'utf8')) // whole files only
  // files written but not acknowledged are finished by the start-up scan
  const versions = await waitFor('every file stored after the restart', async () => {
    const v = await d2.request({ path: `/v1/data/${SCOPE}/versions?limit=1000` })
    return v.json.total === names.length && v.json.versions.every((x: any) => x.state === 'stored') ? v.json.versions : null
  }, 120_000)
  const byPath = new Map<string, any>(versions.map((v: any) => [v.path, v]))
  for (const ack of acknowledged) {
    const v = byPath.get(ack.path)
    assert.ok(v !== undefined, `acknowledged ${ack.path} is indexed`)
    assert.equal(v.url, ack.url, `${ack.path} keeps the acknowledged CID`)
    const onDisk = await readFile(join(d2.home.data, ack.path))
    assert.equal(JSON.parse(onDisk.toString()).data.username, ack.username)
    const raw = await d2.request({ path: `/v1/storage/${ack.url.slice('ipfs://'.length)}` })
    assert.equal(raw.status, 200, `ciphertext of ${ack.path} is stored`)
    const message = await openpgp.readMessage({ binaryMessage: new Uint8Array(raw.body) })
    const { data } = await openpgp.decrypt({ message, passwords: [password], format: 'binary' })
    assert.deepEqual(Buffer.from(data), onDisk, `${ack.path} decrypts to its file`)
  }
}

test('SIGKILL during 16 concurrent POSTs, restart: every acknowledged write is present and decrypts', async (t) => {
  const d = await startDaemonProcess(t)
  const acknowledged = await burstThenKill(d)
  await restartAndCheck(t, d.home.root, acknowledged)
})

test('SIGKILL during 16 concurrent POSTs, then the unsynced files lost as by a power cut: the journal restores every acknowledged write', async (t) => {
  // no background checkpoint before the kill: every acknowledged file is still only journaled
  const d = await startDaemonProcess(t, { args: ['--set', 'ingest.checkpointMs=600000'] })
  const acknowledged = await burstThenKill(d)
  const db = await openDatabase(d.home.index)
  const entries = (await db.sublevel<Uint8Array>('ingest-journal', { valueEncoding: 'view' }).values().all()).map(decodeJournalEntry)
  await db.close()
  const journaled = new Set(entries.map((e) => e.path))
  assert.ok(acknowledged.every((a) => journaled.has(a.path)), 'every acknowledged write is journaled')
  // gone, torn: what the page cache held and a power cut dropped
  for (const [i, e] of entries.entries()) {
    const dataFile = join(d.home.data, e.path)
    if (i % 2 === 0) await rm(dataFile, { force: true })
    else await tearFile(dataFile, { length: 10 }).catch(() => {})
    if (e.cid !== undefined) await removeStoredBlock(d.home, parseCid(e.cid))
  }
  await restartAndCheck(t, d.home.root, acknowledged)
})
