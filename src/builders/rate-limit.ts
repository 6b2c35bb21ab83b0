// A token bucket per key (a builder's address, or a client address before a valid signature):
// `perMinute` requests per minute with bursts up to the same number. Memory is bounded: idle
// buckets (full again) are dropped when the table grows.
import { HearthError } from '../errors.js'

export interface RateLimiter {
  /** Takes one token for `key`; RATE_LIMITED (with retryAfterMs) when there is none. */
  take (key: string, now?: number): void
  /** RATE_LIMITED when `key` has no token left, without taking one. */
  check (key: string, now?: number): void
  readonly size: number
}

const MAX_KEYS = 10_000

export function createRateLimiter (perMinute: number): RateLimiter {
  const perMs = perMinute / 60_000
  const buckets = new Map<string, { tokens: number; at: number }>()
  function sweep (now: number): void {
    for (const [key, b] of buckets) if (b.tokens + (now - b.at) * perMs >= perMinute) buckets.delete(key)
  }
  function refused (tokens: number): HearthError {
    const retryAfterMs = Math.ceil((1 - tokens) / perMs)
    return new HearthError('RATE_LIMITED', `too many requests; retry in ${Math.ceil(retryAfterMs / 1000)} s`, { retryAfterMs })
  }
  return {
    check (key, now = Date.now()) {
      const b = buckets.get(key)
      if (b === undefined) return
      const tokens = Math.min(perMinute, b.tokens + (now - b.at) * perMs)
      if (tokens < 1) throw refused(tokens)
    },
    take (key, now = Date.now()) {
      let b = buckets.get(key)
      if (b === undefined) {
        if (buckets.size >= MAX_KEYS) sweep(now)
        b = { tokens: perMinute, at: now }
        buckets.set(key, b)
      }
      b.tokens = Math.min(perMinute, b.tokens + (now - b.at) * perMs)
      b.at = now
      if (b.tokens < 1) throw refused(b.tokens)
      b.tokens -= 1
    },
    get size () { return buckets.size }
  }
}

/**
 * The budget key of a client address: an IPv4 address (also IPv4-mapped IPv6) as it is, an IPv6
 * address by its /64 — one host is usually handed a whole /64, and keying each address of it
 * apart would give it 2^64 budgets.
 */
export function addressBudgetKey (ip: string | null): string {
  if (ip === null || ip === '') return 'ip:?'
  const mapped = /^::ffff:(\d+\.\d+\.\d+\.\d+)$/i.exec(ip)
  if (mapped !== null) return `ip:${mapped[1]!}`
  if (!ip.includes(':')) return `ip:${ip}`
  const [head = '', tail] = ip.toLowerCase().split('%')[0]!.split('::')
  const left = head === '' ? [] : head.split(':')
  const right = tail === undefined || tail === '' ? [] : tail.split(':')
  const groups = tail === undefined ? left : [...left, ...Array<string>(Math.max(0, 8 - left.length - right.length)).fill('0'), ...right]
  return `ip:${groups.slice(0, 4).map((g) => g.replace(/^0+(?=.)/, '')).join(':')}::/64`
}
