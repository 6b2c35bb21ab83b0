// Small JSON request bodies checked field by field: an object with exactly the named fields, each
// of the stated type and size. A wrong shape is INVALID_BODY listing every problem; what a value
// means (an email, a 6-digit code) is left to the feature, which answers INVALID_ARGUMENT.
import { HearthError } from '../errors.js'

export interface StringField { type: 'string'; maxLength: number; optional?: boolean }

type Fields = Record<string, StringField>
type Parsed<F extends Fields> = { [K in keyof F]: F[K]['optional'] extends true ? string | undefined : string }

/** `expected` shows the shape in the error message, e.g. `{"email": "…"}`. */
export function objectBody<F extends Fields> (value: unknown, fields: F, expected: string): Parsed<F> {
  if (value === null || typeof value !== 'object' || Array.isArray(value)) {
    throw new HearthError('INVALID_BODY', `the body must be a JSON object: ${expected}`, { reasons: ['the body is not an object'] })
  }
  const given = value as Record<string, unknown>
  const reasons: string[] = []
  for (const key of Object.keys(given)) if (!Object.hasOwn(fields, key)) reasons.push(`unknown field ${JSON.stringify(key.slice(0, 60))}`)
  const out: Record<string, string | undefined> = {}
  for (const [key, rule] of Object.entries(fields)) {
    const v = given[key]
    if (v === undefined) {
      if (rule.optional !== true) reasons.push(`${key} is required`)
      continue
    }
    if (typeof v !== 'string') reasons.push(`${key} must be a string`)
    else if (v.length > rule.maxLength) reasons.push(`${key} is longer than ${rule.maxLength} characters`)
    else out[key] = v
  }
  if (reasons.length > 0) throw new HearthError('INVALID_BODY', `${reasons.join('; ')} (expected ${expected})`, { reasons })
  return out as Parsed<F>
}
