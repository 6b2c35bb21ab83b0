// Decrypting received files on a worker thread (src/ingest/decryptor.ts) and ahead of their
// receive (createReceivePreparer): the same plaintext, hash and parsed envelope as in-thread, the
// caller's ciphertext untouched, a wrong key still DECRYPTION_FAILED and a plaintext that is no
// envelope INVALID_JSON / JSON_TOO_MANY_VALUES (so a peer's bad file is rejected), an unknown
// schema SCHEMA_NOT_FOUND, and a preparation nobody awaits never an unhandled rejection.
import { test } from 'node:test'
import assert from 'node:assert/strict'
import { createHash, randomBytes } from 'node:crypto'
import { isHearthError } from '../../src/errors.js'
import { encryptEnvelopeBytes } from '../../src/protocol/encryption.js'
import { buildEnvelope, parseEnvelopeBytes, serializeEnvelope } from '../../src/protocol/envelope.js'
import { createDecryptionWorkers, decryptReceived, workerDecrypt } from '../../src/ingest/decryptor.js'
import { createReceivePreparer } from '../../src/ingest/receive.js'
import type { ResolvedSchema } from '../../src/registry/types.js'

const KEY = 'ab'.repeat(32)
const OTHER_KEY = 'cd'.repeat(32)

/** A real envelope's bytes of about `bytes` bytes. */
function envelopeBytes (bytes: number, username = 'big'): Buffer {
  const env = buildEnvelope({ definitionUrl: 'ipfs://schema-1', scope: 'instagram.profile', collectedAt: '2026-01-21T10:00:00Z', data: { username, bio: randomBytes(Math.floor(bytes * 3 / 4)).toString('base64') } })
  return Buffer.from(serializeEnvelope(env))
}

async function pool (t: { after: (fn: () => Promise<void>) => void }): Promise<ReturnType<typeof createDecryptionWorkers>> {
  const p = createDecryptionWorkers()
  await p.start()
  t.after(async () => { await p.stop() })
  return p
}

test('a worker decrypts and parses a large file to the same plaintext, SHA-256 and envelope as this thread', async (t) => {
  const plaintext = envelopeBytes(3 * 1024 * 1024 + 11)
  const ciphertext = await encryptEnvelopeBytes(plaintext, KEY)
  const copy = Uint8Array.from(ciphertext)
  const workers = await pool(t)
  const [onWorker, here] = await Promise.all([workerDecrypt(workers)(ciphertext, KEY), decryptReceived(ciphertext, KEY)])
  assert.deepEqual(Buffer.from(onWorker.plaintext), plaintext)
  assert.equal(onWorker.sha256, createHash('sha256').update(plaintext).digest('hex'))
  assert.equal(Buffer.compare(onWorker.plaintext, here.plaintext), 0)
  assert.equal(onWorker.sha256, here.sha256)
  assert.deepEqual(onWorker.envelope, parseEnvelopeBytes(plaintext))
  assert.equal(Buffer.compare(ciphertext, copy), 0, 'the caller still holds its ciphertext (it is stored next)')
  assert.equal((await workers.status()).finished, 1)
})

test('a wrong key or a plaintext that is no envelope fails from the worker with the same code', async (t) => {
  const plaintext = envelopeBytes(600_000)
  const ciphertext = await encryptEnvelopeBytes(plaintext, KEY)
  const workers = await pool(t)
  const decrypt = workerDecrypt(workers)
  await assert.rejects(decrypt(ciphertext, OTHER_KEY), (err) => isHearthError(err, 'DECRYPTION_FAILED'))
  await assert.rejects(decrypt(await encryptEnvelopeBytes(randomBytes(300_000), KEY), KEY), (err) => isHearthError(err, 'INVALID_JSON'))
  // the receiver's value limit holds on the worker too
  await assert.rejects(decrypt(ciphertext, KEY, { maxJsonValues: 1 }), (err) => isHearthError(err, 'JSON_TOO_MANY_VALUES'))
  // the worker survives failed jobs
  assert.equal((await decrypt(ciphertext, KEY)).plaintext.byteLength, plaintext.byteLength)
})

test('a preparation resolves the schema\'s scope key, reports an unknown schema, and never rejects unawaited', async (t) => {
  const schema = { id: 'schema-1', scope: 'instagram.profile' } as unknown as ResolvedSchema
  const keys: string[] = []
  const prepare = createReceivePreparer({
    schemas: { byId: async (id) => id === schema.id ? schema : null, byScope: async () => null },
    scopeKey: (scope) => { keys.push(scope); return KEY }
  })
  const plaintext = envelopeBytes(300_000)
  const ciphertext = await encryptEnvelopeBytes(plaintext, KEY)
  const workers = await pool(t)
  const done = await prepare(ciphertext, schema.id, workerDecrypt(workers))
  assert.equal(done.envelope?.data.username, 'big')
  assert.deepEqual(Buffer.from(done.plaintext), plaintext)
  assert.deepEqual(keys, ['instagram.profile'])
  await assert.rejects(prepare(ciphertext, 'unknown', workerDecrypt(workers)), (err) => isHearthError(err, 'SCHEMA_NOT_FOUND'))

  const unhandled: unknown[] = []
  const onUnhandled = (err: unknown): void => { unhandled.push(err) }
  process.on('unhandledRejection', onUnhandled)
  t.after(() => { process.off('unhandledRejection', onUnhandled) })
  // a file that fails its CID check is never received: its failed preparation is never awaited
  void prepare(ciphertext, schema.id, async () => { throw new Error('worker lost') })
  await new Promise((resolve) => setTimeout(resolve, 50))
  assert.deepEqual(unhandled, [])
})

test('files beyond the worker\'s queue are decrypted in this thread instead of failing', async (t) => {
  const workers = createDecryptionWorkers({ maxQueued: 0 })
  await workers.start()
  t.after(async () => { await workers.stop() })
  const files = await Promise.all([0, 1, 2].map(async (i) => {
    const plaintext = envelopeBytes(400_000, `u${i}`)
    return { plaintext, ciphertext: await encryptEnvelopeBytes(plaintext, KEY) }
  }))
  const done = await Promise.all(files.map(async (f) => await workerDecrypt(workers)(f.ciphertext, KEY)))
  done.forEach((d, i) => { assert.equal(Buffer.compare(d.plaintext, files[i]!.plaintext), 0) })
  // one ran on the worker (parsed there), the others here (parsed by the receive)
  assert.equal(done.filter((d) => d.envelope !== undefined).length, 1)
  assert.equal((await workers.status()).finished, 1)
})
