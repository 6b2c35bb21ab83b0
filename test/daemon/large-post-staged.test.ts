// A large POST's ciphertext is stored while its body is still arriving (ingest/early-store.ts),
// in a staging folder outside the blockstore (storage/staged-import.ts): what a body that never
// makes it leaves behind, through the real daemon — a client gone mid-body, a SIGKILL mid-body.
import { test } from 'node:test'
import assert from 'node:assert/strict'
import { request, type ClientRequest } from 'node:http'
import { dirname, join } from 'node:path'
import { startDaemonProcess } from '../support/daemon.js'
import { referenceCid } from '../support/reference-cid.js'
import { filesUnder } from '../support/tmp.js'

const SCOPE = 'instagram.profile'
const MB = 1024 * 1024

async function until (what: string, check: () => Promise<boolean>): Promise<void> {
  for (let i = 0; i < 500; i++) {
    if (await check()) return
    await new Promise((resolve) => setTimeout(resolve, 10))
  }
  assert.fail(`timed out waiting until ${what}`)
}

/**
 * A POST of a 10 MB body of which all but the last byte is written (the request is left open),
 * and a wait of up to 2 s for some of its blocks to be staged: a body that stops arriving gives
 * its worker back after a while (its staged blocks go with it), and on a loaded machine that can
 * come first (the file writer runs at a lower priority). What the test asserts after it holds
 * either way; test/storage/staged-import.test.ts checks the removal and the sweep step by step.
 */
async function postUntilStaged (socketPath: string, staging: string): Promise<ClientRequest> {
  const body = Buffer.from(JSON.stringify({ username: 'partial', bio: 'p'.repeat(10 * MB) }))
  const req = request({ socketPath, method: 'POST', path: `/v1/data/${SCOPE}`, headers: { 'content-type': 'application/json', 'content-length': body.byteLength } })
  req.on('error', () => {}) // destroyed by the test, or the daemon killed
  req.write(body.subarray(0, body.byteLength - 1))
  for (let i = 0; i < 1000 && (await filesUnder(staging)).length === 0; i++) await new Promise((resolve) => setTimeout(resolve, 2))
  return req
}

test('a client gone mid-body and a SIGKILL mid-body leave none of a large body\'s staged blocks, and the file stored before is intact', async (t) => {
  const d = await startDaemonProcess(t)
  const staging = join(dirname(d.home.blocks), 'staged-blocks')
  const stored = await d.request({ method: 'POST', path: `/v1/data/${SCOPE}`, body: { username: 'kept', bio: 'k'.repeat(2 * MB) } })
  assert.equal(stored.status, 201, JSON.stringify(stored.json))
  const blocks = await filesUnder(d.home.blocks)

  const gone = await postUntilStaged(d.home.socket, staging)
  gone.destroy()
  await until('the client\'s staged blocks are removed', async () => (await filesUnder(staging)).length === 0)
  assert.deepEqual(await filesUnder(d.home.blocks), blocks, 'nothing of it in the blockstore (which storage.bytes counts)')
  assert.equal((await d.request({ path: `/v1/data/${SCOPE}/versions` })).json.total, 1)

  await postUntilStaged(d.home.socket, staging)
  await d.kill('SIGKILL')
  const d2 = await startDaemonProcess(t, { home: d.home.root })
  assert.deepEqual(await filesUnder(staging), [], 'the start removed what the killed run staged')
  assert.deepEqual(await filesUnder(d2.home.blocks), blocks)
  const versions = await d2.request({ path: `/v1/data/${SCOPE}/versions` })
  assert.deepEqual(versions.json.versions.map((v: any) => v.url), [stored.json.url])
  const cid = (stored.json.url as string).slice('ipfs://'.length)
  const raw = await d2.request({ path: `/v1/storage/${cid}` })
  assert.equal(raw.status, 200)
  assert.equal(await referenceCid(new Uint8Array(raw.body)), cid)
  assert.equal((await d2.request({ path: `/v1/data/${SCOPE}` })).json.data.username, 'kept')
})

test('a large body that fails validation is answered once its staged blocks are gone: nothing of it stored', async (t) => {
  const d = await startDaemonProcess(t)
  const staging = join(dirname(d.home.blocks), 'staged-blocks')
  const blocks = await filesUnder(d.home.blocks)
  const invalid = await d.request({ method: 'POST', path: `/v1/data/${SCOPE}`, body: { bio: 'x'.repeat(8 * MB) } }) // no username
  assert.equal(invalid.status, 400)
  assert.equal(invalid.json.error.errorCode, 'SCHEMA_VALIDATION_FAILED')
  assert.deepEqual(await filesUnder(staging), [], 'removed before the answer')
  assert.deepEqual(await filesUnder(d.home.blocks), blocks)
  const status = await d.request({ path: '/v1/status' })
  assert.ok(status.json.encryptionWorkers.cancelled >= 1, 'it was encrypted early, and its job dropped (once, or twice when the body came slowly enough to give its worker back)')
  const ok = await d.request({ method: 'POST', path: `/v1/data/${SCOPE}`, body: { username: 'next', bio: 'y'.repeat(8 * MB) } })
  assert.equal(ok.status, 201)
  assert.deepEqual(await filesUnder(staging), [])
})
