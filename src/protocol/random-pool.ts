// Random bytes for the writer's per-message values (session key, salt, prefix): ~58 bytes per
// message, taken from a pool filled from the CSPRNG a few kilobytes at a time. Each
// `randomBytes` call costs a native crypto job (~2–6 µs of the main thread), three per message,
// about a tenth of a dropped 1 KB file's main-thread time; the pool makes that one fill per ~70
// messages. The bytes are the same CSPRNG output, each handed out once, copied out (a caller never
// holds a view of the pool), and the pool is filled again before it runs short.
import { randomFillSync } from 'node:crypto'

const POOL_BYTES = 4096
const pool = Buffer.allocUnsafeSlow(POOL_BYTES)
let used = POOL_BYTES

/** `n` bytes from the CSPRNG (n ≤ 4,096), as `crypto.randomBytes(n)` gives them. */
export function randomBytesPooled (n: number): Buffer {
  if (!Number.isSafeInteger(n) || n < 0 || n > POOL_BYTES) throw new RangeError(`randomBytesPooled takes 0 to ${POOL_BYTES} bytes, not ${n}`)
  const out = Buffer.allocUnsafe(n)
  randomFillPooled(out)
  return out
}

/**
 * Fills `target` (at most 4,096 bytes) from the CSPRNG, as `crypto.randomFillSync(target)` does:
 * the writer puts a message's salt and random prefix straight where they go, no buffer of their own.
 */
export function randomFillPooled (target: Uint8Array): void {
  const n = target.byteLength
  if (n > POOL_BYTES) throw new RangeError(`randomFillPooled fills 0 to ${POOL_BYTES} bytes, not ${n}`)
  if (used + n > POOL_BYTES) {
    randomFillSync(pool)
    used = 0
  }
  target.set(pool.subarray(used, used + n))
  // zeroed as it is handed out: bytes given away never stay readable in the pool
  pool.fill(0, used, used + n)
  used += n
}
