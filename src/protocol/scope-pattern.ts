// Scope patterns of a grant (docs/protocol.md §3.8): an exact scope, `source.*` (every scope of
// that source) or `*` (everything). Pure: matching is exact string work, never a regex built
// from input, and never changes case (scopes are case-sensitive, docs/protocol.md §2.1).
import { HearthError } from '../errors.js'
import { isScope, scopeProblem } from './scope.js'

const SOURCE_PATTERN = /^[a-z0-9][a-z0-9_]*$/

/** Why `p` is not a scope pattern; null when it is one. */
export function patternProblem (p: unknown): string | null {
  if (typeof p !== 'string') return 'must be a string'
  if (p === '*') return null
  if (p.endsWith('.*')) {
    const source = p.slice(0, -2)
    return SOURCE_PATTERN.test(source) && source.length <= 64 ? null : `source ${JSON.stringify(source.slice(0, 80))} must match ${SOURCE_PATTERN.source}`
  }
  const problem = scopeProblem(p)
  return problem === null ? null : `is neither a scope, "source.*" nor "*": ${problem}`
}

export const MAX_PATTERNS = 64

/** The patterns, checked and without duplicates (order kept); INVALID_ARGUMENT otherwise. */
export function checkPatterns (value: unknown, what = 'scopes'): string[] {
  if (!Array.isArray(value) || value.length === 0) throw new HearthError('INVALID_ARGUMENT', `${what} must be a non-empty array of scope patterns`)
  if (value.length > MAX_PATTERNS) throw new HearthError('INVALID_ARGUMENT', `${what} has more than ${MAX_PATTERNS} patterns`)
  const out: string[] = []
  for (const p of value) {
    const problem = patternProblem(p)
    if (problem !== null) throw new HearthError('INVALID_ARGUMENT', `${what}: ${JSON.stringify(typeof p === 'string' ? p.slice(0, 140) : p)} ${problem}`)
    if (!out.includes(p as string)) out.push(p as string)
  }
  return out
}

export function patternCovers (pattern: string, scope: string): boolean {
  if (pattern === '*') return true
  if (pattern.endsWith('.*')) return scope.startsWith(pattern.slice(0, -1))
  return pattern === scope
}

/** The first pattern covering `scope`, or null. A non-scope is never covered. */
export function coveringPattern (patterns: readonly string[], scope: string): string | null {
  if (!isScope(scope)) return null
  for (const p of patterns) if (patternCovers(p, scope)) return p
  return null
}

/** Whether every scope `inner` covers is also covered by `outer` (the owner narrowing a request). */
export function patternWithin (inner: string, outer: readonly string[]): boolean {
  if (outer.includes('*') || outer.includes(inner)) return true
  if (inner === '*') return false
  const source = inner.endsWith('.*') ? inner.slice(0, -2) : inner.split('.')[0]!
  return outer.includes(`${source}.*`)
}
