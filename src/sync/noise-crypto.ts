// Noise's cipher (ChaCha20-Poly1305 IETF, docs/protocol.md §3.4) through libsodium instead of
// node:crypto: the same Noise protocol and the same bytes on the wire, so a device using either
// talks to the other (test/sync/noise-crypto.test.ts checks both ways).
//
// Why: every byte a sync moves goes through one Noise message of at most 64 KiB, and
// @chainsafe/libp2p-noise's node:crypto path costs each message a cipher object, an output
// buffer per piece of the message and, on the sending side, one more copy to join them with the
// tag. libsodium seals a message into one buffer and opens it in place, into the `dst` Noise
// hands over. Where sodium-native cannot load, Noise's own crypto is used (createSyncNode).
import type { ICryptoInterface } from '@chainsafe/libp2p-noise'
import { defaultCrypto } from '@chainsafe/libp2p-noise/crypto'
import type { Uint8ArrayList } from 'uint8arraylist'
import { loadSodium } from './sodium.js'

const TAG_BYTES = 16

/** The first `length` bytes of a list of pieces, joined into `into` (which must fit them). */
function joinInto (bytes: Uint8ArrayList, length: number, into: Uint8Array): Uint8Array {
  let off = 0
  for (const piece of bytes) {
    if (off >= length) break
    const take = Math.min(piece.byteLength, length - off)
    into.set(take === piece.byteLength ? piece : piece.subarray(0, take), off)
    off += take
  }
  return into.subarray(0, length)
}

const invalid = (): Error => new Error('Invalid chacha20poly1305 decryption')

/** Noise's crypto on libsodium, or null when sodium-native is not available here. */
export function sodiumNoiseCrypto (): ICryptoInterface | null {
  const sodium = loadSodium()
  if (sodium === null) return null
  // the handshake's hash and X25519 stay Noise's own (node:crypto): only the cipher carries data
  return {
    ...defaultCrypto,
    chaCha20Poly1305Encrypt (plaintext, nonce, ad, k) {
      const length = plaintext.byteLength
      const out = Buffer.allocUnsafe(length + TAG_BYTES)
      const body = out.subarray(0, length)
      // sealed in place: a message of several pieces is copied into the output once
      const m = plaintext instanceof Uint8Array ? plaintext : joinInto(plaintext, length, body)
      sodium.crypto_aead_chacha20poly1305_ietf_encrypt_detached(body, out.subarray(length), m, ad, null, nonce, k)
      return out
    },
    chaCha20Poly1305Decrypt (ciphertext, nonce, ad, k, dst) {
      const length = ciphertext.byteLength - TAG_BYTES
      if (length < 0) throw invalid()
      const mac = Uint8Array.from(ciphertext.subarray(length))
      const open = (c: Uint8Array, out: Uint8Array): boolean => {
        try {
          sodium.crypto_aead_chacha20poly1305_ietf_decrypt_detached(out, null, c, mac, ad, nonce, k)
          return true
        } catch {
          return false // the tag does not match (libsodium writes nothing but zeros then)
        }
      }
      const given = dst !== undefined && dst.byteLength >= length
      const out = given ? dst.subarray(0, length) : new Uint8Array(length)
      if (ciphertext instanceof Uint8Array) {
        if (!open(ciphertext.subarray(0, length), out)) throw invalid()
        return out
      }
      // A message spanning several socket reads: Noise's `dst` is the message's bytes joined
      // already (it reuses them for the plaintext), so it is opened in place there. The tag covers
      // what is opened, so a `dst` holding anything else fails the check and is filled from the
      // pieces instead: never wrong plaintext, at worst one more pass.
      if (given && open(out, out)) return out
      if (!open(joinInto(ciphertext, length, out), out)) throw invalid()
      return out
    }
  }
}
