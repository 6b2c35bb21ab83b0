// The account arithmetic of src/protocol/eth.ts gives exactly what viem gives (viem stays a
// dependency for the chain and typed data; the daemon's start no longer loads it).
import test from 'node:test'
import assert from 'node:assert/strict'
import { randomBytes } from 'node:crypto'
import { getAddress, hashMessage, recoverMessageAddress } from 'viem'
import { generatePrivateKey, privateKeyToAccount } from 'viem/accounts'
import {
  addressOfPrivateKey, bytesToHex, checksumAddress, hexToBytes, isAddress, isHexBytes, personalMessageHash,
  randomPrivateKey, recoverPersonalSigner, signPersonalMessage
} from '../../src/protocol/eth.js'

const MESSAGES = ['vana-master-key-v1', '', 'eyJhdWQiOiJodHRwOi8vbG9jYWxob3N0In0', 'ünïcødé ✓ 🔑', 'x'.repeat(1000)]

test('addresses, personal signatures and their recovery equal viem\'s for random keys and messages', async () => {
  for (let i = 0; i < 12; i++) {
    const key = i % 2 === 0 ? generatePrivateKey() : randomPrivateKey()
    const account = privateKeyToAccount(key)
    assert.equal(addressOfPrivateKey(key), account.address)
    for (const message of MESSAGES) {
      const signature = signPersonalMessage(key, message)
      assert.equal(signature, await account.signMessage({ message }), 'RFC 6979 makes the signature deterministic')
      assert.equal(recoverPersonalSigner(message, hexToBytes(signature)), await recoverMessageAddress({ message, signature }))
      assert.equal(recoverPersonalSigner(message, hexToBytes(signature)), account.address)
      assert.equal(bytesToHex(personalMessageHash(message)), hashMessage(message))
    }
  }
})

test('a recovery byte of 0/1 recovers like 27/28; a bad one, a short signature or one of another message do not give the signer', () => {
  const key = randomPrivateKey()
  const signature = hexToBytes(signPersonalMessage(key, 'm'))
  const zeroBased = new Uint8Array(signature)
  zeroBased[64] = signature[64]! - 27
  assert.equal(recoverPersonalSigner('m', zeroBased), addressOfPrivateKey(key))
  const bad = new Uint8Array(signature)
  bad[64] = 29
  assert.throws(() => recoverPersonalSigner('m', bad), /recovery byte/)
  assert.throws(() => recoverPersonalSigner('m', signature.subarray(0, 64)), /65 bytes/)
  assert.notEqual(recoverPersonalSigner('other', signature), addressOfPrivateKey(key))
})

test('checksummed addresses equal viem\'s getAddress; malformed addresses, keys and hex are refused', () => {
  for (let i = 0; i < 50; i++) {
    const raw = `0x${randomBytes(20).toString('hex')}`
    assert.equal(checksumAddress(raw), getAddress(raw))
    assert.equal(checksumAddress(raw.toUpperCase().replace('0X', '0x')), getAddress(raw))
    assert.equal(isAddress(raw), true)
  }
  for (const bad of ['', '0x', '0x123', `0x${'g'.repeat(40)}`, `${'a'.repeat(40)}`, `0x${'a'.repeat(41)}`]) {
    assert.equal(isAddress(bad), false, bad)
    assert.throws(() => checksumAddress(bad), /not an address/)
  }
  assert.throws(() => addressOfPrivateKey(`0x${'0'.repeat(64)}`), 'zero is outside the curve order')
  assert.throws(() => addressOfPrivateKey(`0x${'f'.repeat(64)}`), 'above the curve order')
  assert.equal(isHexBytes('0x'), true)
  assert.equal(isHexBytes('0xabc'), false, 'a half byte')
  assert.throws(() => hexToBytes('0xzz'), /hex/)
  assert.throws(() => hexToBytes('abcd'), /hex/, '0x is required')
  assert.deepEqual([...hexToBytes('0x00ff10')], [0, 255, 16])
})
