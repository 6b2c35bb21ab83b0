// Signed builder requests (docs/protocol.md §3.8):
//   Authorization: Web3Signed <base64url(JSON payload)>.<0x signature>
// payload {aud, method, uri, bodyHash, iat, exp, grantId?, iss?}; the signature is EIP-191
// personal_sign of the base64url string. `iss` (the builder's address) is optional: when given,
// a signature by any other key is refused as SIGNATURE_INVALID instead of reading as an unknown
// builder. Pure apart from the signature recovery; the replay cache lives with the stores.
import { createHash } from 'node:crypto'
import type { Address, Hex } from 'viem'
import { checksumAddress, hexToBytes, isAddress, recoverPersonalSigner } from '../protocol/eth.js'
import { HearthError, type ErrorCode } from '../errors.js'

export interface SignedPayload {
  aud: string
  method: string
  uri: string
  bodyHash: Hex
  iat: number
  exp: number
  grantId?: string
  iss?: Address
}

export interface SignedRequest {
  payload: SignedPayload
  /** The base64url text that was signed. */
  encoded: string
  signature: Hex
  signer: Address
}

/** What the request looked like on arrival, to compare with what was signed. */
export interface RequestFacts {
  method: string
  /** The request target as received (path and query). */
  uri: string
  body: Uint8Array
  /** Seconds. */
  now: number
}

export const CLOCK_SKEW_S = 60
export const MAX_WINDOW_S = 600
const MAX_HEADER = 4096
const SCHEME = 'web3signed '
const B64URL = /^[A-Za-z0-9_-]+$/
const SIGNATURE = /^0x[0-9a-fA-F]{130}$/
const HASH = /^0x[0-9a-f]{64}$/
const KNOWN_FIELDS = new Set(['aud', 'method', 'uri', 'bodyHash', 'iat', 'exp', 'grantId', 'iss'])

function deny (code: ErrorCode, message: string, details?: Record<string, unknown>): HearthError {
  return new HearthError(code, message, details)
}

export function bodyHash (body: Uint8Array): Hex {
  return `0x${createHash('sha256').update(body).digest('hex')}`
}

/** Splits and decodes the header; SIGNATURE_MISSING / SIGNATURE_MALFORMED. No recovery yet. */
export function parseAuthorization (header: string | undefined): { payload: SignedPayload; encoded: string; signature: Hex } {
  if (header === undefined || header === '') throw deny('SIGNATURE_MISSING', 'this request needs Authorization: Web3Signed <base64url payload>.<signature>')
  if (header.length > MAX_HEADER) throw deny('SIGNATURE_MALFORMED', `the Authorization header is longer than ${MAX_HEADER} characters`)
  if (header.slice(0, SCHEME.length).toLowerCase() !== SCHEME) throw deny('SIGNATURE_MALFORMED', 'the Authorization scheme must be Web3Signed')
  const token = header.slice(SCHEME.length).trim()
  const dot = token.lastIndexOf('.')
  const encoded = token.slice(0, dot)
  const signature = token.slice(dot + 1)
  if (dot <= 0 || !B64URL.test(encoded)) throw deny('SIGNATURE_MALFORMED', 'expected <base64url payload>.<0x signature>')
  if (!SIGNATURE.test(signature)) throw deny('SIGNATURE_MALFORMED', 'the signature must be 0x followed by 130 hex digits (65 bytes)')
  let value: unknown
  try {
    value = JSON.parse(new TextDecoder('utf-8', { fatal: true }).decode(Buffer.from(encoded, 'base64url')))
  } catch {
    throw deny('SIGNATURE_MALFORMED', 'the payload is not base64url-encoded JSON')
  }
  return { payload: checkPayload(value), encoded, signature: signature as Hex }
}

function checkPayload (value: unknown): SignedPayload {
  if (value === null || typeof value !== 'object' || Array.isArray(value)) throw deny('SIGNATURE_MALFORMED', 'the payload must be a JSON object')
  const v = value as Record<string, unknown>
  const unknown = Object.keys(v).filter((k) => !KNOWN_FIELDS.has(k))
  if (unknown.length > 0) throw deny('SIGNATURE_MALFORMED', `unknown payload fields: ${unknown.slice(0, 5).join(', ')}`)
  const text = (k: string, max: number): string => {
    const x = v[k]
    if (typeof x !== 'string' || x === '' || x.length > max) throw deny('SIGNATURE_MALFORMED', `payload ${k} must be a non-empty string of at most ${max} characters`)
    return x
  }
  const seconds = (k: string): number => {
    const x = v[k]
    if (typeof x !== 'number' || !Number.isSafeInteger(x) || x < 0) throw deny('SIGNATURE_MALFORMED', `payload ${k} must be unix seconds`)
    return x
  }
  const payload: SignedPayload = {
    aud: text('aud', 512),
    method: text('method', 16),
    uri: text('uri', 2048),
    bodyHash: text('bodyHash', 66).toLowerCase() as Hex,
    iat: seconds('iat'),
    exp: seconds('exp')
  }
  if (!HASH.test(payload.bodyHash)) throw deny('SIGNATURE_MALFORMED', 'payload bodyHash must be 0x + 64 hex digits (SHA-256 of the body)')
  if (v.grantId !== undefined) {
    const g = typeof v.grantId === 'number' && Number.isSafeInteger(v.grantId) ? String(v.grantId) : v.grantId
    if (typeof g !== 'string' || !/^[A-Za-z0-9_-]{1,80}$/.test(g)) throw deny('SIGNATURE_MALFORMED', 'payload grantId must be a grant id or a permission id')
    payload.grantId = g
  }
  if (v.iss !== undefined) {
    if (typeof v.iss !== 'string' || !isAddress(v.iss)) throw deny('SIGNATURE_MALFORMED', 'payload iss must be an address')
    payload.iss = checksumAddress(v.iss)
  }
  return payload
}

const HALF_ORDER = 0x7fffffffffffffffffffffffffffffff5d576e7357a4501ddfe92f46681b20a0n

async function recoverPersonal (message: string, signature: Hex): Promise<Address> {
  const bytes = hexToBytes(signature)
  // a high-s signature is the malleable twin of a low-s one: refusing it keeps "a signature works once" true
  if (BigInt(`0x${signature.slice(66, 130)}`) > HALF_ORDER) throw new Error('high s')
  return recoverPersonalSigner(message, bytes)
}

/** The signer of the base64url text; SIGNATURE_INVALID when it does not recover or is not `iss`. */
export async function recoverSigner (encoded: string, signature: Hex, iss?: Address): Promise<Address> {
  let signer: Address
  try {
    signer = await recoverPersonal(encoded, signature)
  } catch {
    throw deny('SIGNATURE_INVALID', 'the signature does not recover to an address (or is a malleable high-s signature)')
  }
  if (iss !== undefined && signer !== iss) throw deny('SIGNATURE_INVALID', 'the request is not signed by the key of payload iss', { iss })
  return signer
}

/**
 * The last moment (ms) a request signed with `payload` can be accepted: checkSignedFacts takes it
 * while `exp` is at least the current whole second minus CLOCK_SKEW_S, i.e. until exp + skew + 1 s.
 * The replay cache remembers a signature at least this long.
 */
export function acceptedUntilMs (payload: Pick<SignedPayload, 'exp'>): number {
  return (payload.exp + CLOCK_SKEW_S + 1) * 1000
}

/**
 * What the replay cache remembers of an accepted request: what was signed and who signed it.
 * One signature has several encodings (v as 0/1 or 27/28; s and n - s): each recovers the same
 * signer over the same text, so each has this one key and none of them passes twice.
 */
export function replayKey (encoded: string, signer: Address): string {
  return createHash('sha256').update(`${signer.toLowerCase()}\n${encoded}`).digest('hex')
}

function trimSlash (s: string): string {
  return s.endsWith('/') ? s.slice(0, -1) : s
}

/**
 * Compares the signed payload with the request; the first mismatch wins. `audience` is
 * builders.publicUrl; `uriPrefix` its path (a reverse proxy may serve the listener under one).
 */
export function checkSignedFacts (payload: SignedPayload, facts: RequestFacts, audience: string): void {
  if (trimSlash(payload.aud) !== trimSlash(audience)) throw deny('SIGNATURE_WRONG_AUDIENCE', `payload aud must be ${audience}`, { expected: audience })
  if (payload.method.toUpperCase() !== facts.method.toUpperCase()) throw deny('SIGNATURE_WRONG_METHOD', `payload method is ${payload.method.slice(0, 16)}, the request is ${facts.method}`)
  if (!uriMatches(payload.uri, facts.uri, audience)) throw deny('SIGNATURE_WRONG_URI', 'payload uri must be the request path with its query, exactly as sent')
  if (payload.bodyHash !== bodyHash(facts.body)) throw deny('SIGNATURE_WRONG_BODY', 'payload bodyHash is not 0x + SHA-256 of the request body')
  if (payload.exp < payload.iat) throw deny('SIGNATURE_MALFORMED', 'payload exp is before iat')
  if (payload.iat > facts.now + CLOCK_SKEW_S) throw deny('SIGNATURE_NOT_YET_VALID', 'payload iat is in the future', { now: facts.now })
  if (payload.exp < facts.now - CLOCK_SKEW_S) throw deny('SIGNATURE_EXPIRED', 'the signed request has expired', { now: facts.now })
  if (payload.exp - payload.iat > MAX_WINDOW_S) throw deny('SIGNATURE_WINDOW_TOO_LONG', `exp - iat must be at most ${MAX_WINDOW_S} seconds`)
}

function uriMatches (signed: string, received: string, audience: string): boolean {
  if (signed === received) return true
  // behind a reverse proxy serving the listener under a path, the builder signs the public path
  let prefix = ''
  try { prefix = trimSlash(new URL(audience).pathname) } catch { return false }
  return prefix !== '' && signed === prefix + received
}

/** Builder side: the Authorization header for a request (tests, bench, and the README example). */
export async function signRequest (sign: (message: string) => Promise<Hex>, fields: Omit<SignedPayload, 'bodyHash' | 'iat' | 'exp'> & { body?: Uint8Array; iat?: number; exp?: number; ttlSeconds?: number }): Promise<string> {
  const iat = fields.iat ?? Math.floor(Date.now() / 1000)
  const { body, ttlSeconds, ...rest } = fields
  const payload: SignedPayload = { ...rest, bodyHash: bodyHash(body ?? new Uint8Array()), iat, exp: fields.exp ?? iat + (ttlSeconds ?? 120) }
  const encoded = Buffer.from(JSON.stringify(payload)).toString('base64url')
  return `Web3Signed ${encoded}.${await sign(encoded)}`
}
