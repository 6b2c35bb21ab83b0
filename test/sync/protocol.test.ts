// The sync wire format (pure): strict validation of every message, what a local change offers.
import { test } from 'node:test'
import assert from 'node:assert/strict'
import { CID } from 'multiformats/cid'
import * as raw from 'multiformats/codecs/raw'
import { sha256 } from 'multiformats/hashes/sha2'
import { base58btc } from 'multiformats/bases/base58'
import type { ChangeEntry } from '../../src/db/file-index.js'
import type { FileRecord } from '../../src/db/types.js'
import { isHearthError } from '../../src/errors.js'
import { toWireEntry } from '../../src/sync/offer.js'
import {
  MAX_CHANGES_LIMIT, MAX_FRAME_BYTES, SYNC_PROTOCOL_ID, checkMessage, checkPeerHello, decodeMessage, encodeMessage,
  type SyncMessage
} from '../../src/sync/protocol.js'
import { swarmKeyFile } from '../../src/sync/node.js'

const OWNER = '0xFCAd0B19bB29D4674531d6f115237E16AfCE377c'

async function cidOf (text: string): Promise<string> {
  return CID.create(1, raw.code, await sha256.digest(new TextEncoder().encode(text))).toString()
}

function protocolError (err: unknown): boolean {
  return isHearthError(err, 'SYNC_PROTOCOL_ERROR')
}

test('the protocol id is versioned', () => {
  assert.equal(SYNC_PROTOCOL_ID, '/hearth/sync/1.0.0')
})

test('every message type survives encode → decode unchanged', async () => {
  const cid = await cidOf('a')
  const messages: SyncMessage[] = [
    { type: 'hello', protocolVersion: 1, ownerAddress: OWNER, head: 12, cursor: 3 },
    { type: 'changes-request', since: 0, limit: 500 },
    {
      type: 'changes',
      entries: [
        { seq: 4, cid, schemaId: '1', collectedAt: '2026-01-21T10:00:00Z', size: 1234, fileId: null },
        { seq: 9, cid, deleted: true },
        { seq: 10, cid, schemaId: 'local:bafkreia', collectedAt: '2026-01-21T10:00:00.123Z', size: 0, fileId: '42' }
      ],
      next: 11,
      done: false
    },
    { type: 'fetch', cid },
    { type: 'blob', cid, size: 99 },
    { type: 'missing', cid },
    { type: 'poke', head: 5 },
    { type: 'ack', cursor: 5 },
    { type: 'error', code: 'PEER_REJECTED', message: 'no' }
  ]
  for (const m of messages) assert.deepEqual(decodeMessage(encodeMessage(m)), m)
})

test('a CID in another multibase spelling is read in the canonical base32 form', async () => {
  const cid = CID.parse(await cidOf('spelling'))
  const base58 = cid.toString(base58btc)
  assert.ok(base58.startsWith('z'))
  assert.deepEqual(checkMessage({ type: 'fetch', cid: base58 }), { type: 'fetch', cid: cid.toString() })
})

test('malformed messages are refused with SYNC_PROTOCOL_ERROR, never accepted loosely', async () => {
  const cid = await cidOf('a')
  const live = { seq: 1, cid, schemaId: '1', collectedAt: '2026-01-21T10:00:00Z', size: 1, fileId: null }
  const bad: unknown[] = [
    null, [], 'hello', 42,
    { type: 'nope' },
    { type: 'hello', protocolVersion: 1, ownerAddress: OWNER, head: 1 },
    { type: 'hello', protocolVersion: 1, ownerAddress: OWNER, head: 1, cursor: 0, extra: true },
    { type: 'hello', protocolVersion: 1, ownerAddress: 'not-an-address', head: 1, cursor: 0 },
    { type: 'changes-request', since: -1, limit: 10 },
    { type: 'changes-request', since: 1.5, limit: 10 },
    { type: 'changes-request', since: 0, limit: 0 },
    { type: 'changes-request', since: 0, limit: MAX_CHANGES_LIMIT + 1 },
    { type: 'changes-request', since: '0', limit: 10 },
    { type: 'fetch', cid: 'QmYwAPJzv5CZsnA625s3Xf2nemtYgPpHdWEz79ojWnPbdG' }, // CIDv0
    { type: 'fetch', cid: 'not a cid' },
    { type: 'blob', cid, size: -1 },
    { type: 'blob', cid, size: 2 ** 40 },
    { type: 'changes', entries: [live], next: 0, done: true }, // next behind the last entry
    { type: 'changes', entries: [live, live], next: 1, done: true }, // seqs not increasing
    { type: 'changes', entries: [{ ...live, scope: 'instagram.profile' }], next: 1, done: true },
    { type: 'changes', entries: [{ ...live, fileId: '0x12' }], next: 1, done: true },
    { type: 'changes', entries: [{ ...live, collectedAt: 'yesterday' }], next: 1, done: true },
    { type: 'changes', entries: [{ ...live, schemaId: 'a b' }], next: 1, done: true },
    { type: 'changes', entries: [{ seq: 1, cid, deleted: false }], next: 1, done: true },
    { type: 'changes', entries: [{ seq: 1, cid, deleted: true, schemaId: '1' }], next: 1, done: true },
    { type: 'changes', entries: 'x', next: 1, done: true },
    { type: 'changes', entries: Array.from({ length: MAX_CHANGES_LIMIT + 1 }, (_, i) => ({ ...live, seq: i + 1 })), next: 5000, done: true },
    { type: 'error', code: 1, message: 'x' }
  ]
  for (const value of bad) assert.throws(() => checkMessage(value), protocolError, JSON.stringify(value)?.slice(0, 120))
  const frames = [
    new Uint8Array([0xff, 0xfe, 0x00]),
    new TextEncoder().encode('{"type":"poke","head":1'),
    new Uint8Array(MAX_FRAME_BYTES + 1)
  ]
  for (const frame of frames) assert.throws(() => decodeMessage(frame), protocolError)
})

test('a greeting from another owner or another protocol version is refused', () => {
  const hello = { type: 'hello' as const, protocolVersion: 1, ownerAddress: OWNER.toLowerCase(), head: 0, cursor: 0 }
  assert.doesNotThrow(() => checkPeerHello(hello, OWNER))
  assert.throws(() => checkPeerHello({ ...hello, ownerAddress: '0x' + '1'.repeat(40) }, OWNER), (err) => isHearthError(err, 'PEER_REJECTED'))
  assert.throws(() => checkPeerHello({ ...hello, protocolVersion: 2 }, OWNER), (err) => isHearthError(err, 'PEER_REJECTED'))
})

function record (overrides: Partial<FileRecord>): FileRecord {
  return {
    path: 'instagram.profile/2026-01-21T10-00-00Z.json', scope: 'instagram.profile', collectedAt: '2026-01-21T10:00:00Z',
    schemaId: '1', cid: null, size: 100, encryptedSize: 400, sha256: 'a'.repeat(64), mtimeMs: 1, state: 'stored',
    fileId: null, origin: 'local', updatedAt: 1, ...overrides
  }
}

test('local changes are offered only for stored ciphertext and deletions, without scope, path or plaintext', async () => {
  const cid = await cidOf('x')
  const live = (r: FileRecord): ChangeEntry => ({ seq: 7, path: r.path, deleted: false, record: r })
  const stored = toWireEntry(live(record({ cid })))
  assert.deepEqual(stored, { seq: 7, cid, schemaId: '1', collectedAt: '2026-01-21T10:00:00Z', size: 400, fileId: null })
  const text = JSON.stringify(stored)
  assert.ok(!text.includes('instagram') && !text.includes('.json') && !text.includes('aaaa'), text)

  assert.deepEqual(toWireEntry(live(record({ cid, state: 'registered', fileId: '9' }))), { seq: 7, cid, schemaId: '1', collectedAt: '2026-01-21T10:00:00Z', size: 400, fileId: '9' })
  assert.equal(toWireEntry(live(record({ cid: null }))), null)
  assert.equal(toWireEntry(live(record({ cid, state: 'waiting-schema' }))), null)
  assert.equal(toWireEntry(live(record({ cid, state: 'rejected' }))), null)
  assert.equal(toWireEntry(live(record({ cid, schemaId: null }))), null)
  assert.equal(toWireEntry(live(record({ cid, schemaId: 'has space' }))), null, 'an entry the receiver would refuse is not offered')
  assert.deepEqual(toWireEntry(live(record({ cid, state: 'deleted' }))), { seq: 7, cid, deleted: true })
  assert.deepEqual(toWireEntry({ seq: 8, path: 'p', deleted: true, record: null, cid, scope: 'instagram.profile' }), { seq: 8, cid, deleted: true })
  assert.equal(toWireEntry({ seq: 8, path: 'p', deleted: true, record: null, cid: null, scope: 'instagram.profile' }), null)
})

test('the private-network key file has the pnet v1 format and the derived key only', () => {
  const key = new Uint8Array(32).map((_, i) => i)
  assert.equal(new TextDecoder().decode(swarmKeyFile(key)),
    '/key/swarm/psk/1.0.0/\n/base16/\n000102030405060708090a0b0c0d0e0f101112131415161718191a1b1c1d1e1f')
  assert.throws(() => swarmKeyFile(new Uint8Array(31)), (err) => isHearthError(err, 'INVALID_ARGUMENT'))
})
