// The grant string of a permission (docs/protocol.md §3.8): JSON
// `{"user", "builder", "scopes", "expiresAt", "nonce"}`. The string itself is what the owner
// signs and what the contract stores, so it is built in one fixed key order and parsed strictly
// (bounded size, known fields only). Pure.
import type { Address } from 'viem'
import { checksumAddress, isAddress } from '../protocol/eth.js'
import { HearthError } from '../errors.js'
import { checkPatterns } from '../protocol/scope-pattern.js'

export interface Grant {
  user: Address
  builder: Address
  scopes: string[]
  /** Unix seconds; 0 = never. */
  expiresAt: number
  nonce: number
}

export const MAX_GRANT_BYTES = 8 * 1024
/** Latest expiry accepted (year 9999), so the number stays exact in JSON and in uint256. */
const MAX_EXPIRES_AT = 253_402_300_799

export function grantJson (g: Grant): string {
  return JSON.stringify({ user: g.user, builder: g.builder, scopes: g.scopes, expiresAt: g.expiresAt, nonce: g.nonce })
}

export function checkExpiresAt (value: unknown, what = 'expiresAt'): number {
  if (value === undefined || value === null) return 0
  if (typeof value !== 'number' || !Number.isSafeInteger(value) || value < 0 || value > MAX_EXPIRES_AT) {
    throw new HearthError('INVALID_ARGUMENT', `${what} must be unix seconds (0 = never)`)
  }
  return value
}

function address (value: unknown, what: string): Address {
  if (typeof value !== 'string' || !isAddress(value)) throw new HearthError('INVALID_ARGUMENT', `grant ${what} is not an address`)
  return checksumAddress(value)
}

/** The grant a string holds; INVALID_ARGUMENT when it is not one. */
export function parseGrant (text: string): Grant {
  if (typeof text !== 'string' || text.length > MAX_GRANT_BYTES) throw new HearthError('INVALID_ARGUMENT', 'grant is not a string of at most 8 KiB')
  let value: unknown
  try { value = JSON.parse(text) } catch { throw new HearthError('INVALID_ARGUMENT', 'grant is not JSON') }
  if (value === null || typeof value !== 'object' || Array.isArray(value)) throw new HearthError('INVALID_ARGUMENT', 'grant is not a JSON object')
  const v = value as Record<string, unknown>
  const nonce = v.nonce
  if (typeof nonce !== 'number' || !Number.isSafeInteger(nonce) || nonce < 0) throw new HearthError('INVALID_ARGUMENT', 'grant nonce must be a non-negative integer')
  return {
    user: address(v.user, 'user'),
    builder: address(v.builder, 'builder'),
    scopes: checkPatterns(v.scopes, 'grant scopes'),
    expiresAt: checkExpiresAt(v.expiresAt, 'grant expiresAt'),
    nonce
  }
}

export function sameAddress (a: string | null | undefined, b: string | null | undefined): boolean {
  return typeof a === 'string' && typeof b === 'string' && a.toLowerCase() === b.toLowerCase()
}
