// What Hearth's OpenPGP writer and reader (openpgp-writer.ts, openpgp-reader.ts) share of RFC 4880:
// the packet tags and algorithm ids of the one message form Hearth writes (docs/protocol.md §2.4),
// and the string-to-key (S2K, §3.7.1) that turns the password into the key of that message's SKESK.
// Pure protocol code, no I/O.
import { createHash } from 'node:crypto'

export const TAG_SKESK = 3
export const TAG_LITERAL = 11
export const TAG_SEIPD = 18
export const TAG_MDC = 19
/** AES's block size: the CFB prefix and the zero IVs. */
export const BLOCK = 16
/** Literal data format 'b' (binary). */
export const LITERAL_BINARY = 0x62
/** Symmetric algorithm id of AES-256 (§9.2). */
export const AES256 = 9

/** S2K specifier types (§3.7.1): simple, salted, iterated and salted. */
export const S2K_SIMPLE = 0
export const S2K_SALTED = 1
export const S2K_ITERATED = 3
/** Hash algorithm id of SHA-256 (§9.4), the one Hearth's S2K uses. */
export const S2K_SHA256 = 8
/** Node's hash name by OpenPGP hash algorithm id (§9.4), for the S2Ks read. */
export const S2K_HASHES: ReadonlyMap<number, string> = new Map([[2, 'sha1'], [S2K_SHA256, 'sha256'], [9, 'sha384'], [10, 'sha512'], [11, 'sha224']])
/** Bytes of an S2K salt. */
export const S2K_SALT_BYTES = 8
/**
 * The count byte Hearth writes: 0, which says (16 + 0) << 6 = 1024 bytes hashed, the least RFC 4880
 * can say (the password is a 256-bit secret, see encryption.ts, so stretching it adds nothing).
 */
export const S2K_COUNT_BYTE = 0

/** An S2K specifier read or to write: node's hash name, the salt (none for simple) and the bytes hashed (0: salt and password once). */
export interface S2k { hash: string; salt: Uint8Array | null; count: number }

/** The octets hashed that an iterated S2K's count byte stands for (§3.7.1.3): at most 65,011,712. */
export function s2kCount (countByte: number): number {
  return (16 + (countByte & 15)) << ((countByte >> 4) + 6)
}

/** The S2K Hearth writes (iterated and salted, SHA-256, count byte 0) with `salt`. */
export const hearthS2k = (salt: Uint8Array): S2k => ({ hash: 'sha256', salt, count: s2kCount(S2K_COUNT_BYTE) })

/**
 * The S2K key (§3.7.1): one hash context per hash output needed, the n-th preloaded with n zero
 * octets; each hashes salt || password (repeated and cut to `count` octets for the iterated form,
 * and at least once whole). SHA-256 for AES-256 (Hearth's) takes one context.
 */
export function deriveKey (s2k: S2k, password: Uint8Array, keyBytes: number): Buffer {
  const unit = s2k.salt === null ? Buffer.from(password) : Buffer.concat([s2k.salt, password])
  const total = Math.max(s2k.count, unit.byteLength)
  // the repeated input in pieces of at most ~64 KiB, each a whole number of units (a hostile count
  // costs 65 MB of hashing, never 65 MB of memory)
  const repeat = Math.max(1, Math.floor(65_536 / unit.byteLength))
  const piece = Buffer.allocUnsafe(Math.min(total, repeat * unit.byteLength)) // filled whole below
  for (let at = 0; at < piece.byteLength; at += unit.byteLength) unit.copy(piece, at)
  const out: Buffer[] = []
  let length = 0
  for (let n = 0; length < keyBytes; n++) {
    const h = createHash(s2k.hash)
    if (n > 0) h.update(Buffer.alloc(n))
    for (let done = 0; done < total;) {
      const take = Math.min(piece.byteLength, total - done)
      h.update(piece.subarray(0, take))
      done += take
    }
    const d = h.digest()
    out.push(d)
    length += d.byteLength
  }
  const key = out.length === 1 ? out[0]! : Buffer.concat(out, length)
  return key.byteLength === keyBytes ? key : key.subarray(0, keyBytes)
}
