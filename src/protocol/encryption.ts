// OpenPGP password encryption of whole envelopes (docs/protocol.md §2.4). A message written here is one
// standard OpenPGP message: SKESK v4 + SEIPD v1 (MDC), AES-256, no compression. It decrypts with
// plain `openpgp.decrypt({message, passwords: [hex], format: 'binary'})`, GnuPG or Sequoia.
//
// S2K choice — iterated+salted SHA-256 with the minimum iteration count byte 0 (1024 bytes hashed):
// the password is a 256-bit HKDF output, so stretching buys nothing: brute force is 2^256 either
// way. OpenPGP.js's default (count byte 224 = 16 MiB hashed) is paid on encrypt AND on every
// decrypt. bench/crypto.ts on the 2-core build machine, 1 KB envelope, encrypt + decrypt:
//   default S2K   31–45 ms/file   (~25–32 files/s)
//   count byte 0  0.5–0.8 ms/file (~1,200–1,900 files/s), ~60× faster; what remains is
//                 openpgp's packet handling, not the KDF.
// Every implementation reads count byte 0 (checked with GnuPG 2.2: "count 1024 (0)", decrypts).
// Why not something else:
//  - 'simple'/'salted' S2K would save the 1 KiB SHA-256 (about a microsecond), but OpenPGP.js v6
//    refuses to write them, so messages written by it and by us (and those already stored) would
//    differ for no gain.
//  - Argon2 (RFC 9580) is deliberately slow and memory-hard, and older implementations (GnuPG 2.2,
//    OpenPGP.js v5) cannot read it.
//  - AEAD / SEIPD v2 (aeadProtect) is not understood by GnuPG 2.2/2.4 (which only speak the
//    LibrePGP OCB packet), and the reference server uses OpenPGP.js defaults (SEIPD v1); the MDC
//    gives integrity and OpenPGP.js checks it before returning buffered plaintext.
// Writing: our own writer (openpgp-writer.ts) on node:crypto for Hearth's settings, whole or
// streamed; OpenPGP.js only for the 'openpgp-default' comparison. Reading: our own reader
// (openpgp-reader.ts) for the messages of this form (whoever wrote them), OpenPGP.js for any
// other; OpenPGP.js and GnuPG also read every message we write in the tests. bench/crypto.ts
// compares the writers and the readers.
// A large file is encrypted as a stream (encryptEnvelopeChunks) so its ciphertext can be chunked,
// hashed and stored while the rest is still being encrypted (on a worker thread, ingest/encryptor.ts).
// OpenPGP.js (~4 MB of heap and ~2 MB outside it) is imported on the first message our reader
// hands over or comparison write, not with the daemon: a daemon that reads only its own kind of
// message never loads it.
import type * as OpenPgp from 'openpgp'
import { HearthError } from '../errors.js'
import { readMessage } from './openpgp-reader.js'
import { writeMessage, writeMessagePiecesFrom } from './openpgp-writer.js'

export type S2kChoice = 'hearth' | 'openpgp-default'

export interface EncryptOptions {
  /** 'hearth' (default): iterated S2K with count byte 0. 'openpgp-default': OpenPGP.js defaults, for comparison. */
  s2k?: S2kChoice
}

const PASSWORD_PATTERN = /^[0-9a-f]{64}$/

let library: Promise<typeof OpenPgp> | null = null
function openpgpLibrary (): Promise<typeof OpenPgp> {
  library ??= import('openpgp')
  return library
}

// The comparison setting (bench/crypto.ts, bench/ingest.ts): OpenPGP.js with its default S2K.
// Passed on every call rather than set on openpgp.config, so nothing else in the process that
// touches the global config can change what is written.
function openpgpDefaultConfig (openpgp: typeof OpenPgp): OpenPgp.PartialConfig {
  return {
    aeadProtect: false,
    preferredSymmetricAlgorithm: openpgp.enums.symmetric.aes256,
    preferredCompressionAlgorithm: openpgp.enums.compression.uncompressed
  }
}

// Reading: a peer-supplied message could name an Argon2 S2K with a huge memory parameter; cap it
// at OpenPGP.js's own encryption default (2^16 KiB = 64 MiB) instead of its 4 GiB read limit.
const READ_CONFIG: OpenPgp.PartialConfig = {
  maxArgon2MemoryExponent: 16,
  allowUnauthenticatedMessages: false
}

export async function encryptEnvelopeBytes (plaintext: Uint8Array, passwordHex: string, opts: EncryptOptions = {}): Promise<Uint8Array> {
  checkInput(plaintext, passwordHex)
  if (s2kOf(opts) === 'hearth') return writeMessage(plaintext, passwordHex)
  const openpgp = await openpgpLibrary()
  const message = await openpgp.createMessage({ binary: plaintext, format: 'binary' })
  return await openpgp.encrypt({ message, passwords: [passwordHex], format: 'binary', config: openpgpDefaultConfig(openpgp) })
}

/**
 * The same kind of message as encryptEnvelopeBytes, handed out in pieces of exactly `pieceBytes`
 * (the last one shorter), each a fresh buffer, each as soon as it is written: a large file's
 * ciphertext is chunked and stored while the rest is still being encrypted. The literal data and
 * SEIPD packets use partial body lengths (RFC 4880 §4.2.2.4), which plain `openpgp.decrypt` and
 * GnuPG read like any message. The plaintext may be given as its segments in order, read as they
 * are asked for (a body still arriving, body-arrival.ts).
 */
export async function * encryptEnvelopeChunks (plaintext: Uint8Array | Iterable<Uint8Array>, passwordHex: string, opts: EncryptOptions & { pieceBytes: number }): AsyncGenerator<Uint8Array> {
  checkPassword(passwordHex)
  const segments = plaintext instanceof Uint8Array ? [plaintext] : plaintext
  if (s2kOf(opts) === 'hearth') {
    yield * writeMessagePiecesFrom(segments, passwordHex, { pieceBytes: opts.pieceBytes })
    return
  }
  // the comparison setting: OpenPGP.js's whole message, cut into pieces
  const whole = await encryptEnvelopeBytes(Buffer.concat([...segments]), passwordHex, opts)
  for (let at = 0; at < whole.byteLength || at === 0; at += opts.pieceBytes) yield whole.slice(at, at + opts.pieceBytes)
}

/**
 * The plaintext bytes, or DECRYPTION_FAILED for a wrong key, corrupt or non-OpenPGP input. A
 * message of the form Hearth writes is read by our own reader (openpgp-reader.ts); any other
 * (compressed, AEAD, another cipher, …) by OpenPGP.js, as every message was before.
 */
export async function decryptEnvelopeBytes (ciphertext: Uint8Array, passwordHex: string): Promise<Uint8Array> {
  checkPassword(passwordHex)
  if (!(ciphertext instanceof Uint8Array)) throw new HearthError('INVALID_ARGUMENT', 'ciphertext must be a Uint8Array')
  const read = readMessage(ciphertext, passwordHex)
  if ('plaintext' in read) return read.plaintext
  return await decryptWithOpenpgp(ciphertext, passwordHex)
}

/** OpenPGP.js's reading of any message it understands (exported for the tests and bench/crypto.ts). */
export async function decryptWithOpenpgp (ciphertext: Uint8Array, passwordHex: string): Promise<Uint8Array> {
  checkPassword(passwordHex)
  const openpgp = await openpgpLibrary()
  try {
    const message = await openpgp.readMessage({ binaryMessage: ciphertext, config: READ_CONFIG })
    const { data } = await openpgp.decrypt({ message, passwords: [passwordHex], format: 'binary', config: READ_CONFIG })
    return data
  } catch (err) {
    const reason = err instanceof Error ? err.message : String(err)
    throw new HearthError('DECRYPTION_FAILED', 'could not decrypt: wrong key or corrupt ciphertext', { reason }, { cause: err })
  }
}

function s2kOf (opts: EncryptOptions): S2kChoice {
  const s2k = opts.s2k ?? 'hearth'
  if (s2k !== 'hearth' && s2k !== 'openpgp-default') throw new HearthError('INVALID_ARGUMENT', `unknown s2k choice ${String(opts.s2k)}`)
  return s2k
}

function checkInput (plaintext: Uint8Array, passwordHex: string): void {
  checkPassword(passwordHex)
  if (!(plaintext instanceof Uint8Array)) throw new HearthError('INVALID_ARGUMENT', 'plaintext must be a Uint8Array')
}

function checkPassword (passwordHex: string): void {
  // A 0x prefix or uppercase hex would still "work" but produce messages the reference server
  // cannot open, so only the canonical form of scopeKeyHex is accepted.
  if (typeof passwordHex !== 'string' || !PASSWORD_PATTERN.test(passwordHex)) {
    throw new HearthError('INVALID_ARGUMENT', 'encryption password must be 64 lowercase hex characters (a scope key)')
  }
}
