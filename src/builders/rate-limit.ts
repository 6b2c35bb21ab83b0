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
