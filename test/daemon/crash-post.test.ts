// SIGKILL in the middle of a burst of 16 concurrent POSTs, then restart: every write that was
// acknowledged (201) is there — its file, its index record with the acknowledged CID, and a
// ciphertext that plain openpgp.decrypt opens to exactly the file — and nothing is half-written.
import { test } from 'node:test'
import assert from 'node:assert/strict'
import { readdir, readFile } from 'node:fs/promises'
import { join } from 'node:path'
import * as openpgp from 'openpgp'
import { startDaemonProcess } from '../support/daemon.js'
import { waitFor } from '../support/data-files.js'
import { loadIdentity } from '../../src/identity/identity.js'
import { scopeKeyHex } from '../../src/protocol/keys.js'

const SCOPE = 'instagram.profile'
const CLIENTS = 16
const KILL_AFTER = 200

interface Ack { path: string; url: string; username: string }

test('SIGKILL during 16 concurrent POSTs, restart: every acknowledged write is present and decrypts', async (t) => {
  const d = await startDaemonProcess(t)
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
  const acknowledged = [...acked]

  const d2 = await startDaemonProcess(t, { home: d.home.root })
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
})
