import assert from 'node:assert/strict'
import { spawnSync } from 'node:child_process'
import { randomBytes } from 'node:crypto'
import { mkdir, writeFile } from 'node:fs/promises'
import { join } from 'node:path'
import { test } from 'node:test'
import * as openpgp from 'openpgp'
import { isHearthError } from '../../src/errors.js'
import { buildEnvelope, parseEnvelopeBytes, serializeEnvelope } from '../../src/protocol/envelope.js'
import { decryptEnvelopeBytes, encryptEnvelopeBytes, encryptEnvelopeChunks } from '../../src/protocol/encryption.js'
import { masterKeyFromSignature, scopeKeyHex, signMasterKey } from '../../src/protocol/keys.js'
import { tempDir } from '../support/tmp.js'

const PRIVATE_KEY = '0x0123456789abcdef0123456789abcdef0123456789abcdef0123456789abcdef'

async function fixture (): Promise<{ password: string, other: string, plaintext: Uint8Array }> {
  const { masterKey } = await masterKeyFromSignature(await signMasterKey(PRIVATE_KEY))
  const envelope = buildEnvelope({ definitionUrl: 'ipfs://bafkreitest', scope: 'instagram.profile', collectedAt: '2026-01-21T10:00:00Z', data: { username: 'alice', bio: 'ünïcødé ✓' } })
  return { password: scopeKeyHex(masterKey, 'instagram.profile'), other: scopeKeyHex(masterKey, 'instagram.posts'), plaintext: serializeEnvelope(envelope) }
}

// Only what docs/protocol.md §2.4 promises a reader needs: stock openpgp, default config, the hex password.
async function plainOpenpgpDecrypt (ciphertext: Uint8Array, password: string): Promise<Uint8Array> {
  const { data } = await openpgp.decrypt({ message: await openpgp.readMessage({ binaryMessage: ciphertext }), passwords: [password], format: 'binary' })
  return data
}

test('round trip of an envelope', async () => {
  const { password, plaintext } = await fixture()
  const ciphertext = await encryptEnvelopeBytes(plaintext, password)
  assert.ok(ciphertext instanceof Uint8Array)
  assert.equal(Buffer.from(ciphertext).includes(Buffer.from('alice')), false, 'no plaintext in the ciphertext')
  const back = await decryptEnvelopeBytes(ciphertext, password)
  assert.deepEqual(back, plaintext)
  assert.equal(parseEnvelopeBytes(back).data.username, 'alice')
  const again = await encryptEnvelopeBytes(plaintext, password)
  assert.notDeepEqual(again, ciphertext, 'fresh salt and session key every time')
})

test('a Hearth message decrypts with plain openpgp.decrypt and the default config', async () => {
  const { password, plaintext } = await fixture()
  for (const s2k of ['hearth', 'openpgp-default'] as const) {
    const ciphertext = await encryptEnvelopeBytes(plaintext, password, { s2k })
    assert.deepEqual(await plainOpenpgpDecrypt(ciphertext, password), plaintext)
  }
})

test('the message is SKESK v4 with iterated S2K count byte 0, SEIPD v1 with MDC, uncompressed', async () => {
  const { password, plaintext } = await fixture()
  const message = await openpgp.readMessage({ binaryMessage: await encryptEnvelopeBytes(plaintext, password) })
  const packets = [...message.packets]
  assert.equal(packets.length, 2)
  const skesk = packets[0] as openpgp.SymEncryptedSessionKeyPacket & { version: number, s2k: { type: string, c: number, getCount(): number } }
  assert.ok(skesk instanceof openpgp.SymEncryptedSessionKeyPacket)
  assert.equal(skesk.version, 4)
  assert.equal(skesk.s2k.type, 'iterated')
  assert.equal(skesk.s2k.c, 0)
  assert.equal(skesk.s2k.getCount(), 1024)
  assert.ok(packets[1] instanceof openpgp.SymEncryptedIntegrityProtectedDataPacket)
  assert.equal((packets[1] as openpgp.SymEncryptedIntegrityProtectedDataPacket & { version: number }).version, 1)
  const decrypted = await openpgp.decrypt({ message, passwords: [password], format: 'binary' })
  assert.deepEqual(decrypted.data, plaintext)
  const defaultMessage = await openpgp.readMessage({ binaryMessage: await encryptEnvelopeBytes(plaintext, password, { s2k: 'openpgp-default' }) })
  assert.equal((defaultMessage.packets[0] as unknown as { s2k: { c: number } }).s2k.c, openpgp.config.s2kIterationCountByte)
})

test('a message written by plain openpgp.encrypt (the reference server) decrypts', async () => {
  const { password, plaintext } = await fixture()
  const reference = await openpgp.encrypt({ message: await openpgp.createMessage({ binary: plaintext }), passwords: [password], format: 'binary' })
  assert.deepEqual(await decryptEnvelopeBytes(reference, password), plaintext)
})

test('wrong key, corrupt or foreign bytes give DECRYPTION_FAILED', async () => {
  const { password, other, plaintext } = await fixture()
  const ciphertext = await encryptEnvelopeBytes(plaintext, password)
  const isFailure = (e: unknown): boolean => isHearthError(e, 'DECRYPTION_FAILED') && e.status === 422
  await assert.rejects(decryptEnvelopeBytes(ciphertext, other), isFailure)
  const flipped = new Uint8Array(ciphertext)
  flipped[flipped.length - 5]! ^= 0x01
  await assert.rejects(decryptEnvelopeBytes(flipped, password), isFailure)
  await assert.rejects(decryptEnvelopeBytes(ciphertext.subarray(0, ciphertext.length - 10), password), isFailure)
  await assert.rejects(decryptEnvelopeBytes(plaintext, password), isFailure)
  await assert.rejects(decryptEnvelopeBytes(new Uint8Array(), password), isFailure)
  await assert.rejects(decryptEnvelopeBytes(randomBytes(300), password), isFailure)
})

test('only a canonical 64-hex-character password is accepted', async () => {
  const { password, plaintext } = await fixture()
  for (const bad of ['0x' + password, password.toUpperCase(), password.slice(1), '', 'secret']) {
    await assert.rejects(encryptEnvelopeBytes(plaintext, bad), (e: unknown) => isHearthError(e, 'INVALID_ARGUMENT'))
    await assert.rejects(decryptEnvelopeBytes(plaintext, bad), (e: unknown) => isHearthError(e, 'INVALID_ARGUMENT'))
  }
})

test('10 MB round trip', async () => {
  const { password } = await fixture()
  const big = new Uint8Array(randomBytes(10 * 1024 * 1024))
  const ciphertext = await encryptEnvelopeBytes(big, password)
  assert.ok(ciphertext.length > big.length && ciphertext.length < big.length + 200, 'no compression, small framing overhead')
  const back = await decryptEnvelopeBytes(ciphertext, password)
  assert.equal(Buffer.compare(Buffer.from(back.buffer, back.byteOffset, back.byteLength), Buffer.from(big.buffer, big.byteOffset, big.byteLength)), 0)
})

async function chunked (plaintext: Uint8Array, password: string, pieceBytes: number): Promise<{ pieces: Uint8Array[], joined: Uint8Array }> {
  const pieces: Uint8Array[] = []
  for await (const p of encryptEnvelopeChunks(plaintext, password, { pieceBytes })) pieces.push(p)
  return { pieces, joined: new Uint8Array(Buffer.concat(pieces)) }
}

test('a streamed message comes in pieces of exactly the asked size and decrypts with plain openpgp.decrypt', async () => {
  const { password } = await fixture()
  const big = new Uint8Array(randomBytes(3 * 1024 * 1024 + 12345))
  const { pieces, joined } = await chunked(big, password, 262_144)
  assert.ok(pieces.length > 12)
  for (const p of pieces.slice(0, -1)) assert.equal(p.byteLength, 262_144)
  assert.ok(pieces.at(-1)!.byteLength > 0 && pieces.at(-1)!.byteLength <= 262_144)
  assert.ok(joined.length > big.length && joined.length < big.length + 400, 'no compression, small framing overhead')
  assert.equal(Buffer.compare(Buffer.from(await plainOpenpgpDecrypt(joined, password)), Buffer.from(big)), 0)
  assert.equal(Buffer.compare(Buffer.from(await decryptEnvelopeBytes(joined, password)), Buffer.from(big)), 0)
  // the same packets and settings as a whole message: SKESK v4, iterated S2K count byte 0, SEIPD v1
  const message = await openpgp.readMessage({ binaryMessage: joined })
  const skesk = message.packets.filterByTag(openpgp.enums.packet.symEncryptedSessionKey)[0] as unknown as { version: number, s2k: { type: string, c: number } }
  assert.equal(skesk.version, 4)
  assert.equal(skesk.s2k.type, 'iterated')
  assert.equal(skesk.s2k.c, 0)
  assert.equal(message.packets.filterByTag(openpgp.enums.packet.symEncryptedIntegrityProtectedData).length, 1)
})

test('a streamed message of a tiny or empty plaintext is one short piece', async () => {
  const { password, plaintext } = await fixture()
  for (const input of [plaintext, new Uint8Array(0)]) {
    const { pieces, joined } = await chunked(input, password, 262_144)
    assert.equal(pieces.length, 1)
    assert.deepEqual(await plainOpenpgpDecrypt(joined, password), input)
  }
})

const gpg = spawnSync('gpg', ['--version'], { encoding: 'utf8' })
test('GnuPG decrypts a Hearth message (interoperability beyond OpenPGP.js)', { skip: gpg.status === 0 ? false : 'gpg is not installed' }, async (t) => {
  const { password, plaintext } = await fixture()
  const dir = await tempDir(t)
  const home = join(dir, 'gnupg')
  await mkdir(home, { mode: 0o700 })
  const file = join(dir, 'envelope.pgp')
  await writeFile(file, await encryptEnvelopeBytes(plaintext, password))
  // a large file's message is written as a stream (partial body lengths): GnuPG reads it too
  const big = new Uint8Array(randomBytes(2 * 1024 * 1024 + 777))
  const streamed = join(dir, 'large.pgp')
  await writeFile(streamed, (await chunked(big, password, 262_144)).joined)
  const decrypt = (path: string): ReturnType<typeof spawnSync> => spawnSync('gpg', ['--homedir', home, '--batch', '--quiet', '--no-tty', '--pinentry-mode', 'loopback', '--passphrase-fd', '0', '--decrypt', path], {
    input: password + '\n', maxBuffer: 16 * 1024 * 1024
  })
  let r, rs
  try {
    r = decrypt(file)
    rs = decrypt(streamed)
  } finally {
    spawnSync('gpgconf', ['--homedir', home, '--kill', 'all']) // gpg may have started an agent for this home
  }
  assert.equal(r.status, 0, r.stderr?.toString())
  assert.deepEqual(new Uint8Array(r.stdout as Buffer), plaintext)
  assert.equal(rs.status, 0, rs.stderr?.toString())
  assert.equal(Buffer.compare(rs.stdout as Buffer, Buffer.from(big)), 0)
})
