// The Ethereum account arithmetic every start needs (the owner address a master signature
// recovers to, the address of a private key) and every signed builder request (EIP-191 personal
// messages, EIP-55 addresses), on @noble/curves and @noble/hashes directly. viem computes the
// same with the same libraries, but importing it loads ~380 modules (~8 MB of heap, ~10 MB of
// RSS for an idle daemon); it now loads only where its ABI, RPC and typed-data code is needed
// (a configured chain, a grant signed as typed data). The curve arithmetic runs on libsecp256k1
// (secp256k1.ts). Results equal viem's: test/protocol/eth.test.ts.
import { randomBytes } from 'node:crypto'
import { keccak_256 } from '@noble/hashes/sha3.js'
import { secp256k1 } from './secp256k1.js'

export type Hex = `0x${string}`
export type Address = `0x${string}`

const HEX = /^0x(?:[0-9a-fA-F]{2})*$/
const ADDRESS = /^0x[0-9a-fA-F]{40}$/
const PERSONAL_PREFIX = '\x19Ethereum Signed Message:\n'

export function bytesToHex (bytes: Uint8Array): Hex {
  return `0x${Buffer.from(bytes.buffer, bytes.byteOffset, bytes.byteLength).toString('hex')}`
}

/** True for `0x` followed by whole bytes of hex digits (what viem's strict `isHex` and an even length accept). */
export function isHexBytes (value: string): value is Hex {
  return HEX.test(value)
}

/** The bytes of 0x-prefixed hex; throws on anything else (no silent truncation at a bad digit, as Buffer.from does). */
export function hexToBytes (hex: string): Uint8Array {
  if (!isHexBytes(hex)) throw new Error('not 0x-prefixed hex of whole bytes')
  return new Uint8Array(Buffer.from(hex.slice(2), 'hex'))
}

export function keccak256 (bytes: Uint8Array): Uint8Array {
  return keccak_256(bytes)
}

/** 0x and 40 hex digits in any case, checksum not checked (viem's `isAddress(a, { strict: false })`). */
export function isAddress (value: string): value is Address {
  return ADDRESS.test(value)
}

/** The EIP-55 checksummed form of an address (viem's `getAddress`); throws when it is not one. */
export function checksumAddress (address: string): Address {
  if (!isAddress(address)) throw new Error(`not an address: ${JSON.stringify(address).slice(0, 60)}`)
  const lower = address.slice(2).toLowerCase()
  const hash = Buffer.from(keccak_256(Buffer.from(lower, 'ascii'))).toString('hex')
  let out = '0x'
  for (let i = 0; i < 40; i++) out += Number.parseInt(hash[i]!, 16) >= 8 ? lower[i]!.toUpperCase() : lower[i]!
  return out as Address
}

/** The address of an uncompressed (65-byte) secp256k1 public key. */
export function addressOfPublicKey (uncompressed: Uint8Array): Address {
  return checksumAddress(bytesToHex(keccak_256(uncompressed.subarray(1)).subarray(12)))
}

/** The address of a 32-byte secp256k1 private key; throws when the key is outside the curve's range. */
export function addressOfPrivateKey (privateKey: Hex): Address {
  return addressOfPublicKey(secp256k1().publicKey(hexToBytes(privateKey)))
}

/** The order of secp256k1's group: a private key is in [1, n). */
const CURVE_ORDER = 0xfffffffffffffffffffffffffffffffebaaedce6af48a03bbfd25e8cd0364141n

/** A fresh private key from the CSPRNG (viem's `generatePrivateKey`). */
export function randomPrivateKey (): Hex {
  for (;;) {
    const key = bytesToHex(randomBytes(32))
    const value = BigInt(key)
    if (value > 0n && value < CURVE_ORDER) return key // all but ~2^-128 of draws
  }
}

/** EIP-191 hash of a personal message (viem's `hashMessage` of a string). */
export function personalMessageHash (message: string): Uint8Array {
  const body = Buffer.from(message, 'utf8')
  return keccak_256(Buffer.concat([Buffer.from(`${PERSONAL_PREFIX}${body.length}`, 'utf8'), body]))
}

/**
 * The address that signed `message` with `personal_sign` (r ‖ s ‖ v, 65 bytes, v 27/28 or 0/1);
 * viem's `recoverMessageAddress`. Throws when the signature does not recover.
 */
export function recoverPersonalSigner (message: string, signature: Uint8Array): Address {
  if (signature.length !== 65) throw new Error('a signature is 65 bytes')
  const v = signature[64]!
  const recovery = v >= 27 ? v - 27 : v
  if (recovery !== 0 && recovery !== 1) throw new Error('bad recovery byte')
  return addressOfPublicKey(secp256k1().recover(signature.subarray(0, 64), recovery, personalMessageHash(message)))
}

/** `personal_sign` of `message` (deterministic RFC 6979, low s, v 27/28): viem's `signMessage`. */
export function signPersonalMessage (privateKey: Hex, message: string): Hex {
  const { signature, recovery } = secp256k1().sign(personalMessageHash(message), hexToBytes(privateKey))
  const out = new Uint8Array(65)
  out.set(signature, 0)
  out[64] = recovery + 27
  return bytesToHex(out)
}
