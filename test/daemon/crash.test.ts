// SIGKILL in the middle of a burst of dropped files, then restart: every file ends up indexed
// exactly once with a ciphertext that decrypts to the file, nothing lost or half-written.
import { test } from 'node:test'
import assert from 'node:assert/strict'
import { readFile } from 'node:fs/promises'
import { join } from 'node:path'
import { startDaemonProcess } from '../support/daemon.js'
import { dropFile, envelopeFor, waitFor } from '../support/data-files.js'
import { loadIdentity } from '../../src/identity/identity.js'
import { decryptEnvelopeBytes } from '../../src/protocol/encryption.js'
import { scopeKeyHex } from '../../src/protocol/keys.js'

const FILES = 300

test('SIGKILL during a burst of dropped files, restart: every file ingested exactly once', async (t) => {
  const d = await startDaemonProcess(t)
  const names: string[] = []
  for (let i = 0; i < FILES; i++) {
    const at = new Date(Date.UTC(2026, 0, 1, 0, 0, 0, i)).toISOString()
    const name = at.replaceAll(':', '-') + '.json'
    names.push(name)
    await dropFile(d.home.data, 'instagram.profile', name, JSON.stringify(envelopeFor('instagram.profile', { username: `user${i}` }, at)))
    if (i === Math.floor(FILES / 3)) {
      // kill once ingestion is really under way, not before it started
      await waitFor('some files stored', async () => ((await d.request({ path: '/v1/data/instagram.profile/versions?limit=1' })).json?.total ?? 0) > 5)
    }
  }
  await d.kill('SIGKILL')

  const d2 = await startDaemonProcess(t, { home: d.home.root })
  const versions = await waitFor('all files stored', async () => {
    const v = await d2.request({ path: `/v1/data/instagram.profile/versions?limit=1000` })
    return v.json.total === FILES && v.json.versions.every((x: any) => x.state === 'stored') ? v.json.versions : null
  }, 120_000)
  const paths = versions.map((v: any) => v.path).sort()
  assert.deepEqual(paths, names.map((n) => `instagram.profile/${n}`).sort())
  assert.equal(new Set(versions.map((v: any) => v.url)).size, FILES, 'one ciphertext per file')

  const identity = await loadIdentity(d2.home)
  const key = scopeKeyHex(identity.masterKey, 'instagram.profile')
  for (const v of versions.filter((_: unknown, i: number) => i % 10 === 0)) {
    const raw = await d2.request({ path: `/v1/storage/${v.url.slice('ipfs://'.length)}` })
    assert.equal(raw.status, 200)
    const plain = await decryptEnvelopeBytes(new Uint8Array(raw.body), key)
    assert.deepEqual(Buffer.from(plain), await readFile(join(d2.home.data, v.path)))
  }
  const status = (await d2.request({ path: '/v1/status' })).json
  assert.equal(status.files.counts.stored, FILES)
  assert.equal(status.files.counts.rejected, 0)
})
