// The S2K the OpenPGP reader and writer share (src/protocol/openpgp-packets.ts) against RFC 4880
// §3.7.1 written out the plain way: the whole hashed input built at once, a context per hash
// output, the n-th preloaded with n zero octets. The writer's and reader's own tests check the
// messages against OpenPGP.js and GnuPG.
import { test } from 'node:test'
import assert from 'node:assert/strict'
import { createHash, randomBytes } from 'node:crypto'
import { deriveKey, hearthS2k, s2kCount, type S2k } from '../../src/protocol/openpgp-packets.js'

function reference (s2k: S2k, password: Uint8Array, keyBytes: number): Buffer {
  const unit = Buffer.concat([s2k.salt ?? new Uint8Array(0), password])
  const total = Math.max(s2k.count, unit.byteLength)
  const input = Buffer.alloc(total)
  for (let at = 0; at < total; at += unit.byteLength) unit.copy(input, at)
  const out: Buffer[] = []
  for (let n = 0; Buffer.concat(out).byteLength < keyBytes; n++) out.push(createHash(s2k.hash).update(Buffer.alloc(n)).update(input).digest())
  return Buffer.concat(out).subarray(0, keyBytes)
}

test('deriveKey is RFC 4880\'s S2K: simple, salted, iterated (counts cut mid-unit, below one unit, over 64 KiB), keys longer than the hash', () => {
  const password = Buffer.from(randomBytes(32).toString('hex'))
  const salt = randomBytes(8)
  const cases: Array<[S2k, number]> = [
    [{ hash: 'sha256', salt: null, count: 0 }, 32],
    [{ hash: 'sha1', salt, count: 0 }, 16],
    [hearthS2k(salt), 32],
    [{ hash: 'sha1', salt, count: s2kCount(0x60) }, 32], // 65,536 octets, a SHA-1 too short for AES-256
    [{ hash: 'sha224', salt, count: s2kCount(0xff) }, 24], // the largest count: 65,011,712 octets
    [{ hash: 'sha512', salt, count: 50 }, 32] // a count below one unit: the unit once whole
  ]
  for (const [s2k, keyBytes] of cases) {
    assert.deepEqual(deriveKey(s2k, password, keyBytes), reference(s2k, password, keyBytes), `${s2k.hash} count ${s2k.count}`)
  }
  assert.equal(s2kCount(0), 1024, 'Hearth\'s count byte 0: the least RFC 4880 can say')
  assert.equal(s2kCount(0xff), 65_011_712)
})
