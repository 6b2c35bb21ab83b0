import assert from 'node:assert/strict'
import { createHmac } from 'node:crypto'
import { test } from 'node:test'
import { hexToBytes, type Hex } from 'viem'
import { isHearthError } from '../../src/errors.js'
import {
  deriveKey, KEY_INFO, MASTER_KEY_MESSAGE, masterKeyFromSignature, peerIdentitySeed, privateNetworkKey,
  scopeKey, scopeKeyHex, signMasterKey
} from '../../src/protocol/keys.js'

// docs/protocol.md §2.4 test vector.
const PRIVATE_KEY: Hex = '0x0123456789abcdef0123456789abcdef0123456789abcdef0123456789abcdef'
const OWNER = '0xFCAd0B19bB29D4674531d6f115237E16AfCE377c'
const INSTAGRAM_PROFILE_KEY = '15bedf470a0d36090b49639ef81470368ee21909a83afeaabe2b092ceb02b767'

test('docs/protocol.md §2.4 test vector: owner address and instagram.profile scope key', async () => {
  assert.equal(MASTER_KEY_MESSAGE, 'vana-master-key-v1')
  const signature = await signMasterKey(PRIVATE_KEY)
  const { masterKey, ownerAddress } = await masterKeyFromSignature(signature)
  assert.equal(ownerAddress, OWNER)
  assert.equal(masterKey.length, 65)
  assert.deepEqual(masterKey, hexToBytes(signature))
  assert.equal(scopeKeyHex(masterKey, 'instagram.profile'), INSTAGRAM_PROFILE_KEY)
  assert.equal(Buffer.from(scopeKey(masterKey, 'instagram.profile')).toString('hex'), INSTAGRAM_PROFILE_KEY)
})

// RFC 5869 HKDF written out with HMAC, to check the derivation independently of hkdfSync.
function referenceHkdf (ikm: Uint8Array, salt: string, info: string, length: number): string {
  const prk = createHmac('sha256', salt).update(ikm).digest()
  let t = Buffer.alloc(0)
  let out = Buffer.alloc(0)
  for (let i = 1; out.length < length; i++) {
    t = createHmac('sha256', prk).update(Buffer.concat([t, Buffer.from(info), Buffer.from([i])])).digest()
    out = Buffer.concat([out, t])
  }
  return out.subarray(0, length).toString('hex')
}

test('derivations are HKDF-SHA256 with salt "vana" and their own info strings', async () => {
  const { masterKey } = await masterKeyFromSignature(await signMasterKey(PRIVATE_KEY))
  assert.equal(scopeKeyHex(masterKey, 'spotify.savedTracks'), referenceHkdf(masterKey, 'vana', 'scope:spotify.savedTracks', 32))
  assert.equal(Buffer.from(privateNetworkKey(masterKey)).toString('hex'), referenceHkdf(masterKey, 'vana', KEY_INFO.privateNetwork, 32))
  assert.equal(Buffer.from(peerIdentitySeed(masterKey)).toString('hex'), referenceHkdf(masterKey, 'vana', KEY_INFO.peerIdentity, 32))
  assert.equal(KEY_INFO.privateNetwork, 'hearth:libp2p-pnet:v1')
  assert.equal(KEY_INFO.peerIdentity, 'hearth:libp2p-peer-id:v1')
  assert.equal(deriveKey(masterKey, 'hearth:test', 64).length, 64)
  assert.equal(Buffer.from(deriveKey(masterKey, 'hearth:test', 64)).toString('hex'), referenceHkdf(masterKey, 'vana', 'hearth:test', 64))
})

test('keys differ across infos, scopes (case-sensitively) and owners', async () => {
  const { masterKey } = await masterKeyFromSignature(await signMasterKey(PRIVATE_KEY))
  const other = (await masterKeyFromSignature(await signMasterKey(`0x${'11'.repeat(32)}`))).masterKey
  const keys = [
    scopeKeyHex(masterKey, 'instagram.profile'),
    scopeKeyHex(masterKey, 'instagram.posts'),
    scopeKeyHex(masterKey, 'spotify.savedTracks'),
    scopeKeyHex(masterKey, 'spotify.savedtracks'),
    scopeKeyHex(masterKey, 'youtube.history.watchLater'),
    Buffer.from(privateNetworkKey(masterKey)).toString('hex'),
    Buffer.from(peerIdentitySeed(masterKey)).toString('hex'),
    scopeKeyHex(other, 'instagram.profile'),
    Buffer.from(privateNetworkKey(other)).toString('hex')
  ]
  assert.equal(new Set(keys).size, keys.length)
  for (const k of keys) assert.match(k, /^[0-9a-f]{64}$/)
})

test('a scope key can only come from scopeKey: deriveKey refuses "scope:" infos', async () => {
  const { masterKey } = await masterKeyFromSignature(await signMasterKey(PRIVATE_KEY))
  assert.throws(() => deriveKey(masterKey, 'scope:instagram.profile'), (e: unknown) => isHearthError(e, 'INVALID_ARGUMENT'))
  assert.throws(() => deriveKey(masterKey, ''), (e: unknown) => isHearthError(e, 'INVALID_ARGUMENT'))
  assert.throws(() => deriveKey(masterKey, 'hearth:x', 0), (e: unknown) => isHearthError(e, 'INVALID_ARGUMENT'))
  assert.throws(() => deriveKey(masterKey.subarray(0, 64), 'hearth:x'), (e: unknown) => isHearthError(e, 'INVALID_ARGUMENT'))
  assert.throws(() => scopeKey(masterKey, 'Instagram.profile'), (e: unknown) => isHearthError(e, 'INVALID_SCOPE'))
  assert.throws(() => scopeKeyHex(masterKey, 'a.b.c.d'), (e: unknown) => isHearthError(e, 'INVALID_SCOPE'))
})

test('masterKeyFromSignature accepts 0x hex, bare hex and bytes, and normalises v = 0/1 to 27/28', async () => {
  const signature = await signMasterKey(PRIVATE_KEY)
  const bytes = hexToBytes(signature)
  for (const form of [signature, signature.slice(2), signature.toUpperCase().replace('0X', '0x'), bytes]) {
    const r = await masterKeyFromSignature(form)
    assert.equal(r.ownerAddress, OWNER)
    assert.deepEqual(r.masterKey, bytes)
  }
  const lowV = new Uint8Array(bytes)
  lowV[64] = bytes[64]! - 27
  const r = await masterKeyFromSignature(lowV)
  assert.equal(r.ownerAddress, OWNER)
  assert.deepEqual(r.masterKey, bytes)
  assert.equal(scopeKeyHex(r.masterKey, 'instagram.profile'), INSTAGRAM_PROFILE_KEY)
  assert.equal(lowV[64], bytes[64]! - 27, 'the input is not modified')
})

test('masterKeyFromSignature rejects wrong lengths, bad hex, bad v and unrecoverable signatures', async () => {
  const signature = await signMasterKey(PRIVATE_KEY)
  const bad: unknown[] = [
    signature.slice(0, -2),
    signature + '00',
    '0x',
    'not hex at all',
    signature.slice(0, -1),
    signature.slice(0, -2) + '05',
    '0x' + '00'.repeat(64) + '1b',
    12345
  ]
  for (const sig of bad) {
    await assert.rejects(masterKeyFromSignature(sig as Hex), (e: unknown) => {
      assert.ok(isHearthError(e, 'INVALID_IDENTITY'), String(e))
      assert.ok(!e.message.includes(signature.slice(2, 20)), 'the secret signature is never quoted')
      return true
    }, String(sig).slice(0, 20))
  }
})
