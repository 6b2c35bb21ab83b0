// Ids of access requests and grants: a prefix, the creation time in base 36 (so key order is
// creation order) and random bits. Never all digits, so a grant id and an on-chain permission id
// (decimal) can share one field without ambiguity.
import { randomBytes } from 'node:crypto'

export function timeOrderedId (prefix: 'req' | 'grant', now = Date.now()): string {
  return `${prefix}_${now.toString(36).padStart(9, '0')}${randomBytes(5).toString('hex')}`
}

export const ID_PATTERN = /^(req|grant)_[0-9a-z]{19}$/
export const PERMISSION_ID_PATTERN = /^[1-9][0-9]{0,30}$/
