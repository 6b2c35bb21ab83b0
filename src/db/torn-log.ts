// LevelDB after a write that failed half-way (a full disk, an I/O error): its log is torn, and
// writes that then succeed are not safe until it is replaced. LevelDB's log writer counts a record
// as written even when the append failed (its position in the log's 32 KiB blocks moves on), and
// the file's buffer drops what it could not write; the next records land where the writer does not
// think they are. The running database reads them from memory, so nothing looks wrong, but a
// restart replays the log and drops what follows the tear: records the daemon had acknowledged
// (found with a full disk: the POST answered 201 after space returned was gone from the index
// after a clean stop). A failed sync is worse still: LevelDB then refuses every write until the
// database is opened again.
//
// So after any failed write the next write first rolls the log over: compactRange makes LevelDB
// write its memtable (every write that succeeded, none that failed) into a table and start a new
// log, and the torn one is deleted. Until that has worked, writes wait for it, and a write that
// completes meanwhile is not acknowledged before it either. The roll needs room for a table of the
// memtable's size: with less free space it is not tried (a table write that failed would leave
// LevelDB refusing writes until a restart), and writes fail with STORAGE_FULL, retried by their
// callers once space returns. Reads go on throughout.
import { statfs } from 'node:fs/promises'
import type { AbstractLevel } from 'abstract-level'
import { HearthError, isDiskFull } from '../errors.js'

/** LevelDB's default memtable (write buffer) size. */
const DEFAULT_WRITE_BUFFER = 4 * 1024 * 1024
// the root's write methods (abstract-level's contract: sublevels end in these)
const WRITES = ['_put', '_del', '_batch', '_clear'] as const
/** A key range that holds no key of Hearth's (sublevel keys begin with "!"): the roll compacts no table. */
const NO_KEYS = '\u0000'

type Method = (...args: unknown[]) => Promise<unknown>

export interface TornLogGuard {
  /** Whether a write failed and the log has not been rolled over since. */
  torn (): boolean
}

/**
 * Guards `level`'s writes against its log torn by a failed write (see above). `location` is where
 * its files are (the free space is read there); `writeBufferSize` its memtable's size.
 */
export function guardTornLog (level: AbstractLevel<any, any, any>, opts: { location: string; writeBufferSize?: number }): TornLogGuard {
  const needed = 2 * (opts.writeBufferSize ?? DEFAULT_WRITE_BUFFER) + 1024 * 1024
  let torn = false
  let rolling: Promise<void> | null = null
  const roll = async (): Promise<void> => {
    const { bavail, bsize } = await statfs(opts.location)
    if (bavail * bsize < needed) {
      throw new HearthError('STORAGE_FULL', `no space left on the disk for the database ${opts.location} to recover from a failed write (it needs ${Math.ceil(needed / 1024 / 1024)} MiB free): free some space; waiting work is retried and nothing already stored is lost`, { location: opts.location })
    }
    try {
      await (level as unknown as { compactRange: (a: string, b: string) => Promise<void> }).compactRange(NO_KEYS, NO_KEYS)
    } catch (err) {
      if (isDiskFull(err)) throw new HearthError('STORAGE_FULL', `no space left on the disk while the database ${opts.location} recovers from a failed write: free some space and restart the daemon`, { location: opts.location }, { cause: err })
      throw new HearthError('STORAGE_UNAVAILABLE', `the database ${opts.location} cannot recover from a failed write: restart the daemon`, { location: opts.location }, { cause: err })
    }
    torn = false
  }
  /** Resolves once the log is whole again (one roll at a time, shared by every write waiting). */
  const mended = async (): Promise<void> => {
    rolling ??= roll().finally(() => { rolling = null })
    await rolling
  }
  const target = level as unknown as Record<string, Method>
  for (const name of WRITES) {
    const original = target[name]
    if (typeof original !== 'function') continue
    const write = (a: unknown, b: unknown, c: unknown): Promise<unknown> => original.call(target, a, b, c).then(
      async (value) => { if (torn) await mended(); return value },
      (err) => { torn = true; throw err }
    )
    target[name] = function (a: unknown, b: unknown, c: unknown) {
      return torn ? mended().then(() => write(a, b, c)) : write(a, b, c)
    }
  }
  return { torn: () => torn }
}
