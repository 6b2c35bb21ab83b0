// The data file envelope (docs/protocol.md §2.3, version 1.0): its type, builder, validator, byte form and
// the collectedAt ⇄ file name mapping. Pure: no I/O.
import { HearthError } from '../errors.js'
import { scopeProblem } from './scope.js'
import { DEFAULT_MAX_JSON_VALUES, MAX_DATA_DEPTH, parseBoundedJsonBytes } from './bounded-json.js'

export const ENVELOPE_VERSION = '1.0'
/** The envelope object and its five members: the data value's own count comes on top. */
const ENVELOPE_VALUES = 6

export interface Envelope {
  /** The definitionUrl of the schema the file was validated against. */
  $schema: string
  version: typeof ENVELOPE_VERSION
  scope: string
  /** ISO 8601 UTC with Z, optionally with milliseconds: 2026-01-21T10:00:00Z, 2026-01-21T10:00:00.123Z */
  collectedAt: string
  data: Record<string, unknown>
}

const ENVELOPE_FIELDS = ['$schema', 'version', 'scope', 'collectedAt', 'data'] as const

// Exactly three fraction digits when present: that is what "milliseconds" means and what
// Date.prototype.toISOString writes, so one writer never produces two spellings of one millisecond.
const COLLECTED_AT_PATTERN = /^(\d{4})-(\d{2})-(\d{2})T(\d{2}):(\d{2}):(\d{2})(\.\d{3})?Z$/
const FILE_NAME_PATTERN = /^(\d{4}-\d{2}-\d{2}T\d{2})-(\d{2})-(\d{2}(?:\.\d{3})?Z)\.json$/

const DAYS_IN_MONTH = [31, 28, 31, 30, 31, 30, 31, 31, 30, 31, 30, 31]

/**
 * The last collectedAt found valid: a POST's stamp is checked three times on its way (the
 * envelope, its file name, the query), and a burst's stamps come one after another.
 */
let lastValidCollectedAt: string | null = null

/** Why `s` is not a valid collectedAt, or null when it is. */
export function collectedAtProblem (s: unknown): string | null {
  if (typeof s !== 'string') return 'must be a string'
  if (s === lastValidCollectedAt) return null
  const m = COLLECTED_AT_PATTERN.exec(s)
  if (m === null) return 'must be ISO 8601 UTC like 2026-01-21T10:00:00Z (optionally .123 milliseconds before the Z)'
  // A real date and time of the proleptic Gregorian calendar, as Date counts them (year 0 is a
  // leap year; no leap second): what a Date set to these fields reads back unchanged, without one.
  const year = Number(m[1])
  const month = Number(m[2])
  const day = Number(m[3])
  const leapDay = month === 2 && year % 4 === 0 && (year % 100 !== 0 || year % 400 === 0) ? 1 : 0
  const real = month >= 1 && month <= 12 && day >= 1 && day <= DAYS_IN_MONTH[month - 1]! + leapDay &&
    Number(m[4]) <= 23 && Number(m[5]) <= 59 && Number(m[6]) <= 59
  if (!real) return 'is not a real date and time'
  lastValidCollectedAt = s
  return null
}

/** Every broken rule of docs/protocol.md §2.3, in field order; empty when `value` is a valid envelope. */
export function envelopeProblems (value: unknown): string[] {
  if (!isPlainObject(value)) return [`envelope must be a JSON object, got ${describeType(value)}`]
  const reasons: string[] = []
  const v = value as Record<string, unknown>
  if (typeof v.$schema !== 'string' || v.$schema.length === 0) {
    // the one field a person writing a file by hand cannot guess: say where it comes from
    const scope = scopeProblem(v.scope) === null ? String(v.scope) : '<scope>'
    reasons.push(`$schema must be a non-empty string: the definitionUrl of the scope's schema (\`hearth schema show ${scope}\` prints it; \`hearth put ${scope}\` writes the file with it)`)
  }
  if (v.version !== ENVELOPE_VERSION) reasons.push(`version must be the string "${ENVELOPE_VERSION}"`)
  const scopeReason = scopeProblem(v.scope)
  if (scopeReason !== null) reasons.push(`scope ${scopeReason}`)
  const timeReason = collectedAtProblem(v.collectedAt)
  if (timeReason !== null) reasons.push(`collectedAt ${timeReason}`)
  if (!isPlainObject(v.data)) reasons.push(`data must be a JSON object, got ${describeType(v.data)}`)
  // Unknown fields are refused rather than dropped: the stored bytes are the whole envelope, and
  // silently losing a field a writer thought it saved is worse than a clear rejection.
  for (const key of Object.keys(v)) {
    if (!(ENVELOPE_FIELDS as readonly string[]).includes(key)) {
      reasons.push(`unknown field ${JSON.stringify(key)}; an envelope has exactly ${ENVELOPE_FIELDS.join(', ')}`)
    }
  }
  return reasons
}

/** Returns `value` as an Envelope, or throws INVALID_ENVELOPE with `details.reasons`. */
export function checkEnvelope (value: unknown): Envelope {
  const reasons = envelopeProblems(value)
  if (reasons.length > 0) {
    throw new HearthError('INVALID_ENVELOPE', `invalid envelope: ${reasons.join('; ')}`, { reasons })
  }
  return value as Envelope
}

export interface BuildEnvelopeInput {
  definitionUrl: string
  scope: string
  data: Record<string, unknown>
  /** Defaults to now. A Date is written with milliseconds (toISOString). */
  collectedAt?: Date | string
}

export function buildEnvelope (input: BuildEnvelopeInput): Envelope {
  const at = input.collectedAt ?? new Date()
  let collectedAt: unknown = at
  if (at instanceof Date) {
    if (Number.isNaN(at.getTime())) {
      throw new HearthError('INVALID_ENVELOPE', 'invalid envelope: collectedAt is an invalid Date', { reasons: ['collectedAt is an invalid Date'] })
    }
    collectedAt = at.toISOString()
  }
  return checkEnvelope({
    $schema: input.definitionUrl,
    version: ENVELOPE_VERSION,
    scope: input.scope,
    collectedAt,
    data: input.data
  })
}

/**
 * Parses the UTF-8 JSON bytes of a data file: INVALID_JSON when they are not JSON, JSON_TOO_DEEP /
 * NUMBER_NOT_REPRESENTABLE / JSON_TOO_MANY_VALUES past the limits request bodies have too (the
 * envelope adds one level and its four fields), else checkEnvelope.
 */
export function parseEnvelopeBytes (bytes: Uint8Array, limits: { maxValues?: number } = {}): Envelope {
  const maxValues = (limits.maxValues ?? DEFAULT_MAX_JSON_VALUES) + ENVELOPE_VALUES
  return checkEnvelope(parseBoundedJsonBytes(bytes, { maxDepth: MAX_DATA_DEPTH + 1, subject: 'file', maxValues }))
}

/**
 * UTF-8 JSON with the fields in a fixed order, so one envelope always gives the same bytes.
 * `alloc` makes the buffer they are written into (shared memory, for a file a worker thread
 * encrypts: handing it over then copies nothing).
 */
export function serializeEnvelope (env: Envelope, alloc?: (size: number) => Uint8Array): Uint8Array {
  const ordered = {
    $schema: env.$schema,
    version: env.version,
    scope: env.scope,
    collectedAt: env.collectedAt,
    data: env.data
  }
  const json = JSON.stringify(ordered)
  if (alloc === undefined) return new TextEncoder().encode(json)
  const out = alloc(Buffer.byteLength(json))
  new TextEncoder().encodeInto(json, out)
  return out
}

/** Bytes kept free before a body read with envelope room: more than any envelope's head needs. */
const ENVELOPE_HEAD_ROOM = 4096
/** Buffers made by withEnvelopeRoom whose room no envelope has taken yet. */
const unclaimedRoom = new WeakSet<ArrayBufferLike>()

/**
 * A buffer of `size` bytes for a large request body (api/http.ts reads it straight in), in shared
 * memory with room before and after it, so serializeEnvelopeWithData can build the envelope around
 * the body where it lies: the head just before it, the closing brace just after. That saves a
 * copy of the whole body (10 ms and 10 MB for a 10 MB POST), and the encryption worker reads the
 * same memory.
 */
export function withEnvelopeRoom (size: number): Buffer {
  const memory = new SharedArrayBuffer(ENVELOPE_HEAD_ROOM + size + 1)
  unclaimedRoom.add(memory)
  return Buffer.from(memory, ENVELOPE_HEAD_ROOM, size)
}

/**
 * serializeEnvelope's bytes for `env`, with its data given as JSON bytes already in the form
 * JSON.stringify writes (isCanonicalJson), which are copied instead of serialised again. `alloc`
 * makes the buffer (shared memory, for a file a worker thread encrypts). A body read into
 * withEnvelopeRoom's buffer is not copied: the first envelope built of it is written around it
 * (shared memory too); any later one (another file name, so another head) is a copy, so an
 * envelope already handed out never changes.
 */
export function serializeEnvelopeWithData (env: Envelope, dataJson: Uint8Array, alloc: (size: number) => Uint8Array = (size) => new Uint8Array(size)): Uint8Array {
  const head = Buffer.from(JSON.stringify({ $schema: env.$schema, version: env.version, scope: env.scope, collectedAt: env.collectedAt, data: null }).slice(0, -'null}'.length))
  const memory = dataJson.buffer
  const inRoom = dataJson.byteOffset === ENVELOPE_HEAD_ROOM && ENVELOPE_HEAD_ROOM + dataJson.byteLength + 1 === memory.byteLength
  if (inRoom && head.byteLength <= ENVELOPE_HEAD_ROOM && unclaimedRoom.delete(memory)) {
    const around = new Uint8Array(memory, ENVELOPE_HEAD_ROOM - head.byteLength, head.byteLength + dataJson.byteLength + 1)
    around.set(head, 0)
    around[around.byteLength - 1] = 0x7d // }
    return around
  }
  const out = alloc(head.byteLength + dataJson.byteLength + 1)
  out.set(head, 0)
  out.set(dataJson, head.byteLength)
  out[out.byteLength - 1] = 0x7d // }
  return out
}

/** `2026-01-21T10:00:00.123Z` → `2026-01-21T10-00-00.123Z.json` (docs/protocol.md §2.3: ':' becomes '-'). */
export function collectedAtToFileName (iso: string): string {
  const reason = collectedAtProblem(iso)
  if (reason !== null) {
    throw new HearthError('INVALID_ENVELOPE', `invalid collectedAt ${JSON.stringify(iso)}: ${reason}`, { reasons: [`collectedAt ${reason}`] })
  }
  return iso.replaceAll(':', '-') + '.json'
}

/** The inverse of collectedAtToFileName; null for any name that is not a data file name. */
export function fileNameToCollectedAt (name: string): string | null {
  const m = FILE_NAME_PATTERN.exec(name)
  if (m === null) return null
  const iso = `${m[1]}:${m[2]}:${m[3]}`
  return collectedAtProblem(iso) === null ? iso : null
}

function isPlainObject (v: unknown): v is Record<string, unknown> {
  if (typeof v !== 'object' || v === null || Array.isArray(v)) return false
  const proto = Object.getPrototypeOf(v)
  return proto === Object.prototype || proto === null
}

function describeType (v: unknown): string {
  if (v === null) return 'null'
  if (Array.isArray(v)) return 'array'
  return typeof v
}
