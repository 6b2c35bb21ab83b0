// Hearth's OpenPGP writer against the real readers: OpenPGP.js with its default config (the oracle:
// what docs/protocol.md §2.4 promises a reader needs) and GnuPG.
import assert from 'node:assert/strict'
import { spawnSync } from 'node:child_process'
import { randomBytes } from 'node:crypto'
import { mkdir, writeFile } from 'node:fs/promises'
import { join } from 'node:path'
import { test } from 'node:test'
import * as openpgp from 'openpgp'
import { isHearthError } from '../../src/errors.js'
import { DEFAULT_PART_BYTES, definiteLength, writeMessage, writeMessagePieces } from '../../src/protocol/openpgp-writer.js'
import { tempDir } from '../support/tmp.js'

const PASSWORD = randomBytes(32).toString('hex')
const PIECE = 262_144

async function plainDecrypt (ciphertext: Uint8Array, password = PASSWORD): Promise<Uint8Array> {
  const { data } = await openpgp.decrypt({ message: await openpgp.readMessage({ binaryMessage: ciphertext }), passwords: [password], format: 'binary' })
  return data
}

function streamed (plaintext: Uint8Array, partBytes?: number, pieceBytes = PIECE): { pieces: Uint8Array[], joined: Uint8Array } {
  const pieces = [...writeMessagePieces(plaintext, PASSWORD, { pieceBytes, ...(partBytes !== undefined ? { partBytes } : {}) })]
  return { pieces, joined: new Uint8Array(Buffer.concat(pieces)) }
}

const same = (a: Uint8Array, b: Uint8Array): boolean => Buffer.compare(Buffer.from(a.buffer, a.byteOffset, a.byteLength), Buffer.from(b.buffer, b.byteOffset, b.byteLength)) === 0

// 0 and 1 byte; around the AES block (15–17); the literal body (size + 6) at the one/two-octet
// (191/192) and two/five-octet (8383/8384) length boundaries; 255/256, 1 KB,
// 8191–8193; the whole writer's bound between one buffer and pieces hashed in place (64 KiB); 256 KiB
const SIZES = [0, 1, 15, 16, 17, 185, 186, 187, 255, 256, 1024, 8191, 8192, 8193, 8377, 8378, 8379, 65_535, 65_536, 65_537, 262_144]

const lengthOctets = (n: number): number => n < 192 ? 1 : n < 8384 ? 2 : 5
/** SKESK (48) + SEIPD header and body: version, 18-byte prefix, literal packet, 22-byte MDC packet. */
function wholeSize (n: number): number {
  const literal = 1 + lengthOctets(n + 6) + n + 6
  const seipd = 1 + 18 + literal + 22
  return 48 + 1 + lengthOctets(seipd) + seipd
}

test('whole messages decrypt with plain openpgp.decrypt at every length-encoding boundary', async () => {
  for (const n of SIZES) {
    const plaintext = new Uint8Array(randomBytes(n))
    const message = writeMessage(plaintext, PASSWORD)
    assert.equal(message.byteLength, wholeSize(n), `size of the ${n}-byte message`)
    assert.ok(same(await plainDecrypt(message), plaintext), `${n} bytes`)
  }
})

test('a whole message of a view into a larger buffer holds the view only and leaves the buffer as it was', async () => {
  for (const n of [1000, 100_000]) {
    const backing = new Uint8Array(randomBytes(n + 64))
    const before = new Uint8Array(backing)
    const view = backing.subarray(21, 21 + n)
    const message = writeMessage(view, PASSWORD)
    assert.equal(message.byteLength, wholeSize(n))
    assert.ok(same(await plainDecrypt(message), view), `${n} bytes`)
    assert.ok(same(backing, before), 'the plaintext\'s buffer is unchanged')
  }
})

test('streamed messages decrypt across partial-length part boundaries (parts of 512 and 8192, every size around them)', async () => {
  // the literal body is size + 6 bytes and the SEIPD body 41 more plus the literal header, so a
  // sweep meets every case: shorter than one part (definite lengths only), an exact multiple (a
  // zero-length last part), one byte over, in either packet
  const sweeps: Array<[number, number[]]> = [
    [512, Array.from({ length: 1700 }, (_, i) => i)],
    [8192, [...Array.from({ length: 80 }, (_, i) => 8100 + i), ...Array.from({ length: 80 }, (_, i) => 16_300 + i)]]
  ]
  for (const [partBytes, sizes] of sweeps) {
    for (const n of sizes) {
      const plaintext = new Uint8Array(randomBytes(n))
      const { joined } = streamed(plaintext, partBytes, 1000)
      assert.ok(same(await plainDecrypt(joined), plaintext), `${n} bytes in parts of ${partBytes}`)
    }
  }
})

test('a 10 MB message streamed in 256 KiB pieces (default parts, shared-memory input) decrypts with plain openpgp.decrypt', async () => {
  const plaintext = new Uint8Array(new SharedArrayBuffer(10 * 1024 * 1024))
  plaintext.set(randomBytes(plaintext.byteLength))
  const { pieces, joined } = streamed(plaintext)
  for (const p of pieces.slice(0, -1)) assert.equal(p.byteLength, PIECE)
  assert.ok(pieces.at(-1)!.byteLength > 0 && pieces.at(-1)!.byteLength <= PIECE)
  for (const p of pieces) assert.ok(p.buffer instanceof ArrayBuffer && p.byteOffset === 0 && p.byteLength === p.buffer.byteLength, 'each piece its own buffer (moved from the worker, not copied)')
  // one partial-length octet per part of each of the two packets, no compression
  const parts = Math.floor((plaintext.byteLength + 6) / DEFAULT_PART_BYTES)
  assert.ok(joined.byteLength > plaintext.byteLength + 2 * parts && joined.byteLength < plaintext.byteLength + 2 * parts + 120)
  assert.ok(same(await plainDecrypt(joined), plaintext))
  assert.ok(same(await plainDecrypt(writeMessage(plaintext, PASSWORD)), plaintext), 'and whole')
})

test('packets: SKESK v4 (AES-256, iterated+salted SHA-256 S2K, count byte 0, an encrypted random session key), SEIPD v1, binary literal data, no compression', async () => {
  const plaintext = new Uint8Array(randomBytes(3000))
  const date = new Date('2026-01-21T10:00:00Z')
  for (const [i, bytes] of [writeMessage(plaintext, PASSWORD, { date }), streamed(plaintext, 512).joined].entries()) {
    // the SKESK as written: new-format tag 3, 46-byte body, version 4, AES-256 (9), S2K type 3,
    // SHA-256 (8), an 8-byte salt, count byte 0, then 33 bytes: algorithm octet + 32-byte key, encrypted
    assert.deepEqual([...bytes.subarray(0, 6)], [0xc3, 46, 4, 9, 3, 8])
    assert.equal(bytes[14], 0)
    assert.equal(bytes[48], 0xd2, 'then the SEIPD, tag 18, new format')
    const message = await openpgp.readMessage({ binaryMessage: bytes })
    const packets = [...message.packets]
    assert.equal(packets.length, 2)
    const skesk = packets[0] as openpgp.SymEncryptedSessionKeyPacket & { version: number, sessionKeyEncryptionAlgorithm: string, encrypted: Uint8Array, s2k: { type: string, algorithm: number, c: number, salt: Uint8Array, getCount(): number } }
    assert.ok(skesk instanceof openpgp.SymEncryptedSessionKeyPacket)
    assert.equal(skesk.version, 4)
    assert.equal(skesk.s2k.type, 'iterated')
    assert.equal(skesk.s2k.algorithm, openpgp.enums.hash.sha256)
    assert.equal(skesk.s2k.c, 0)
    assert.equal(skesk.s2k.getCount(), 1024)
    assert.equal(skesk.s2k.salt.byteLength, 8)
    assert.equal(skesk.encrypted.byteLength, 33)
    const seipd = packets[1] as openpgp.SymEncryptedIntegrityProtectedDataPacket & { version: number }
    assert.ok(seipd instanceof openpgp.SymEncryptedIntegrityProtectedDataPacket)
    assert.equal(seipd.version, 1)
    // the session key is random and AES-256 (what OpenPGP.js reads out of the SKESK)
    const [key] = await openpgp.decryptSessionKeys({ message, passwords: [PASSWORD] })
    assert.equal(key!.algorithm, 'aes256')
    assert.equal(key!.data.byteLength, 32)
    const decrypted = await message.decrypt(undefined, [PASSWORD])
    const inner = [...decrypted.packets]
    assert.equal(inner.length, 1, 'one literal data packet, no compressed data packet')
    const literal = inner[0] as unknown as { format: number, date: Date, filename: string }
    assert.ok(inner[0] instanceof openpgp.LiteralDataPacket)
    assert.equal(literal.format, openpgp.enums.literal.binary)
    assert.equal(literal.filename, '')
    assert.ok(same(decrypted.getLiteralData() as Uint8Array, plaintext))
    if (i === 0) assert.equal(literal.date.getTime(), date.getTime(), 'the date given')
    else assert.ok(Math.abs(literal.date.getTime() - Date.now()) < 60_000, 'now by default')
  }
  // a streamed message longer than a part frames both packets with partial lengths: SEIPD's first
  // length octet is a partial one (224 + log2 512)
  assert.equal(streamed(plaintext, 512).joined[49], 224 + 9)
  assert.deepEqual([...definiteLength(191)], [191])
  assert.deepEqual([...definiteLength(192)], [192, 0])
  assert.deepEqual([...definiteLength(8383)], [223, 255])
  assert.deepEqual([...definiteLength(8384)], [255, 0, 0, 32, 192])
})

test('every message has a fresh salt, session key and random prefix', async () => {
  const plaintext = new Uint8Array(randomBytes(100))
  const a = writeMessage(plaintext, PASSWORD)
  const b = writeMessage(plaintext, PASSWORD)
  assert.notDeepEqual(a.subarray(6, 14), b.subarray(6, 14), 'salt')
  assert.notDeepEqual(a.subarray(15, 48), b.subarray(15, 48), 'encrypted session key')
  const keys = await Promise.all([a, b].map(async (m) => (await openpgp.decryptSessionKeys({ message: await openpgp.readMessage({ binaryMessage: m }), passwords: [PASSWORD] }))[0]!.data))
  assert.notDeepEqual(keys[0], keys[1])
})

test('a tampered message fails the MDC check in openpgp.decrypt, and a wrong password fails too', async () => {
  const plaintext = new Uint8Array(randomBytes(10_000))
  for (const message of [writeMessage(plaintext, PASSWORD), streamed(plaintext, 512).joined]) {
    for (const at of [200, 5000, message.byteLength - 30, message.byteLength - 1]) {
      const tampered = new Uint8Array(message)
      tampered[at]! ^= 0x04
      await assert.rejects(plainDecrypt(tampered), /Modification detected|Error decrypting message/, `byte ${at}`)
    }
  }
  await assert.rejects(plainDecrypt(writeMessage(plaintext, PASSWORD), randomBytes(32).toString('hex')))
})

test('part sizes that are not a power of two from 512 to 2^30 are refused', () => {
  for (const partBytes of [0, 256, 511, 1000, 2 ** 31]) {
    assert.throws(() => streamed(new Uint8Array(10), partBytes), (e: unknown) => isHearthError(e, 'INVALID_ARGUMENT'), String(partBytes))
  }
})

const gpg = spawnSync('gpg', ['--version'], { encoding: 'utf8' })
test('GnuPG reads a small and a large whole message and a large streamed one, and lists the packets we mean to write', { skip: gpg.status === 0 ? false : 'gpg is not installed' }, async (t) => {
  const dir = await tempDir(t)
  const home = join(dir, 'gnupg')
  await mkdir(home, { mode: 0o700 })
  const small = new Uint8Array(randomBytes(1024))
  const large = new Uint8Array(randomBytes(3 * 1024 * 1024 + 99))
  await writeFile(join(dir, 'small.pgp'), writeMessage(small, PASSWORD))
  const wholeLarge = new Uint8Array(randomBytes(300_000))
  await writeFile(join(dir, 'whole-large.pgp'), writeMessage(wholeLarge, PASSWORD))
  await writeFile(join(dir, 'large.pgp'), streamed(large).joined)
  await writeFile(join(dir, 'parts.pgp'), streamed(small, 512).joined)
  const gpgRun = (...args: string[]): ReturnType<typeof spawnSync> => spawnSync('/usr/bin/gpg', ['--homedir', home, '--batch', '--quiet', '--no-tty', '--pinentry-mode', 'loopback', '--passphrase', PASSWORD, ...args], { maxBuffer: 16 * 1024 * 1024 })
  let results
  try {
    results = {
      small: gpgRun('--decrypt', join(dir, 'small.pgp')),
      large: gpgRun('--decrypt', join(dir, 'large.pgp')),
      parts: gpgRun('--decrypt', join(dir, 'parts.pgp')),
      wholeLarge: gpgRun('--decrypt', join(dir, 'whole-large.pgp')),
      listed: gpgRun('--list-packets', join(dir, 'small.pgp'))
    }
  } finally {
    spawnSync('gpgconf', ['--homedir', home, '--kill', 'all']) // gpg may have started an agent for this home
  }
  for (const [name, r] of Object.entries(results)) assert.equal(r.status, 0, `${name}: ${r.stderr?.toString()}`)
  assert.ok(same(results.small.stdout as Buffer, small))
  assert.ok(same(results.large.stdout as Buffer, large))
  assert.ok(same(results.parts.stdout as Buffer, small))
  assert.ok(same(results.wholeLarge.stdout as Buffer, wholeLarge))
  const listed = (results.listed.stdout as Buffer).toString()
  assert.match(listed, /symkey enc packet: version 4, cipher 9, aead 0, ?s2k 3, hash 8, seskey 256 bits/)
  assert.match(listed, /count 1024 \(0\)/)
  assert.match(listed, /encrypted data packet:[\s\S]*mdc_method: 2/)
  assert.match(listed, /literal data packet:[\s\S]*mode b \(62\), created \d+, name=""/)
})
