// LevelDB after a write that failed half-way (a full disk, an I/O error): its log is torn, and
// writes that then succeed are not safe until it is replaced. LevelDB's log writer counts a record
// as written even when the append failed (its position in the log's 32 KiB blocks moves on), and
// the file's buffer drops what it could not write; the next records land where the writer does not
// think they are. The running database reads them from memory, so nothing looks wrong, but a
// restart replays the log and drops what follows the tear: records the daemon had acknowledged
// (found with a full disk: the POST answered 201 after space returned was gone from the index
// after a clean stop). And a table LevelDB failed to write (a memtable flushed or a compaction on
// the full disk) or a failed sync leaves it refusing every write until it is opened again.
//
// So after any failed write the next write first mends the database. The log is rolled over:
// compactRange makes LevelDB write its memtable (every write that succeeded, none that failed)
// into a table and start a new log, and the torn one is deleted. Whether that happened is checked
// (a newer log file, and a write accepted); if not, the database is closed and opened again
// (LevelDB's recovery: the log up to the tear into a table, a new log), its namespaces with it.
// Until that has worked, writes wait for it, and a write that completes meanwhile is not
// acknowledged before it either. Mending needs room for a table of the memtable's size: with less
// free space it is not tried and writes fail with STORAGE_FULL, retried by their callers once
// space returns. Reads go on throughout, but for the moment of a reopen.
import { readdir, statfs } from 'node:fs/promises'
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

/** Something the database holds open beside itself (a namespace), opened again after a reopen. */
export interface Reopenable { open (): Promise<void> }

/**
 * Guards `level`'s writes against its log torn by a failed write (see above). `location` is where
 * its files are (the free space is read there); `writeBufferSize` its memtable's size;
 * `namespaces` what to open again after the database was.
 */
export function guardTornLog (level: AbstractLevel<any, any, any>, opts: { location: string; writeBufferSize?: number; namespaces?: () => Iterable<Reopenable> }): TornLogGuard {
  const needed = 2 * (opts.writeBufferSize ?? DEFAULT_WRITE_BUFFER) + 1024 * 1024
  const target = level as unknown as Record<string, Method>
  const originals = new Map(WRITES.map((name) => [name, target[name]]))
  let torn = false
  let rolling: Promise<void> | null = null
  /** A write past the guard (the delete of a key that is not there): whether LevelDB takes writes. */
  const takesWrites = async (): Promise<boolean> => {
    try { await originals.get('_del')!.call(target, NO_KEYS, {}); return true } catch { return false }
  }
  const mend = async (): Promise<void> => {
    const { bavail, bsize } = await statfs(opts.location)
    if (bavail * bsize < needed) {
      throw new HearthError('STORAGE_FULL', `no space left on the disk for the database ${opts.location} to recover from a failed write (it needs ${Math.ceil(needed / 1024 / 1024)} MiB free): free some space; waiting work is retried and nothing already stored is lost`, { location: opts.location })
    }
    if (level.status === 'open') {
      const tornLog = await newestLog(opts.location)
      await (level as unknown as { compactRange: (a: string, b: string) => Promise<void> }).compactRange(NO_KEYS, NO_KEYS).catch(() => {})
      if ((await newestLog(opts.location)) > tornLog && await takesWrites()) return
    }
    try {
      await level.close()
      await level.open()
      for (const namespace of opts.namespaces?.() ?? []) await namespace.open()
    } catch (err) {
      if (isDiskFull(err)) throw new HearthError('STORAGE_FULL', `no space left on the disk while the database ${opts.location} is opened again after a failed write: free some space; waiting work is retried and nothing already stored is lost`, { location: opts.location }, { cause: err })
      throw new HearthError('STORAGE_UNAVAILABLE', `the database ${opts.location} cannot be opened again after a failed write: restart the daemon`, { location: opts.location }, { cause: err })
    }
    if (!await takesWrites()) throw new HearthError('STORAGE_UNAVAILABLE', `the database ${opts.location} refuses writes after a failed one, even opened again: restart the daemon`, { location: opts.location })
  }
  /** Resolves once the database takes writes safely again (one mending at a time, shared by every write waiting). */
  const mended = async (): Promise<void> => {
    rolling ??= mend().then(() => { torn = false }).finally(() => { rolling = null })
    await rolling
  }
  for (const name of WRITES) {
    const original = originals.get(name)
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

/** The number of the newest log file in a LevelDB folder (LevelDB names them NNNNNN.log), 0 for none. */
async function newestLog (location: string): Promise<number> {
  let newest = 0
  for (const name of await readdir(location)) {
    const m = /^(\d+)\.log$/.exec(name)
    if (m !== null) newest = Math.max(newest, Number(m[1]))
  }
  return newest
}
