// Files another program writes into data/ slowly, in chunks with pauses: the watcher reads a file
// after a short quiet period, so it may read one that is only half written. Such a file is not
// JSON yet: nothing is recorded for it, it is read again once it has stayed unchanged for
// ingest.stabilityMs, and it is stored once complete — one version, never a rejected or archived
// one on the way. A writer that pauses longer than that gets a transient rejection, replaced by
// the complete version (still one version). A file that never becomes JSON is rejected only then.
import { test, type TestContext } from 'node:test'
import assert from 'node:assert/strict'
import { mkdir, open, readFile, writeFile } from 'node:fs/promises'
import { join } from 'node:path'
import { startDaemonProcess, type DaemonProcess } from '../support/daemon.js'
import { envelopeFor, waitFor } from '../support/data-files.js'
import { tempDir } from '../support/tmp.js'
import { loadIdentity } from '../../src/identity/identity.js'
import { decryptEnvelopeBytes } from '../../src/protocol/encryption.js'
import { scopeKeyHex } from '../../src/protocol/keys.js'

const SCOPE = 'instagram.profile'
const STABILITY_MS = 1500

/** A daemon whose ingest.stabilityMs is STABILITY_MS (the quiet period stays the default). */
async function startDaemon (t: TestContext, env: Record<string, string> = {}): Promise<DaemonProcess> {
  const home = await tempDir(t, 'hearth-slow-writer-')
  await writeFile(join(home, 'config.json'), JSON.stringify({ ingest: { stabilityMs: STABILITY_MS } }))
  return await startDaemonProcess(t, { home, env })
}

async function writeFileIn (d: DaemonProcess, path: string, text: string): Promise<void> {
  await mkdir(join(d.home.data, SCOPE), { recursive: true })
  await writeFile(join(d.home.data, path), text)
}

const sleep = async (ms: number): Promise<void> => { await new Promise((resolve) => setTimeout(resolve, ms)) }

/** Writes `bytes` into data/SCOPE/name in place, in `parts` chunks with `pauseMs` between them. */
async function writeSlowly (d: DaemonProcess, name: string, bytes: Buffer, parts: number, pauseMs: number, between?: () => Promise<void>): Promise<void> {
  await mkdir(join(d.home.data, SCOPE), { recursive: true })
  const fh = await open(join(d.home.data, SCOPE, name), 'w')
  try {
    const step = Math.ceil(bytes.byteLength / parts)
    for (let at = 0; at < bytes.byteLength; at += step) {
      if (at > 0) { await sleep(pauseMs); await between?.() }
      await fh.write(bytes.subarray(at, at + step))
    }
  } finally {
    await fh.close()
  }
}

async function versionsOf (d: DaemonProcess, path: string): Promise<any[]> {
  const all = (await d.request({ path: `/v1/data/${SCOPE}/versions?limit=1000` })).json.versions as any[]
  return all.filter((v) => v.path === path || v.path.startsWith(`${path}#`))
}

async function countsOf (d: DaemonProcess): Promise<Record<string, number>> {
  return (await d.request({ path: '/v1/status' })).json.files.counts
}

function envelopeBytes (username: string, at: string): Buffer {
  return Buffer.from(JSON.stringify(envelopeFor(SCOPE, { username, bio: 'z'.repeat(3000) }, at)))
}

test('a file written slowly in chunks is stored once complete, with nothing recorded while it is half written', async (t) => {
  const d = await startDaemon(t, { HEARTH_LOG_LEVEL: 'debug' })
  const identity = await loadIdentity(d.home)

  // pauses well over the quiet period (25 ms) but under ingest.stabilityMs: read half written, not rejected
  const at = '2026-02-01T00:00:00.000Z'
  const bytes = envelopeBytes('slow', at)
  const path = `${SCOPE}/2026-02-01T00-00-00.000Z.json`
  let waited = 0
  await writeSlowly(d, '2026-02-01T00-00-00.000Z.json', bytes, 4, 300, async () => {
    assert.deepEqual(await versionsOf(d, path), [], 'nothing is recorded for a half-written file')
    waited = Math.max(waited, (await d.request({ path: '/v1/status' })).json.ingest.waitingForWriter)
  })
  assert.equal(waited, 1, '/v1/status shows the file waiting for its writer')
  const [stored] = await waitFor('the slow file stored', async () => {
    const v = await versionsOf(d, path)
    return v.length === 1 && v[0].state === 'stored' ? v : null
  })
  const cid = stored.url.slice('ipfs://'.length)
  const plain = await decryptEnvelopeBytes(new Uint8Array((await d.request({ path: `/v1/storage/${cid}` })).body), scopeKeyHex(identity.masterKey, SCOPE))
  assert.deepEqual(Buffer.from(plain), bytes, 'the ciphertext holds the whole file')
  assert.equal((await countsOf(d)).rejected ?? 0, 0, 'no rejection on the way')
  assert.match(d.output(), /not complete JSON yet/, 'the half-written file was read, and waited')
})

test('a writer pausing longer than ingest.stabilityMs gets a transient rejection, then one stored version; a file that never becomes JSON is rejected only after that time', async (t) => {
  const d = await startDaemon(t)

  const at = '2026-02-02T00:00:00.000Z'
  const bytes = envelopeBytes('slower', at)
  let sawRejected = false
  const path = `${SCOPE}/2026-02-02T00-00-00.000Z.json`
  await writeSlowly(d, '2026-02-02T00-00-00.000Z.json', bytes, 2, STABILITY_MS + 1500, async () => {
    sawRejected = (await countsOf(d)).rejected === 1
  })
  assert.equal(sawRejected, true, 'the half file was rejected once it stayed unchanged for ingest.stabilityMs')
  const versions = await waitFor('the complete file stored', async () => {
    const v = await versionsOf(d, path)
    return v.some((x) => x.state === 'stored') ? v : null
  })
  assert.equal(versions.length, 1, 'the rejected half is replaced, not kept as an archived version')
  assert.equal((await countsOf(d)).rejected ?? 0, 0)

  const brokenPath = `${SCOPE}/2026-02-03T00-00-00.000Z.json`
  const started = Date.now()
  await writeFileIn(d, brokenPath, '{"not": "an envelope", ')
  await sleep(STABILITY_MS / 2)
  assert.equal((await countsOf(d)).rejected ?? 0, 0, 'not rejected before it stayed unchanged for ingest.stabilityMs')
  await waitFor('the broken file rejected', async () => (await countsOf(d)).rejected === 1)
  assert.ok(Date.now() - started >= STABILITY_MS)
  assert.equal((await readFile(join(d.home.data, path))).equals(bytes), true, 'the file on disk is untouched')
})
