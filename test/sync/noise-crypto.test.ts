// Noise's ChaCha20-Poly1305 through libsodium (src/sync/noise-crypto.ts): the same bytes
// as Noise's own implementations, messages split over several socket reads opened in place or
// from their pieces, a modified message refused, and two nodes with either crypto talking.
import { test } from 'node:test'
import assert from 'node:assert/strict'
import { defaultCrypto } from '@chainsafe/libp2p-noise/crypto'
import { randomBytes } from 'node:crypto'
import { join } from 'node:path'
import { pureJsCrypto } from '@chainsafe/libp2p-noise'
import { multiaddr } from '@multiformats/multiaddr'
import * as lp from 'it-length-prefixed'
import { Uint8ArrayList } from 'uint8arraylist'
import { silentLogger } from '../../src/log.js'
import { createSyncNode, type NoiseCrypto, type SyncNode } from '../../src/sync/node.js'
import { sodiumNoiseCrypto } from '../../src/sync/noise-crypto.js'
import { tempDir } from '../support/tmp.js'

const sodium = sodiumNoiseCrypto()
const skip = sodium === null ? 'sodium-native does not load here' : false
const key = new Uint8Array(32).fill(9)
const nonce = Uint8Array.from([0, 0, 0, 0, 7, 0, 0, 0, 0, 0, 0, 0])
const ad = new Uint8Array(0)
const SIZES = [0, 1, 1199, 1200, 4096, 65_519]

/** `bytes` as a list of pieces cut at `cuts`. */
function pieces (bytes: Uint8Array, cuts: number[]): Uint8ArrayList {
  const list = new Uint8ArrayList()
  let at = 0
  for (const cut of [...cuts.filter((c) => c > 0 && c < bytes.byteLength), bytes.byteLength]) {
    list.append(bytes.slice(at, cut))
    at = cut
  }
  return list
}

test('sealing gives the bytes of Noise\'s own ChaCha20-Poly1305, whole or in pieces, and each opens the other', { skip }, () => {
  for (const size of SIZES) {
    const plaintext = randomBytes(size)
    const reference = pureJsCrypto.chaCha20Poly1305Encrypt(plaintext, nonce, ad, key)
    const sealed = sodium!.chaCha20Poly1305Encrypt(plaintext, nonce, ad, key)
    assert.deepEqual(Buffer.from(sealed.subarray()), Buffer.from(reference.subarray()), `whole, ${size} bytes`)
    const fromPieces = sodium!.chaCha20Poly1305Encrypt(pieces(plaintext, [12, size >> 1]), nonce, ad, key)
    assert.deepEqual(Buffer.from(fromPieces.subarray()), Buffer.from(reference.subarray()), `in pieces, ${size} bytes`)
    assert.deepEqual(Buffer.from(sodium!.chaCha20Poly1305Decrypt(reference, nonce, ad, key).subarray()), plaintext)
    assert.deepEqual(Buffer.from(pureJsCrypto.chaCha20Poly1305Decrypt(sealed.subarray(), nonce, ad, key).subarray()), plaintext)
  }
})

test('a message over several reads opens in place in Noise\'s joined copy, or from its pieces when that copy is not its bytes', { skip }, () => {
  for (const size of SIZES.filter((s) => s > 2)) {
    const plaintext = randomBytes(size)
    const sealed = Buffer.from(sodium!.chaCha20Poly1305Encrypt(plaintext, nonce, ad, key).subarray())
    // the tag split too: its last piece is shorter than the tag
    const list = pieces(sealed, [size >> 1, sealed.byteLength - 5])
    // what Noise does: dst is the message's bytes (without the tag) joined
    const dst = list.subarray(0, size)
    const opened = sodium!.chaCha20Poly1305Decrypt(list, nonce, ad, key, dst)
    assert.deepEqual(Buffer.from(opened.subarray()), plaintext)
    assert.equal((opened as Uint8Array).buffer, dst.buffer, 'opened in dst')
    const other = sodium!.chaCha20Poly1305Decrypt(pieces(sealed, [3, size]), nonce, ad, key, new Uint8Array(size))
    assert.deepEqual(Buffer.from(other.subarray()), plaintext, 'a dst of zeros is filled from the pieces')
    assert.deepEqual(Buffer.from(sodium!.chaCha20Poly1305Decrypt(pieces(sealed, [1]), nonce, ad, key).subarray()), plaintext, 'no dst')
  }
})

test('a modified message, a wrong nonce or a short one is refused', { skip }, () => {
  const sealed = Buffer.from(sodium!.chaCha20Poly1305Encrypt(randomBytes(3000), nonce, ad, key).subarray())
  for (const at of [0, 1500, sealed.byteLength - 1]) {
    const bad = Buffer.from(sealed)
    bad[at]! ^= 1
    assert.throws(() => sodium!.chaCha20Poly1305Decrypt(bad, nonce, ad, key), /Invalid chacha20poly1305/)
    assert.throws(() => sodium!.chaCha20Poly1305Decrypt(pieces(bad, [700]), nonce, ad, key, bad.subarray(0, 2984)), /Invalid chacha20poly1305/)
  }
  assert.throws(() => sodium!.chaCha20Poly1305Decrypt(sealed, new Uint8Array(12), ad, key), /Invalid chacha20poly1305/)
  assert.throws(() => sodium!.chaCha20Poly1305Decrypt(sealed.subarray(0, 15), nonce, ad, key), /Invalid chacha20poly1305/)
})

test('the handshake\'s X25519 and SHA-256 are Noise\'s own', { skip }, () => {
  assert.equal(sodium!.generateX25519KeyPair, defaultCrypto.generateX25519KeyPair)
  assert.equal(sodium!.generateX25519SharedKey, defaultCrypto.generateX25519SharedKey)
  assert.equal(sodium!.hashSHA256, defaultCrypto.hashSHA256)
})

test('nodes with either Noise crypto talk to each other both ways', { skip }, async (t) => {
  const dir = await tempDir(t)
  const networkKey = new Uint8Array(32).fill(5)
  const node = async (name: string, noiseCrypto: NoiseCrypto): Promise<SyncNode> => {
    const n = await createSyncNode({ networkKey, peerKeyFile: join(dir, `${name}.key`), listen: ['/ip4/127.0.0.1/tcp/0'], logger: silentLogger(), noiseCrypto })
    await n.start()
    t.after(async () => { await n.stop() })
    return n
  }
  const a = await node('a', 'sodium')
  const b = await node('b', 'node')
  for (const n of [a, b]) {
    await n.libp2p.handle('/hearth-test/echo/1.0.0', async (stream) => {
      for await (const frame of lp.decode(stream, { maxDataLength: 8 * 1024 * 1024 })) stream.send(lp.encode.single(frame))
      await stream.close()
    })
  }
  for (const [from, to] of [[a, b], [b, a]] as const) {
    const stream = await from.libp2p.dialProtocol(multiaddr(to.multiaddrs()[0]!), '/hearth-test/echo/1.0.0')
    const answers = lp.decode(stream, { maxDataLength: 8 * 1024 * 1024 })[Symbol.asyncIterator]()
    for (const size of [1, 3 * 1024 * 1024 + 17, 70_000, 5]) {
      const bytes = randomBytes(size)
      stream.send(lp.encode.single(bytes))
      const echoed = await answers.next()
      assert.deepEqual(Buffer.from((echoed.value as { subarray: () => Uint8Array }).subarray()), bytes)
    }
    await stream.close()
  }
})
