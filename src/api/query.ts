// Query-string parameters with the same validation everywhere (INVALID_ARGUMENT, never NaN).
import { HearthError } from '../errors.js'

export function intParam (url: URL, name: string, fallback: number, max: number): number {
  const raw = url.searchParams.get(name)
  if (raw === null || raw === '') return fallback
  if (!/^\d{1,9}$/.test(raw)) throw new HearthError('INVALID_ARGUMENT', `${name} must be a non-negative integer, got ${JSON.stringify(raw.slice(0, 40))}`)
  const n = Number.parseInt(raw, 10)
  if (n > max) throw new HearthError('INVALID_ARGUMENT', `${name} must be at most ${max}`)
  return n
}

export function stringParam (url: URL, name: string, maxLength = 256): string | null {
  const raw = url.searchParams.get(name)
  if (raw === null) return null
  if (raw.length > maxLength) throw new HearthError('INVALID_ARGUMENT', `${name} is longer than ${maxLength} characters`)
  return raw
}
