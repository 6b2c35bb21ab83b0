// Hearth's own OpenPGP reader against the messages real writers make: ours (every length-encoding
// boundary, whole and streamed), OpenPGP.js with several configurations and GnuPG's --symmetric.
// Each is read by our reader where it is of our form and by OpenPGP.js otherwise (through
// decryptEnvelopeBytes), and always to the same plaintext; what is not right fails with
// DECRYPTION_FAILED and never yields plaintext.
import assert from 'node:assert/strict'
import { spawnSync } from 'node:child_process'
import { randomBytes } from 'node:crypto'
import { mkdir, readFile, writeFile } from 'node:fs/promises'
import { join } from 'node:path'
import { test } from 'node:test'
import * as openpgp from 'openpgp'
import { isHearthError } from '../../src/errors.js'
import { decryptEnvelopeBytes, decryptWithOpenpgp } from '../../src/protocol/encryption.js'
import { readMessage, type ReadResult } from '../../src/protocol/openpgp-reader.js'
import { definiteLength, writeMessage, writeMessagePieces } from '../../src/protocol/openpgp-writer.js'
import { tempDir } from '../support/tmp.js'

const PASSWORD = randomBytes(32).toString('hex')
const OTHER = randomBytes(32).toString('hex')

const same = (a: Uint8Array, b: Uint8Array): boolean => Buffer.compare(Buffer.from(a.buffer, a.byteOffset, a.byteLength), Buffer.from(b.buffer, b.byteOffset, b.byteLength)) === 0
const isFailure = (e: unknown): boolean => isHearthError(e, 'DECRYPTION_FAILED') && e.status === 422

function plaintextOf (r: ReadResult, what: string): Uint8Array {
  assert.ok('plaintext' in r, `${what}: read by our reader, not handed over (${'other' in r ? r.other : ''})`)
  return r.plaintext
}

function streamed (plaintext: Uint8Array, partBytes?: number): Uint8Array {
  return new Uint8Array(Buffer.concat([...writeMessagePieces(plaintext, PASSWORD, { pieceBytes: 262_144, ...(partBytes !== undefined ? { partBytes } : {}) })]))
}

// the writer's boundaries: around the AES block, the literal body (size + 6) at the one/two-octet
// (191/192) and two/five-octet (8383/8384) length boundaries, 1 KB, 256 KiB
const SIZES = [0, 1, 15, 16, 17, 185, 186, 187, 255, 256, 1024, 8191, 8192, 8193, 8377, 8378, 8379, 262_144]

test('our writer\'s whole messages are read by our reader at every length-encoding boundary', () => {
  for (const n of SIZES) {
    const plaintext = new Uint8Array(randomBytes(n))
    const back = plaintextOf(readMessage(writeMessage(plaintext, PASSWORD), PASSWORD), `${n} bytes`)
    assert.ok(same(back, plaintext), `${n} bytes`)
    assert.ok(Object.getPrototypeOf(back) === Uint8Array.prototype, 'a plain Uint8Array, as OpenPGP.js returns')
  }
})

test('our writer\'s streamed messages (partial body lengths) are read across part boundaries, and large ones into a buffer of their own', () => {
  for (const [partBytes, sizes] of [[512, Array.from({ length: 1200 }, (_, i) => i)], [8192, [8100, 8185, 8186, 8187, 16_300, 16_371, 16_372]]] as const) {
    for (const n of sizes) {
      const plaintext = new Uint8Array(randomBytes(n))
      assert.ok(same(plaintextOf(readMessage(streamed(plaintext, partBytes), PASSWORD), `${n}`), plaintext), `${n} bytes in parts of ${partBytes}`)
    }
  }
  const large = new Uint8Array(randomBytes(3 * 1024 * 1024 + 99))
  const back = plaintextOf(readMessage(streamed(large), PASSWORD), 'large')
  assert.ok(same(back, large))
  // a decryption worker moves it back to the main thread instead of copying it
  assert.ok(back.byteOffset === 0 && back.byteLength === back.buffer.byteLength)
})

test('OpenPGP.js messages: its default form is read by our reader, every other one by OpenPGP.js, all to the same plaintext', async () => {
  const plaintext = new Uint8Array(randomBytes(3000))
  const { enums } = openpgp
  const configs: Array<{ name: string, ours: boolean, config?: openpgp.PartialConfig, text?: boolean, stream?: boolean }> = [
    { name: 'default (reference server)', ours: true },
    { name: 'AES-128', ours: true, config: { preferredSymmetricAlgorithm: enums.symmetric.aes128 } },
    { name: 'AES-192, SHA-512 S2K, count byte 96', ours: true, config: { preferredSymmetricAlgorithm: enums.symmetric.aes192, preferredHashAlgorithm: enums.hash.sha512, s2kIterationCountByte: 96 } },
    { name: 'streamed input (partial lengths)', ours: true, stream: true },
    { name: 'zlib compression', ours: false, config: { preferredCompressionAlgorithm: enums.compression.zlib } },
    { name: 'zip compression', ours: false, config: { preferredCompressionAlgorithm: enums.compression.zip } },
    { name: 'AEAD (SEIPD v2)', ours: false, config: { aeadProtect: true } },
    { name: 'Argon2 S2K', ours: false, config: { s2kType: enums.s2k.argon2 } },
    { name: 'text literal data', ours: false, text: true }
  ]
  for (const c of configs) {
    const input = c.text === true ? Buffer.from(plaintext).toString('base64') : plaintext
    const expected = c.text === true ? new Uint8Array(Buffer.from(input as string)) : plaintext
    const body = c.stream === true
      ? new ReadableStream<Uint8Array>({ start (ctl) { for (let at = 0; at < plaintext.byteLength; at += 700) ctl.enqueue(plaintext.slice(at, at + 700)); ctl.close() } })
      : input
    const message = typeof body === 'string' ? await openpgp.createMessage({ text: body }) : await openpgp.createMessage({ binary: body as Uint8Array })
    const encrypted = await openpgp.encrypt({ message, passwords: [PASSWORD], format: 'binary', ...(c.config !== undefined ? { config: c.config } : {}) })
    const bytes = encrypted instanceof Uint8Array ? encrypted : new Uint8Array(await new Response(encrypted as ReadableStream<Uint8Array>).arrayBuffer())
    if (c.stream === true) assert.ok(bytes[2 + bytes[1]!] === 0xd2 && bytes[3 + bytes[1]!]! >= 224, 'the SEIPD has partial lengths')
    const read = readMessage(bytes, PASSWORD)
    if (c.ours) assert.ok(same(plaintextOf(read, c.name), expected), c.name)
    else assert.ok('other' in read, `${c.name}: handed to OpenPGP.js`)
    assert.ok(same(await decryptEnvelopeBytes(bytes, PASSWORD), expected), `${c.name}: decryptEnvelopeBytes`)
    assert.ok(same(await decryptWithOpenpgp(bytes, PASSWORD), expected), `${c.name}: OpenPGP.js agrees`)
    if (c.config?.s2kType !== enums.s2k.argon2) {
      // a wrong password: our reader refuses what is ours, OpenPGP.js the rest; the same error
      await assert.rejects(decryptEnvelopeBytes(bytes, OTHER), isFailure, `${c.name}: wrong password`)
    }
  }
})

const gpg = spawnSync('gpg', ['--version'], { encoding: 'utf8' })
test('GnuPG --symmetric messages (old-format SKESK, the S2K key as session key, SHA-1 S2K, partial lengths) are read by our reader; compressed ones by OpenPGP.js', { skip: gpg.status === 0 ? false : 'gpg is not installed' }, async (t) => {
  const dir = await tempDir(t)
  const home = join(dir, 'gnupg')
  await mkdir(home, { mode: 0o700 })
  const small = new Uint8Array(randomBytes(1000))
  const large = new Uint8Array(randomBytes(2 * 1024 * 1024 + 5))
  await writeFile(join(dir, 'small'), small)
  const cases: Array<{ name: string, args: string[], input: Uint8Array, ours: boolean, listed: RegExp }> = [
    { name: 'gpg defaults (ZIP compression)', args: [], input: small, ours: false, listed: /compressed packet/ },
    { name: 'no compression (AES-256, SHA-1 S2K, count 65011712)', args: ['--compress-algo', 'none'], input: small, ours: true, listed: /s2k 3, hash 2[\s\S]*count 65011712[\s\S]*literal data packet/ },
    { name: 'AES-128, salted SHA-512 S2K', args: ['--compress-algo', 'none', '--cipher-algo', 'AES128', '--s2k-mode', '1', '--s2k-digest-algo', 'SHA512'], input: small, ours: true, listed: /cipher 7, aead 0, ?s2k 1, hash 10/ },
    { name: 'simple S2K', args: ['--compress-algo', 'none', '--s2k-mode', '0'], input: small, ours: true, listed: /s2k 0, hash 2/ },
    { name: 'from a pipe (partial body lengths)', args: ['--compress-algo', 'none'], input: large, ours: true, listed: /tag=18 hlen=2 plen=0 partial[\s\S]*tag=11 hlen=2 plen=0 partial/ },
    { name: 'text mode', args: ['--compress-algo', 'none', '--textmode'], input: small, ours: false, listed: /mode t/ }
  ]
  const run = (args: string[], input?: Uint8Array): ReturnType<typeof spawnSync> => spawnSync('/usr/bin/gpg', ['--homedir', home, '--batch', '--quiet', '--no-tty', '--pinentry-mode', 'loopback', '--passphrase', PASSWORD, ...args], { maxBuffer: 16 * 1024 * 1024, ...(input !== undefined ? { input } : {}) })
  const written: Array<{ c: typeof cases[number], bytes: Uint8Array, listed: string }> = []
  try {
    for (const [i, c] of cases.entries()) {
      const out = join(dir, `${i}.gpg`)
      // a file argument is encrypted with definite lengths, a pipe with partial ones
      const r = c.input === small ? run(['--symmetric', ...c.args, '-o', out, join(dir, 'small')]) : run(['--symmetric', ...c.args, '-o', out], c.input)
      assert.equal(r.status, 0, `${c.name}: ${r.stderr?.toString()}`)
      written.push({ c, bytes: new Uint8Array(await readFile(out)), listed: run(['--list-packets', out]).stdout!.toString() })
    }
  } finally {
    spawnSync('gpgconf', ['--homedir', home, '--kill', 'all']) // gpg may have started an agent for this home
  }
  for (const { c, bytes, listed } of written) {
    assert.match(listed, c.listed, `${c.name}: what gpg wrote`)
    const read = readMessage(bytes, PASSWORD)
    if (c.ours) assert.ok(same(plaintextOf(read, c.name), c.input), c.name)
    else assert.ok('other' in read, `${c.name}: handed to OpenPGP.js`)
    const back = await decryptEnvelopeBytes(bytes, PASSWORD)
    if (listed.includes('mode t')) assert.ok(back.byteLength > 0)
    else assert.ok(same(back, c.input), `${c.name}: decryptEnvelopeBytes`)
  }
})

test('a wrong password, a modified byte anywhere or a truncation fails with DECRYPTION_FAILED and never yields plaintext', async () => {
  const plaintext = new Uint8Array(randomBytes(700))
  for (const message of [writeMessage(plaintext, PASSWORD), streamed(plaintext, 512)]) {
    assert.throws(() => readMessage(message, OTHER), (e: unknown) => isFailure(e) && /wrong key|MDC/.test(String((e as { details?: { reason?: string } }).details?.reason)))
    await assert.rejects(decryptEnvelopeBytes(message, OTHER), isFailure)
    // every byte, one bit each (a header, the S2K, the session key, the body)
    for (let at = 0; at < message.byteLength; at++) {
      const tampered = new Uint8Array(message)
      tampered[at]! ^= 1 << (at % 8)
      await assert.rejects(decryptEnvelopeBytes(tampered, PASSWORD), isFailure, `byte ${at}`)
    }
    for (let length = 0; length < message.byteLength; length++) {
      await assert.rejects(decryptEnvelopeBytes(message.subarray(0, length), PASSWORD), isFailure, `cut at ${length}`)
    }
  }
  // our reader decides these itself: the MDC, and a body cut short of its length header
  const message = writeMessage(plaintext, PASSWORD)
  const flipped = new Uint8Array(message)
  flipped[message.byteLength - 3]! ^= 0x10
  assert.throws(() => readMessage(flipped, PASSWORD), (e: unknown) => isFailure(e) && /MDC/.test(String((e as { details?: { reason?: string } }).details?.reason)))
  assert.throws(() => readMessage(message.subarray(0, message.byteLength - 1), PASSWORD), (e: unknown) => isFailure(e) && /truncated/.test(String((e as { details?: { reason?: string } }).details?.reason)))
})

/** A message with our SKESK and a SEIPD packet whose header and body are given. */
function withSeipd (header: number[], body: Uint8Array = new Uint8Array(0)): Uint8Array {
  const skesk = writeMessage(new Uint8Array(1), PASSWORD).subarray(0, 48)
  return new Uint8Array(Buffer.concat([skesk, Uint8Array.from(header), body]))
}

test('hostile length headers are refused before any key is derived, in memory bounded by the input', () => {
  const reason = (f: () => unknown): string => {
    try { f() } catch (e) { assert.ok(isFailure(e), String(e)); return String((e as { details?: { reason?: string } }).details?.reason) }
    assert.fail('not refused')
  }
  // a five-octet length of 4 GiB, a partial part of 1 GiB, an old-format 4-octet length, all with a few bytes behind them
  assert.match(reason(() => readMessage(withSeipd([0xd2, 0xff, 0xff, 0xff, 0xff, 0xff], randomBytes(100)), PASSWORD)), /truncated/)
  assert.match(reason(() => readMessage(withSeipd([0xd2, 224 + 30], randomBytes(100)), PASSWORD)), /truncated/)
  assert.match(reason(() => readMessage(withSeipd([0x80 | (18 << 2) | 2, 0x7f, 0xff, 0xff, 0xff], randomBytes(100)), PASSWORD)), /truncated/)
  assert.match(reason(() => readMessage(withSeipd([0xd2]), PASSWORD)), /truncated packet header/)
  // the S2K is the costly step a hostile message could ask for (count byte 255: 62 MiB hashed): its
  // framing is checked first, so a message whose body is cut short costs no S2K
  const costly = new Uint8Array(writeMessage(new Uint8Array(100), PASSWORD))
  costly[14] = 255
  assert.match(reason(() => readMessage(costly.subarray(0, costly.byteLength - 1), PASSWORD)), /truncated/)
  // a body of two million one-byte partial parts: walked, never listed; gathered into one buffer
  const parts = 2_000_000
  const body = new Uint8Array(parts * 2 + 1)
  for (let i = 0; i < parts; i++) { body[2 * i] = 224; body[2 * i + 1] = i === 0 ? 1 : 0x42 }
  body[parts * 2] = 0
  const before = process.memoryUsage().heapUsed
  assert.match(reason(() => readMessage(withSeipd([0xd2], body), PASSWORD)), /MDC/)
  assert.ok(process.memoryUsage().heapUsed - before < 64 * 1024 * 1024, 'no per-part objects kept')
  // too short to hold the prefix and the MDC
  assert.match(reason(() => readMessage(withSeipd([0xd2, ...definiteLength(30)], Uint8Array.of(1, ...randomBytes(29))), PASSWORD)), /too short/)
})

test('what is not of our form is handed over, not refused: another first packet, a second SKESK, packets after the SEIPD, SEIPD v2', () => {
  const message = writeMessage(new Uint8Array(randomBytes(50)), PASSWORD)
  const skesk = message.subarray(0, 48)
  const seipd = message.subarray(48)
  const other = (bytes: Uint8Array): string => { const r = readMessage(bytes, PASSWORD); assert.ok('other' in r); return r.other }
  assert.match(other(new Uint8Array(0)), /SKESK/)
  assert.match(other(Buffer.from('{"scope":"x"}')), /SKESK/)
  assert.match(other(new Uint8Array(Buffer.concat([Uint8Array.of(0xca, 3, 0x50, 0x47, 0x50), message]))), /SKESK/, 'a marker packet first')
  assert.match(other(new Uint8Array(Buffer.concat([skesk, skesk, seipd]))), /SEIPD/)
  assert.match(other(new Uint8Array(Buffer.concat([message, Uint8Array.of(0xca, 3, 0x50, 0x47, 0x50)]))), /after the SEIPD/)
  const v2 = new Uint8Array(message)
  v2[50] = 2
  assert.match(other(v2), /SEIPD v1/)
})
