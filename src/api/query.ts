// Query-string parameters with the same validation everywhere (INVALID_ARGUMENT, never NaN).
import { HearthError } from '../errors.js'

/** The parameter's value; a URL without a query has none (its searchParams object is not made). */
function param (url: URL, name: string): string | null {
  return url.search === '' ? null : url.searchParams.get(name)
}

export function intParam (url: URL, name: string, fallback: number, max: number): number {
  const raw = param(url, name)
  if (raw === null || raw === '') return fallback
  if (!/^\d{1,9}$/.test(raw)) throw new HearthError('INVALID_ARGUMENT', `${name} must be a non-negative integer, got ${JSON.stringify(raw.slice(0, 40))}`)
  const n = Number.parseInt(raw, 10)
  if (n > max) throw new HearthError('INVALID_ARGUMENT', `${name} must be at most ${max}`)
  return n
}

export function stringParam (url: URL, name: string, maxLength = 256): string | null {
  const raw = param(url, name)
  if (raw === null) return null
  if (raw.length > maxLength) throw new HearthError('INVALID_ARGUMENT', `${name} is longer than ${maxLength} characters`)
  return raw
}
