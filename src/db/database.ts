// The one LevelDB of a Hearth home (<home>/index). Every component that persists something small
// (file index, queues, schema cache, proxy cache, sync cursors, chain state) gets its own named
// sublevel of this database, so a single batch can stay atomic across them and a restart opens one
// thing. Nothing here caches per-key state in memory: reads go to LevelDB.
import { ClassicLevel } from 'classic-level'
import type { AbstractBatchOperation, AbstractSublevel } from 'abstract-level'
import { HearthError, isDiskFull } from '../errors.js'
import { createIndexHealth, guardLevel, jsonValueEncoding, type IndexDamage } from './index-health.js'
import { guardTornLog } from './torn-log.js'

export type RootLevel = ClassicLevel<string, string>
/** A namespace of the database with string keys and values of type V (JSON, utf8 or bytes). */
export type Sublevel<V> = AbstractSublevel<RootLevel, string | Buffer | Uint8Array, string, V>

/** `view`: values are bytes (Uint8Array), stored as they are. */
export type ValueEncoding = 'json' | 'utf8' | 'view'

/** One write of an atomic multi-namespace batch. */
export type BatchOp =
  | { type: 'put'; sublevel: Sublevel<any>; key: string; value: unknown }
  | { type: 'del'; sublevel: Sublevel<any>; key: string }

export interface HearthDatabase {
  /** Folder of the LevelDB. */
  readonly location: string
  /** The underlying classic-level, for atomic batches across sublevels (`{ type, key, value, sublevel }`). */
  readonly level: RootLevel
  /**
   * The sublevel `name` (a path of names nests: `['kv', 'schemas']`). Names use printable ASCII
   * above `"` (abstract-level's rule); the same name always returns the same namespace.
   */
  sublevel<V = unknown>(name: string | string[], options?: { valueEncoding?: ValueEncoding }): Sublevel<V>
  /**
   * Apply writes to any sublevels atomically: after a crash either all of them or none are there.
   * `sync: true` also waits for the OS to flush (survives power loss, not only a killed process).
   */
  batch(ops: BatchOp[], options?: { sync?: boolean }): Promise<void>
  /**
   * The values of keys of any sublevels (undefined where absent), in their order, in one read of
   * LevelDB instead of one per sublevel; each decoded by its sublevel's value encoding.
   */
  getMany(reads: ReadonlyArray<{ sublevel: Sublevel<any>; key: string }>): Promise<unknown[]>
  /**
   * getMany answered at once on this thread: for a few keys that are in memory (the memtable, the
   * block cache, a bloom filter saying absent) it costs far less than the hand-off of a read to
   * libuv's pool and back; a key whose block is on disk blocks the thread meanwhile.
   */
  getManySync(reads: ReadonlyArray<{ sublevel: Sublevel<any>; key: string }>): unknown[]
  /**
   * The first damage LevelDB reported since the database was opened (a garbled table read while
   * running), or null. Every read or write that meets damage fails with INDEX_CORRUPT.
   */
  damage(): IndexDamage | null
  close(): Promise<void>
}

const SUBLEVEL_NAME = /^[#-~]+$/

export interface OpenDatabaseOptions {
  createIfMissing?: boolean
  /** LevelDB memtable size in bytes (default 4 MiB); larger means fewer, bigger flushes. */
  writeBufferSize?: number
  /** LevelDB block cache in bytes (default 8 MiB). */
  cacheSize?: number
  /**
   * Table files kept open (default 1000). Each open table keeps its block index and bloom filter
   * in memory (~12 bytes per indexed file, measured by bench/index.ts), so this caps the only
   * memory that grows with the data, at roughly 2 GB of database.
   */
  maxOpenFiles?: number
}

export async function openDatabase (dir: string, options: OpenDatabaseOptions = {}): Promise<HearthDatabase> {
  const level: RootLevel = new ClassicLevel<string, string>(dir, {
    keyEncoding: 'utf8',
    valueEncoding: 'utf8',
    ...(options.writeBufferSize !== undefined ? { writeBufferSize: options.writeBufferSize } : {}),
    ...(options.cacheSize !== undefined ? { cacheSize: options.cacheSize } : {}),
    ...(options.maxOpenFiles !== undefined ? { maxOpenFiles: options.maxOpenFiles } : {})
  })
  try {
    await level.open({ createIfMissing: options.createIfMissing ?? true })
  } catch (err) {
    const locked = (err as { cause?: { code?: unknown } }).cause?.code === 'LEVEL_LOCKED'
    if (isDiskFull(err)) {
      throw new HearthError('STORAGE_FULL', `cannot open the index database ${dir}: the disk is full; free some space and start again`, { location: dir }, { cause: err })
    }
    if (!locked && isCorruption(err)) {
      throw new HearthError('INDEX_CORRUPT', `the index database ${dir} is damaged (${causeMessage(err)}); stop the daemon and run \`hearth doctor\` to repair it`, { location: dir }, { cause: err })
    }
    throw new HearthError(locked ? 'DAEMON_LOCKED' : 'INTERNAL',
      locked ? `the index database ${dir} is in use by another process` : `cannot open the index database ${dir}`,
      { location: dir }, { cause: err })
  }
  const health = createIndexHealth(dir)
  guardLevel(level, health)
  const json = jsonValueEncoding(health)
  // One instance per namespace: the guard opens each again after it reopened the database.
  const namespaces = new Map<string, Sublevel<any>>()
  guardTornLog(level, { location: dir, writeBufferSize: options.writeBufferSize, namespaces: () => namespaces.values() })
  return {
    location: dir,
    level,
    sublevel<V> (name: string | string[], opts: { valueEncoding?: ValueEncoding } = {}): Sublevel<V> {
      const names = Array.isArray(name) ? name : [name]
      if (names.length === 0 || !names.every((n) => SUBLEVEL_NAME.test(n) && !n.includes('!'))) {
        throw new HearthError('INVALID_ARGUMENT', `invalid sublevel name ${JSON.stringify(name)}`)
      }
      const valueEncoding = opts.valueEncoding ?? 'json'
      const key = `${valueEncoding} ${names.join('!')}`
      let sub = namespaces.get(key)
      if (sub === undefined) {
        sub = level.sublevel<string, V>(names, { keyEncoding: 'utf8', valueEncoding: (valueEncoding === 'json' ? json : valueEncoding) as 'utf8' })
        namespaces.set(key, sub)
      }
      return sub as Sublevel<V>
    },
    async batch (ops, batchOptions = {}) {
      if (ops.length === 0) return
      // Each op carries its sublevel, which encodes its own key and value; the root's string
      // typing does not know that, hence the widening.
      const list = ops as unknown as Array<AbstractBatchOperation<RootLevel, string, string>>
      // Options are passed only when needed: abstract-level spreads them into every op, and an
      // options object on the first batches made every later op ~4x slower (V8 inline caches).
      if (batchOptions.sync === true) await level.batch(list, { sync: true })
      else await level.batch(list)
    },
    async getMany (reads) {
      if (reads.length === 0) return []
      return decodeAll(reads, await level.getMany(rootKeys(reads)))
    },
    getManySync (reads) {
      const keys = rootKeys(reads)
      const values = new Array<unknown>(keys.length)
      for (let i = 0; i < keys.length; i++) values[i] = level.getSync(keys[i]!)
      return decodeAll(reads, values)
    },
    damage: () => health.damage(),
    async close () {
      await level.close()
    }
  }
}

type Reads = ReadonlyArray<{ sublevel: Sublevel<any>; key: string }>

/** The root's keys of reads across sublevels (the root reads text: a sublevel of binary values is read on its own). */
function rootKeys (reads: Reads): string[] {
  const keys = new Array<string>(reads.length)
  for (let i = 0; i < reads.length; i++) {
    const { sublevel, key } = reads[i]!
    if (sublevel.valueEncoding().format !== 'utf8') throw new HearthError('INVALID_ARGUMENT', 'getMany across sublevels reads text values only')
    keys[i] = sublevel.prefixKey(key, 'utf8')
  }
  return keys
}

/** Each value read by the root decoded by its own sublevel's encoding, in place. */
function decodeAll (reads: Reads, values: unknown[]): unknown[] {
  for (let i = 0; i < values.length; i++) {
    const value = values[i]
    if (value !== undefined) values[i] = reads[i]!.sublevel.valueEncoding().decode(value as string)
  }
  return values
}

/** Whether LevelDB refused because its files are damaged (not because of a lock or a full disk). */
export function isCorruption (err: unknown): boolean {
  for (let e = err, depth = 0; e !== null && e !== undefined && depth < 8; e = (e as { cause?: unknown }).cause, depth++) {
    if ((e as { code?: unknown }).code === 'LEVEL_CORRUPTION') return true
    if (/corruption|IO error|checksum mismatch|bad magic|truncated/i.test(String((e as { message?: unknown }).message ?? ''))) return true
  }
  return false
}

function causeMessage (err: unknown): string {
  let e = err as { cause?: unknown; message?: string }
  while (e.cause !== undefined && e.cause !== null) e = e.cause as { cause?: unknown; message?: string }
  return String(e.message ?? err).slice(0, 300)
}

/** A small typed key-value namespace for components that only need get/put/del/list. */
export interface Kv<T> {
  get(key: string): Promise<T | undefined>
  put(key: string, value: T): Promise<void>
  del(key: string): Promise<void>
  /** Entries in key order (byte order of the UTF-8 key), optionally only keys starting with `prefix`. */
  entries(options?: { prefix?: string; limit?: number; reverse?: boolean }): AsyncIterable<[string, T]>
}

/** Past every UTF-8 continuation of a prefix: U+10FFFF is the largest code point. */
export const PREFIX_END = '\u{10FFFF}'

/** Key-value namespace `name`, stored as the sublevel ['kv', name] (JSON values). */
export function openKv<T> (db: HearthDatabase, name: string): Kv<T> {
  const sub = db.sublevel<T>(['kv', name])
  return {
    async get (key) { return await sub.get(key) },
    async put (key, value) {
      if (value === undefined) throw new HearthError('INVALID_ARGUMENT', 'cannot store undefined')
      await sub.put(key, value)
    },
    async del (key) { await sub.del(key) },
    entries (options = {}) {
      const range = options.prefix === undefined || options.prefix === ''
        ? {}
        : { gte: options.prefix, lt: options.prefix + PREFIX_END }
      return sub.iterator({ ...range, limit: options.limit ?? -1, reverse: options.reverse ?? false })
    }
  }
}
