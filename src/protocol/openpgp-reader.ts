// Hearth's own OpenPGP reader for password-encrypted messages of the form Hearth writes
// (openpgp-writer.ts, docs/protocol.md §2.4), on node:crypto. Pure protocol code: bytes in, bytes
// out, no I/O. Anything else is handed back as `other` and read by OpenPGP.js (encryption.ts), so
// reading stays as compatible as it was.
//
// Why our own: OpenPGP.js costs ~0.1–0.3 ms and a pile of garbage per 1 KB message (web streams,
// its packet objects, the MDC's SHA-1 in JavaScript) and ~50 ms to load; here a message costs what
// its S2K, AES-CFB and SHA-1 cost in OpenSSL.
//
// What is read here (RFC 4880), everything else is `other`:
//   exactly one SKESK v4 (tag 3): AES-128/192/256, S2K simple, salted or iterated+salted on
//     SHA-1/224/256/384/512, with or without an encrypted session key (OpenPGP.js writes one,
//     GnuPG uses the S2K output itself), followed by
//   exactly one SEIPD v1 (tag 18) and nothing after it, whose decrypted body is the 18-byte
//   prefix, one binary literal data packet (tag 11, format 'b') and the MDC packet (tag 19).
// Headers in the new or the old format; partial body lengths (§4.2.2.4) in the SEIPD and literal
// packets, as a streamed message has them. Compressed, signed, text-mode, AEAD, public-key,
// Argon2 and other messages are `other`.
//
// Order of the work, so a hostile message costs little: the whole framing is checked first (every
// length within the input, the packet layout ours), then the S2K (whose one-byte count bounds it
// at 65,011,712 hashed bytes, hashed in 64 KiB pieces), the session key, then the body's AES-CFB
// and its MDC, compared in constant time before any plaintext is looked at or returned. Memory:
// a partial-length body is gathered into one buffer no larger than the input, the plaintext is at
// most the body. A wrong password, a modified or truncated message throw DECRYPTION_FAILED, as the
// OpenPGP.js path does.
import { createDecipheriv, createHash, timingSafeEqual } from 'node:crypto'
import { HearthError } from '../errors.js'
import { AES256, BLOCK, deriveKey, LITERAL_BINARY, S2K_HASHES, S2K_ITERATED, S2K_SALT_BYTES, S2K_SALTED, S2K_SIMPLE, s2kCount, TAG_LITERAL, TAG_MDC, TAG_SEIPD, TAG_SKESK, type S2k } from './openpgp-packets.js'

export type ReadResult = { plaintext: Uint8Array } | { other: string }

const PREFIX = BLOCK + 2
const MDC_BYTES = 22

/** AES by OpenPGP algorithm id: node's name and the key size. */
const CIPHERS: ReadonlyMap<number, { name: string; keyBytes: number }> = new Map([
  [7, { name: 'aes-128-cfb', keyBytes: 16 }],
  [8, { name: 'aes-192-cfb', keyBytes: 24 }],
  [AES256, { name: 'aes-256-cfb', keyBytes: 32 }]
])

/**
 * A packet: its tag, where its body starts and how long it is in all, where its first part ends
 * (the body is one range unless it has partial lengths) and where the next packet starts.
 */
interface Packet { tag: number; lengthAt: number; bodyAt: number; firstEnd: number; bodyBytes: number; partial: boolean; end: number }

/** Thrown for a message of our form that cannot be decrypted: wrong key, modified, truncated. */
function failed (reason: string): HearthError {
  return new HearthError('DECRYPTION_FAILED', 'could not decrypt: wrong key or corrupt ciphertext', { reason })
}

/**
 * The plaintext of `message` under the password, `{ other }` when the message is not of the form
 * read here (then OpenPGP.js reads it), or DECRYPTION_FAILED.
 */
export function readMessage (message: Uint8Array, passwordHex: string): ReadResult {
  const skesk = readPacket(message, 0)
  if (skesk === null || skesk.tag !== TAG_SKESK || skesk.partial) return { other: 'not a single SKESK first' }
  const key = parseSkesk(message.subarray(skesk.bodyAt, skesk.end))
  if ('other' in key) return key
  const seipd = readPacket(message, skesk.end)
  if (seipd === null || seipd.tag !== TAG_SEIPD) return { other: 'no SEIPD after the SKESK' }
  if (seipd.end !== message.byteLength) return { other: 'packets after the SEIPD' }
  if (seipd.bodyBytes === 0 || message[seipd.bodyAt] !== 1) return { other: 'not SEIPD v1' }
  if (seipd.bodyBytes < 1 + PREFIX + MDC_BYTES) throw failed('the encrypted data is too short')
  const body = bodyOf(message, seipd, 1)

  const s2kKey = deriveKey(key.s2k, Buffer.from(passwordHex, 'utf8'), key.cipher.keyBytes)
  const session = sessionKey(key, s2kKey)
  const decipher = createDecipheriv(session.cipher.name, session.key, Buffer.alloc(BLOCK))
  const decrypted = decipher.update(body)
  const rest = decipher.final() // CFB is a stream mode: nothing is held back
  const plain = rest.byteLength === 0 ? decrypted : Buffer.concat([decrypted, rest])
  const hashed = plain.byteLength - 20
  const digest = createHash('sha1').update(plain.subarray(0, hashed)).digest()
  const headerOk = plain[hashed - 2] === (0xc0 | TAG_MDC) && plain[hashed - 1] === 20
  if (!(timingSafeEqual(digest, plain.subarray(hashed)) && headerOk)) throw failed('modification detected (MDC)')

  // authenticated: what lies between the prefix and the MDC packet must be one binary literal packet
  const inner = plain.subarray(PREFIX, hashed - 2)
  const literal = readPacket(inner, 0)
  if (literal === null || literal.tag !== TAG_LITERAL || literal.end !== inner.byteLength) return { other: 'not a single literal data packet' }
  const at = literal.bodyAt
  if (literal.firstEnd - at < 6 || inner[at] !== LITERAL_BINARY) return { other: 'not binary literal data' }
  const header = 2 + inner[at + 1]! + 4 // format, file name length and name, date
  if (at + header > literal.firstEnd) return { other: 'literal data header beyond its first part' }
  return { plaintext: view(bodyOf(inner, literal, header)) }
}

/**
 * The packet starting at `at` (new or old header format), or null when the bytes there are not a
 * packet header. A body that reaches beyond the input is a truncated message. A body with
 * partial lengths is only walked here (no list of its parts: a hostile one may have millions).
 */
function readPacket (buf: Uint8Array, at: number): Packet | null {
  if (at >= buf.byteLength) return null
  const ctb = buf[at]!
  if ((ctb & 0x80) === 0) return null
  if ((ctb & 0x40) === 0) {
    // old format: tag in bits 5–2, length type in bits 1–0 (3: to the end of the input)
    const tag = (ctb >> 2) & 0x0f
    const lengthType = ctb & 0x03
    let p = at + 1
    let length = buf.byteLength - p
    if (lengthType !== 3) {
      const octets = 1 << lengthType
      if (p + octets > buf.byteLength) throw failed('truncated packet header')
      length = 0
      for (let i = 0; i < octets; i++) length = length * 256 + buf[p++]!
      if (length > buf.byteLength - p) throw failed('truncated packet')
    }
    return { tag, lengthAt: at + 1, bodyAt: p, firstEnd: p + length, bodyBytes: length, partial: false, end: p + length }
  }
  let bodyAt = -1
  let firstEnd = -1
  let bodyBytes = 0
  let parts = 0
  const end = walkParts(buf, at + 1, (a, b) => {
    if (parts++ === 0) { bodyAt = a; firstEnd = b }
    bodyBytes += b - a
  })
  return { tag: ctb & 0x3f, lengthAt: at + 1, bodyAt, firstEnd, bodyBytes, partial: parts > 1, end }
}

/** Visits the body ranges of a new-format packet whose first length octet is at `p`; returns its end. */
function walkParts (buf: Uint8Array, p: number, visit: (from: number, to: number) => void): number {
  const need = (n: number): void => { if (p + n > buf.byteLength) throw failed('truncated packet header') }
  const body = (length: number): void => {
    if (length > buf.byteLength - p) throw failed('truncated packet')
    visit(p, p + length)
    p += length
  }
  for (;;) {
    need(1)
    const first = buf[p++]!
    if (first < 192) { body(first); return p }
    if (first < 224) {
      need(1)
      body(((first - 192) << 8) + buf[p++]! + 192)
      return p
    }
    if (first === 255) {
      need(4)
      const length = ((buf[p]! << 24) >>> 0) + (buf[p + 1]! << 16) + (buf[p + 2]! << 8) + buf[p + 3]!
      p += 4
      body(length)
      return p
    }
    // a partial body length: 2^(first & 0x1f) bytes, and more parts follow
    body(1 << (first & 0x1f))
  }
}

/** A packet's body without its first `skip` bytes: a view when it is one range, else one new buffer. */
function bodyOf (buf: Uint8Array, packet: Packet, skip: number): Uint8Array {
  if (!packet.partial) return buf.subarray(packet.bodyAt + skip, packet.firstEnd)
  // filled whole below; over 4 KiB a buffer of its own (what a worker moves instead of copying)
  const out = Buffer.allocUnsafe(packet.bodyBytes - skip)
  let at = 0
  let left = skip
  walkParts(buf, packet.lengthAt, (a, b) => {
    const from = a + Math.min(left, b - a)
    left -= from - a
    out.set(buf.subarray(from, b), at)
    at += b - from
  })
  return out
}

interface SkeskKey { cipher: { name: string; keyBytes: number }; s2k: S2k; encryptedKey: Uint8Array }

/** SKESK v4 (§5.3): version, cipher, S2K specifier (§3.7.1), then the encrypted session key, if any. */
function parseSkesk (b: Uint8Array): SkeskKey | { other: string } {
  if (b.byteLength < 4 || b[0] !== 4) return { other: 'not SKESK v4' }
  const cipher = CIPHERS.get(b[1]!)
  if (cipher === undefined) return { other: `cipher ${b[1]!} is not AES` }
  const type = b[2]!
  const hash = S2K_HASHES.get(b[3]!)
  if (hash === undefined) return { other: `S2K hash ${b[3]!}` }
  let at = 4
  let salt: Uint8Array | null = null
  let count = 0
  if (type === S2K_SALTED || type === S2K_ITERATED) {
    if (b.byteLength < at + S2K_SALT_BYTES) throw failed('truncated S2K salt')
    salt = b.subarray(at, at + S2K_SALT_BYTES)
    at += S2K_SALT_BYTES
  }
  if (type === S2K_ITERATED) {
    if (b.byteLength < at + 1) throw failed('truncated S2K count')
    count = s2kCount(b[at++]!)
  } else if (type !== S2K_SIMPLE && type !== S2K_SALTED) return { other: `S2K type ${type}` }
  return { cipher, s2k: { hash, salt, count }, encryptedKey: b.subarray(at) }
}

/** The session key: the S2K key itself, or the encrypted one decrypted with it (§5.3). */
function sessionKey (key: SkeskKey, s2kKey: Buffer): { cipher: { name: string; keyBytes: number }; key: Buffer } {
  if (key.encryptedKey.byteLength === 0) return { cipher: key.cipher, key: s2kKey }
  const d = createDecipheriv(key.cipher.name, s2kKey, Buffer.alloc(BLOCK))
  const plain = Buffer.concat([d.update(key.encryptedKey), d.final()])
  const cipher = CIPHERS.get(plain[0]!)
  // a wrong password decrypts to an algorithm octet and key size that rarely fit
  if (cipher === undefined || plain.byteLength - 1 !== cipher.keyBytes) throw failed('session key decryption failed (wrong key)')
  return { cipher, key: plain.subarray(1) }
}

/** A plain Uint8Array over a Buffer's bytes (what OpenPGP.js returns). */
function view (b: Uint8Array): Uint8Array {
  return new Uint8Array(b.buffer, b.byteOffset, b.byteLength)
}
