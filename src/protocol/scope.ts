// Scope grammar (docs/protocol.md §2.1): `{source}.{category}[.{subcategory}]`.
// The exact scope string is an input of the key schedule, so nothing here ever changes its case
// or trims it: a scope is either accepted exactly as given or rejected with a precise reason.
import { HearthError } from '../errors.js'

export const MAX_SCOPE_LENGTH = 128

const SOURCE_PATTERN = /^[a-z0-9][a-z0-9_]*$/
// The published connector catalogue uses camelCase tails (spotify.savedTracks), so the tail
// segments allow uppercase letters even though the spec's prose says lowercase.
const TAIL_PATTERN = /^[a-zA-Z0-9][a-zA-Z0-9_]*$/

const SEGMENT_NAMES = ['source', 'category', 'subcategory'] as const

export interface ParsedScope {
  source: string
  category: string
  subcategory?: string
}

/** The last scope found valid: a POST's scope is checked four times on its way (route, pipeline, envelope, file event). */
let lastValidScope: string | null = null

/** Why `s` is not a valid scope, in words a user can act on; null when it is valid. */
export function scopeProblem (s: unknown): string | null {
  if (typeof s !== 'string') return `must be a string, got ${describeType(s)}`
  if (s === lastValidScope) return null
  if (s.length === 0) return 'is empty'
  if (s.length > MAX_SCOPE_LENGTH) return `longer than ${MAX_SCOPE_LENGTH} characters (${s.length})`
  const segments = s.split('.')
  if (segments.length < 2 || segments.length > 3) {
    return `has ${segments.length} segment${segments.length === 1 ? '' : 's'}; a scope has 2 or 3`
  }
  for (let i = 0; i < segments.length; i++) {
    const segment = segments[i]!
    if (segment.length === 0) return `${segmentLabel(i)} is empty`
    const pattern = i === 0 ? SOURCE_PATTERN : TAIL_PATTERN
    if (!pattern.test(segment)) return `${segmentLabel(i)} must match ${pattern.source}`
  }
  lastValidScope = s
  return null
}

function segmentLabel (i: number): string {
  return `segment ${i + 1} (${SEGMENT_NAMES[i]!})`
}

export function isScope (s: unknown): s is string {
  return scopeProblem(s) === null
}

/** Returns `s` unchanged when it is a valid scope; throws INVALID_SCOPE with the reason otherwise. */
export function assertScope (s: unknown): string {
  const reason = scopeProblem(s)
  if (reason !== null) {
    const shown = typeof s === 'string' ? JSON.stringify(s.length > 140 ? s.slice(0, 140) + '…' : s) : describeType(s)
    throw new HearthError('INVALID_SCOPE', `invalid scope ${shown}: ${reason}`, {
      scope: typeof s === 'string' ? s : null,
      reason
    })
  }
  return s as string
}

export function parseScope (s: unknown): ParsedScope {
  const [source, category, subcategory] = assertScope(s).split('.') as [string, string, string | undefined]
  return subcategory === undefined ? { source, category } : { source, category, subcategory }
}

function describeType (v: unknown): string {
  if (v === null) return 'null'
  if (Array.isArray(v)) return 'array'
  return typeof v
}
