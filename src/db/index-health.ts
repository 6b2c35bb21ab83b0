// Damage to the index database noticed while the daemon runs. A start finds a damaged manifest or
// log (openDatabase), but a garbled table is only read when a key in it is: LevelDB then answers
// "Corruption: …" (or an I/O error for a table file that went missing), and a value that no
// longer parses fails its decoding. Each becomes INDEX_CORRUPT (503, naming `hearth doctor`)
// where LevelDB raises it, for every reader of every namespace alike, and the first one is kept
// so status and /health can say the index is damaged. The rest of the daemon goes on: what the
// damage does not touch still reads and writes.
import type { ClassicLevel } from 'classic-level'
import { HearthError, isDiskFull } from '../errors.js'

export interface IndexDamage {
  errorCode: 'INDEX_CORRUPT'
  /** LevelDB's own words for the first damage noticed. */
  message: string
  /** When it was first noticed (ISO 8601). */
  since: string
  /** What to do about it. */
  repair: string
}

export interface IndexHealth {
  /** The first damage noticed since the database was opened, or null. */
  damage (): IndexDamage | null
  /** INDEX_CORRUPT (and the damage remembered) for a failure that is damage; anything else unchanged. */
  classify (err: unknown, op: 'read' | 'write'): unknown
}

const REPAIR = 'stop the daemon and run `hearth doctor` to repair the index (nothing in data/ or in storage is lost)'

export function createIndexHealth (location: string): IndexHealth {
  let damage: IndexDamage | null = null
  const note = (message: string, cause: unknown): HearthError => {
    damage ??= { errorCode: 'INDEX_CORRUPT', message, since: new Date().toISOString(), repair: REPAIR }
    return new HearthError('INDEX_CORRUPT', `the index database ${location} is damaged (${message}); ${REPAIR}`, { location }, { cause })
  }
  return {
    damage: () => damage,
    classify (err, op) {
      if (err instanceof HearthError) return err
      const code = (err as { code?: unknown } | null)?.code
      const message = String((err as { message?: unknown } | null)?.message ?? err).slice(0, 300)
      if (code === 'LEVEL_CORRUPTION') return note(message, err)
      // reading a table that is gone or unreadable; a write's I/O error is the disk's, not damage
      if (code === 'LEVEL_IO_ERROR' && op === 'read' && !isDiskFull(err)) return note(message, err)
      if (code === DECODE_FAILED) return note(message, err)
      return err
    }
  }
}

const DECODE_FAILED = 'HEARTH_INDEX_VALUE_UNREADABLE'

/**
 * The JSON value encoding of the index's namespaces, telling a stored value that no longer parses
 * (a garbled block LevelDB did not notice) apart from other failures. abstract-level wraps what a
 * decode throws as LEVEL_DECODE_ERROR with this as the cause.
 */
export function jsonValueEncoding (health: IndexHealth): { name: string; format: 'utf8'; encode (v: unknown): string; decode (s: string): unknown } {
  return {
    name: 'hearth-json',
    format: 'utf8',
    encode: (v) => JSON.stringify(v),
    decode (s) {
      try {
        return JSON.parse(s)
      } catch (err) {
        throw health.classify(Object.assign(new Error(`a stored value is not JSON: ${(err as Error).message}`), { code: DECODE_FAILED }), 'read')
      }
    }
  }
}

type Method = (...args: unknown[]) => unknown
// classic-level's implementation methods: the async ones answer a promise (and never throw), the
// others answer at once
const ASYNC_READS = ['_get', '_getMany', '_has', '_hasMany'] as const
const ASYNC_WRITES = ['_put', '_del', '_batch', '_clear'] as const
const ITERATOR_ASYNC = ['_next', '_nextv', '_all'] as const

/**
 * Routes every failure of `level`'s implementation methods through `health`. Sublevels and
 * iterators of every namespace end in these methods of the root (abstract-level's contract), so
 * this one place covers every reader. Each wrapper is one call and, for a promise, one `then`
 * (no bound copies, no argument arrays): every read and write of the index passes here.
 */
export function guardLevel (level: ClassicLevel<string, string>, health: IndexHealth): void {
  const target = level as unknown as Record<string, Method>
  const failedRead = (err: unknown): never => { throw health.classify(err, 'read') }
  const failedWrite = (err: unknown): never => { throw health.classify(err, 'write') }
  for (const name of ASYNC_READS) wrapAsync(target, name, failedRead)
  for (const name of ASYNC_WRITES) wrapAsync(target, name, failedWrite)
  wrapSync(target, '_getSync', failedRead)
  const makeIterator = target._iterator!
  target._iterator = function (this: unknown, options: unknown) {
    const iterator = makeIterator.call(level, options) as Record<string, Method>
    for (const name of ITERATOR_ASYNC) wrapAsync(iterator, name, failedRead)
    wrapSync(iterator, '_seek', failedRead)
    return iterator
  }
}

function wrapAsync (target: Record<string, Method>, name: string, failed: (err: unknown) => never): void {
  const original = target[name]
  if (typeof original !== 'function') return
  target[name] = function (a: unknown, b: unknown, c: unknown) {
    const result = original.call(target, a, b, c)
    return result instanceof Promise ? result.then(undefined, failed) : result
  }
}

function wrapSync (target: Record<string, Method>, name: string, failed: (err: unknown) => never): void {
  const original = target[name]
  if (typeof original !== 'function') return
  target[name] = function (a: unknown, b: unknown, c: unknown) {
    try {
      return original.call(target, a, b, c)
    } catch (err) {
      return failed(err)
    }
  }
}
