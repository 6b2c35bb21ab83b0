import test from 'node:test'
import assert from 'node:assert/strict'
import { HearthError } from '../../src/errors.js'
import { silentLogger } from '../../src/log.js'
import { outcomeOfFailure, peerReceiveHook } from '../../src/sync/peer-receive.js'
import type { LiveEntry } from '../../src/sync/protocol.js'

const entry = { seq: 1, cid: 'bafkreigh2akiscaildcqabsyg3dfr6chu3fgpregiymsck7e7aqa4s52zy', schemaId: '7', fileId: null, size: 10, scope: 'a.b' } as unknown as LiveEntry

test('a peer file that can never be used is rejected, an unknown schema parks it, anything else is retried', () => {
  for (const code of ['DECRYPTION_FAILED', 'SCOPE_MISMATCH', 'SCHEMA_VALIDATION_FAILED', 'INVALID_ENVELOPE', 'INVALID_JSON', 'JSON_TOO_DEEP', 'NUMBER_NOT_REPRESENTABLE', 'JSON_TOO_MANY_VALUES', 'SCHEMA_SCOPE_MISMATCH', 'INVALID_SCOPE'] as const) {
    assert.equal(outcomeOfFailure(new HearthError(code, 'x')), 'rejected', code)
  }
  assert.equal(outcomeOfFailure(new HearthError('SCHEMA_NOT_FOUND', 'x')), 'waiting-schema')
  assert.equal(outcomeOfFailure(new HearthError('STORAGE_UNAVAILABLE', 'x')), null)
  assert.equal(outcomeOfFailure(new Error('disk full')), null)
})

test('the receive hook hands files to the pipeline as origin peer and reports each outcome', async () => {
  const received: unknown[] = []
  const reported: unknown[] = []
  let fail: Error | null = null
  const hook = peerReceiveHook({
    receive: async (_bytes, meta) => { received.push(meta); if (fail !== null) throw fail; return 'written' },
    syncFiles: async () => { throw new Error('nothing was stored unsynced') },
    logger: silentLogger(),
    onReceived: (file) => reported.push(file)
  })
  assert.equal(await hook(entry, new Uint8Array(1), { peerId: 'peer-a' }), 'written')
  assert.deepEqual(received, [{ cid: entry.cid, schemaId: '7', fileId: null, origin: 'peer' }])
  fail = new HearthError('DECRYPTION_FAILED', 'wrong key')
  assert.equal(await hook(entry, new Uint8Array(1), { peerId: 'peer-a' }), 'rejected')
  fail = new HearthError('SCHEMA_NOT_FOUND', 'unknown')
  assert.equal(await hook(entry, new Uint8Array(1), { peerId: 'peer-b' }), 'waiting-schema')
  fail = new HearthError('STORAGE_UNAVAILABLE', 'down')
  await assert.rejects(hook(entry, new Uint8Array(1), { peerId: 'peer-b' }), /down/)
  assert.deepEqual(reported, [
    { cid: entry.cid, peerId: 'peer-a', outcome: 'written' },
    { cid: entry.cid, peerId: 'peer-a', outcome: 'rejected' },
    { cid: entry.cid, peerId: 'peer-b', outcome: 'waiting-schema' }
  ])
})

test('a ciphertext stored unsynced, or kept unwritten (deferred), is journaled by a written file, and written and synced for any other answer but a rejection', async () => {
  const cases: Array<[{ unsyncedFiles: string[]; deferred?: boolean }, string[]]> = [
    [{ unsyncedFiles: ['/blocks/XY/BLOCK.data'] }, ['sync 1']],
    [{ unsyncedFiles: [], deferred: true }, ['write', 'sync 0']]
  ]
  for (const [stored, durable] of cases) {
    const calls: string[] = []
    const metas: unknown[] = []
    let answer: 'written' | 'exists' | Error = 'written'
    const hook = (journaled: boolean): ReturnType<typeof peerReceiveHook> => peerReceiveHook({
      receive: async (_bytes, meta) => { metas.push(meta); if (answer instanceof Error) throw answer; return answer },
      journaled,
      syncFiles: async (files) => { calls.push(`sync ${files.length}`) },
      writeDeferred: async () => { calls.push('write') },
      logger: silentLogger()
    })
    const from = { peerId: 'peer-a' }
    assert.equal(await hook(true)(entry, new Uint8Array(1), from, stored), 'written')
    assert.deepEqual(metas.at(-1), { cid: entry.cid, schemaId: '7', fileId: null, origin: 'peer', ...stored }, 'the pipeline journals it')
    assert.deepEqual(calls, [], 'nothing written or synced on its own')
    answer = 'exists'
    assert.equal(await hook(true)(entry, new Uint8Array(1), from, stored), 'exists')
    answer = new HearthError('SCHEMA_NOT_FOUND', 'later')
    assert.equal(await hook(true)(entry, new Uint8Array(1), from, stored), 'waiting-schema')
    answer = new HearthError('STORAGE_UNAVAILABLE', 'down')
    await assert.rejects(hook(true)(entry, new Uint8Array(1), from, stored), /down/)
    assert.deepEqual(calls, [...durable, ...durable, ...durable], 'present elsewhere, parked and failed: written, then synced')
    answer = new HearthError('DECRYPTION_FAILED', 'wrong key')
    assert.equal(await hook(true)(entry, new Uint8Array(1), from, stored), 'rejected')
    assert.equal(calls.length, 3 * durable.length, 'a rejected ciphertext is dropped, neither written nor synced')
    answer = 'written'
    assert.equal(await hook(false)(entry, new Uint8Array(1), from, stored), 'written')
    assert.deepEqual(calls.slice(3 * durable.length), durable, 'a pipeline without the journal gets it made durable first')
    assert.deepEqual(metas.at(-1), { cid: entry.cid, schemaId: '7', fileId: null, origin: 'peer' })
  }
})
