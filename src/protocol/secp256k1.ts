// The three secp256k1 operations Hearth needs (a private key's public key, a recoverable
// signature, a public key recovered from one), on libsecp256k1 (npm `secp256k1`, a prebuilt
// native binding) with @noble/curves as the fallback where the binding cannot load. Every start
// recovers the owner from the master signature and derives the wallet key's address: on
// @noble/curves that cost ~0.1 s of module loading and ~0.1–0.3 s of building its base-point
// tables before the first answer; libsecp256k1 does all three in ~1 ms. Both give the same bytes
// (RFC 6979 nonces, low s): test/protocol/secp256k1.test.ts.
import { createRequire } from 'node:module'

export interface Secp256k1 {
  /** The 65-byte uncompressed public key of a 32-byte private key; throws outside the curve's order. */
  publicKey (privateKey: Uint8Array): Uint8Array
  /** A deterministic (RFC 6979), low-s signature of a 32-byte hash: r ‖ s (64 bytes) and the recovery id. */
  sign (hash: Uint8Array, privateKey: Uint8Array): { signature: Uint8Array, recovery: number }
  /** The 65-byte uncompressed public key that made `signature` (r ‖ s) over `hash`; throws when none does. */
  recover (signature: Uint8Array, recovery: number, hash: Uint8Array): Uint8Array
}

interface NativeBinding {
  publicKeyCreate (seckey: Uint8Array, compressed: boolean): Uint8Array
  ecdsaSign (msg32: Uint8Array, seckey: Uint8Array): { signature: Uint8Array, recid: number }
  ecdsaRecover (sig: Uint8Array, recid: number, msg32: Uint8Array, compressed: boolean): Uint8Array
}

const require = createRequire(import.meta.url)

/** libsecp256k1, or null where its binding does not load (the package then falls back to elliptic, which Hearth does not use). */
export function nativeSecp256k1 (): Secp256k1 | null {
  let binding: NativeBinding
  try {
    binding = require('secp256k1/bindings') as NativeBinding
  } catch {
    return null
  }
  return {
    publicKey: (privateKey) => binding.publicKeyCreate(privateKey, false),
    sign: (hash, privateKey) => {
      const { signature, recid } = binding.ecdsaSign(hash, privateKey)
      return { signature, recovery: recid }
    },
    recover: (signature, recovery, hash) => binding.ecdsaRecover(signature, recovery, hash, false)
  }
}

/** @noble/curves (pure JS; loaded only when this is called: node 20.19+ loads an ES module by require). */
export function nobleSecp256k1 (): Secp256k1 {
  const { secp256k1 } = require('@noble/curves/secp256k1.js') as typeof import('@noble/curves/secp256k1.js')
  return {
    publicKey: (privateKey) => secp256k1.getPublicKey(privateKey, false),
    sign: (hash, privateKey) => {
      const signed = secp256k1.sign(hash, privateKey, { prehash: false, lowS: true, format: 'recovered' })
      return { signature: signed.subarray(1), recovery: signed[0]! }
    },
    recover: (signature, recovery, hash) => {
      const recovered = new Uint8Array(65)
      recovered[0] = recovery
      recovered.set(signature, 1)
      return secp256k1.Signature.fromBytes(recovered, 'recovered').recoverPublicKey(hash).toBytes(false)
    }
  }
}

let chosen: Secp256k1 | undefined

/** The implementation in use: the native one when it loads, chosen on first use. */
export function secp256k1 (): Secp256k1 {
  chosen ??= nativeSecp256k1() ?? nobleSecp256k1()
  return chosen
}
