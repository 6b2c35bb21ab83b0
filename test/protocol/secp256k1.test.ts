// libsecp256k1 and the @noble/curves fallback (src/protocol/secp256k1.ts) give the same public
// keys, signatures and recovered keys, and refuse the same bad keys.
import test from 'node:test'
import assert from 'node:assert/strict'
import { randomBytes } from 'node:crypto'
import { nativeSecp256k1, nobleSecp256k1, secp256k1, type Secp256k1 } from '../../src/protocol/secp256k1.js'

const loaded = nativeSecp256k1()
const noble = nobleSecp256k1()

test('the native binding loads here and is the one in use', () => {
  assert.ok(loaded !== null, 'secp256k1\'s prebuilt binding loads on this platform')
  const native: Secp256k1 = loaded
  const key = randomBytes(32)
  assert.deepEqual(secp256k1().publicKey(key), native.publicKey(key))
})

test('public keys, signatures and recovered keys are the same bytes on both implementations', () => {
  assert.ok(loaded !== null)
  const native: Secp256k1 = loaded
  for (let i = 0; i < 40; i++) {
    const key = randomBytes(32)
    const hash = randomBytes(32)
    const pub = native.publicKey(key)
    assert.equal(pub.length, 65)
    assert.deepEqual(Buffer.from(noble.publicKey(key)), Buffer.from(pub))
    const signed = native.sign(hash, key)
    const fallback = noble.sign(hash, key)
    assert.deepEqual(Buffer.from(fallback.signature), Buffer.from(signed.signature), 'RFC 6979 and low s on both')
    assert.equal(fallback.recovery, signed.recovery)
    assert.deepEqual(Buffer.from(native.recover(signed.signature, signed.recovery, hash)), Buffer.from(pub))
    assert.deepEqual(Buffer.from(noble.recover(signed.signature, signed.recovery, hash)), Buffer.from(pub))
  }
})

test('a key outside the curve\'s order and a signature that recovers nothing throw on both', () => {
  assert.ok(loaded !== null)
  for (const impl of [loaded, noble]) {
    assert.throws(() => impl.publicKey(new Uint8Array(32)), 'zero')
    assert.throws(() => impl.publicKey(new Uint8Array(32).fill(0xff)), 'above the order')
    assert.throws(() => impl.recover(new Uint8Array(64), 0, randomBytes(32)), 'r = 0')
  }
})
