// The key schedule (docs/protocol.md §2.4). Everything secret Hearth uses comes from one master key material:
// the 65-byte EIP-191 signature of MASTER_KEY_MESSAGE by the owner's wallet. Each use gets its own
// HKDF `info` string, so keys for different uses are independent:
//   scope keys          info "scope:" + scope          (interoperates with the reference server)
//   libp2p private net  info "hearth:libp2p-pnet:v1"
//   libp2p peer seed    info "hearth:libp2p-peer-id:v1"
// A scope key is never reused for anything else: deriveKey refuses every info starting with
// "scope:", so the only way to obtain a scope key is scopeKey(), and every other use lives under
// the "hearth:" prefix, which can never equal "scope:" + a valid scope.
import { hkdfSync } from 'node:crypto'
import { hexToBytes, isHexBytes, recoverPersonalSigner, signPersonalMessage, type Address, type Hex } from './eth.js'
import { HearthError } from '../errors.js'
import { assertScope } from './scope.js'

export const MASTER_KEY_MESSAGE = 'vana-master-key-v1'
export const MASTER_KEY_LENGTH = 65
const HKDF_SALT = 'vana'
const SCOPE_INFO_PREFIX = 'scope:'

export const KEY_INFO = {
  privateNetwork: 'hearth:libp2p-pnet:v1',
  peerIdentity: 'hearth:libp2p-peer-id:v1'
} as const

export type { Address } from './eth.js'

export interface MasterKey {
  /** r ‖ s ‖ v, 65 bytes, v in {27, 28}. */
  masterKey: Uint8Array
  /** EIP-55 checksummed owner address recovered from the signature. */
  ownerAddress: Address
}

/**
 * Master key material and owner address from the owner's `personal_sign` of MASTER_KEY_MESSAGE.
 * Accepts 0x-hex, bare hex or raw bytes. Some signers (hardware wallets, EIP-2098 tooling) write
 * the recovery id as 0/1 instead of 27/28; it is normalised to 27/28 — the form `personal_sign`
 * returns and the reference server hashes — so every device of one owner derives the same keys.
 */
export async function masterKeyFromSignature (sig: Hex | string | Uint8Array): Promise<MasterKey> {
  const bytes = signatureBytes(sig)
  if (bytes.length !== MASTER_KEY_LENGTH) {
    throw new HearthError('INVALID_IDENTITY', `master signature must be ${MASTER_KEY_LENGTH} bytes (r‖s‖v), got ${bytes.length}`, { reason: 'wrong length' })
  }
  const masterKey = new Uint8Array(bytes)
  const v = masterKey[64]!
  if (v === 0 || v === 1) masterKey[64] = v + 27
  else if (v !== 27 && v !== 28) {
    throw new HearthError('INVALID_IDENTITY', `master signature has recovery byte ${v}; expected 27 or 28 (or 0/1)`, { reason: 'bad recovery byte' })
  }
  let ownerAddress: Address
  try {
    ownerAddress = recoverPersonalSigner(MASTER_KEY_MESSAGE, masterKey)
  } catch {
    // The cause is dropped on purpose: its message can quote the signature, which is secret.
    throw new HearthError('INVALID_IDENTITY', 'master signature does not recover to an address', { reason: 'unrecoverable' })
  }
  return { masterKey, ownerAddress }
}

/** The owner's master signature, made with the wallet's private key (what a wallet's personal_sign returns). */
export async function signMasterKey (privateKey: Hex): Promise<Hex> {
  return signPersonalMessage(privateKey, MASTER_KEY_MESSAGE)
}

/**
 * HKDF-SHA256(ikm = master, salt = "vana", info) for any use other than a scope key. Infos
 * starting with "scope:" are refused so a scope key can never be produced here for another use.
 */
export function deriveKey (master: Uint8Array, info: string, length = 32): Uint8Array {
  if (typeof info !== 'string' || info.length === 0) {
    throw new HearthError('INVALID_ARGUMENT', 'key derivation needs a non-empty info string')
  }
  if (info.startsWith(SCOPE_INFO_PREFIX)) {
    throw new HearthError('INVALID_ARGUMENT', 'scope keys come only from scopeKey(); pick an info outside "scope:"', { info })
  }
  return hkdf(master, info, length)
}

/** The 32-byte key that encrypts every file of one scope (docs/protocol.md §2.4). */
export function scopeKey (master: Uint8Array, scope: string): Uint8Array {
  return hkdf(master, SCOPE_INFO_PREFIX + assertScope(scope), 32)
}

/** The OpenPGP password for a scope: the scope key as 64 lowercase hex characters, no 0x. */
export function scopeKeyHex (master: Uint8Array, scope: string): string {
  return Buffer.from(scopeKey(master, scope)).toString('hex')
}

/** The pre-shared key of the owner's libp2p private network (32 bytes). */
export function privateNetworkKey (master: Uint8Array): Uint8Array {
  return deriveKey(master, KEY_INFO.privateNetwork, 32)
}

/**
 * A 32-byte seed for an Ed25519 libp2p key pair. It is the same on every device of one owner,
 * so it suits proving "same owner" between peers; a device that needs its own PeerId must mix in
 * something device-specific.
 */
export function peerIdentitySeed (master: Uint8Array): Uint8Array {
  return deriveKey(master, KEY_INFO.peerIdentity, 32)
}

function hkdf (master: Uint8Array, info: string, length: number): Uint8Array {
  if (!(master instanceof Uint8Array) || master.length !== MASTER_KEY_LENGTH) {
    throw new HearthError('INVALID_ARGUMENT', `master key material must be ${MASTER_KEY_LENGTH} bytes`)
  }
  if (!Number.isInteger(length) || length < 1 || length > 255 * 32) {
    throw new HearthError('INVALID_ARGUMENT', `derived key length must be 1..${255 * 32} bytes, got ${length}`)
  }
  return new Uint8Array(hkdfSync('sha256', master, HKDF_SALT, info, length))
}

function signatureBytes (sig: Hex | string | Uint8Array): Uint8Array {
  if (sig instanceof Uint8Array) return sig
  if (typeof sig !== 'string') {
    throw new HearthError('INVALID_IDENTITY', 'master signature must be hex or bytes', { reason: 'wrong type' })
  }
  const hex = (sig.startsWith('0x') || sig.startsWith('0X') ? '0x' + sig.slice(2) : '0x' + sig) as Hex
  if (!isHexBytes(hex)) {
    throw new HearthError('INVALID_IDENTITY', 'master signature is not valid hex', { reason: 'not hex' })
  }
  return hexToBytes(hex)
}
