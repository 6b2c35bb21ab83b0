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
const READS = ['_get', '_getSync', '_getMany', '_has', '_hasMany'] as const
const WRITES = ['_put', '_del', '_batch', '_clear'] as const
const ITERATOR_READS = ['_next', '_nextv', '_all', '_seek'] as const

/**
 * Routes every failure of `level`'s implementation methods through `health`. Sublevels and
 * iterators of every namespace end in these methods of the root (abstract-level's contract), so
 * this one place covers every reader.
 */
export function guardLevel (level: ClassicLevel<string, string>, health: IndexHealth): void {
  const target = level as unknown as Record<string, Method>
  for (const name of [...READS, ...WRITES]) wrap(target, name, health, READS.includes(name as typeof READS[number]) ? 'read' : 'write')
  const makeIterator = target._iterator!.bind(level)
  target._iterator = (...args) => {
    const iterator = makeIterator(...args) as Record<string, Method>
    for (const name of ITERATOR_READS) if (typeof iterator[name] === 'function') wrap(iterator, name, health, 'read')
    return iterator
  }
}

function wrap (target: Record<string, Method>, name: string, health: IndexHealth, op: 'read' | 'write'): void {
  const original = target[name]
  if (typeof original !== 'function') return
  const bound = original.bind(target)
  target[name] = (...args) => {
    let result: unknown
    try {
      result = bound(...args)
    } catch (err) {
      throw health.classify(err, op)
    }
    if (result instanceof Promise) return result.catch((err: unknown) => { throw health.classify(err, op) })
    return result
  }
}
