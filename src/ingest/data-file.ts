// The one rule for reading a file of the data folder, used by every path that does (the initial
// scan, the watcher, a write's duplicate check, reading a version back, `hearth doctor`):
//   - it (and every symlink on the way) must resolve inside the data folder;
//   - what is opened must be a regular file: a FIFO, socket or device — directly or behind a
//     symlink — is refused without blocking (opened O_NONBLOCK, checked with fstat on the same
//     descriptor, so a swap between check and read cannot slip one in);
//   - it must not be larger than the limit, checked before reading and again while reading (a
//     sparse 1 GB file costs one fstat, and a file that grows is cut off at the limit).
import { hash } from 'node:crypto'
import { open, constants } from 'node:fs/promises'
import { openSync, fstatSync, readSync, closeSync } from 'node:fs'
import { join } from 'node:path'
import { HearthError } from '../errors.js'
import { mtimeMsOf } from '../storage/file-times.js'
import { resolveInsideData } from './layout.js'

/** Default largest data file read, equal to the API's default body limit. */
export const DEFAULT_MAX_FILE_BYTES = 16 * 1024 * 1024

export interface DataFile {
  bytes: Uint8Array
  size: number
  mtimeMs: number
}

const CHUNK = 256 * 1024

/**
 * Reads `rel` (relative to the data folder). Throws PATH_OUTSIDE_DATA, FILE_UNREADABLE (not a
 * regular file) or FILE_TOO_LARGE as HearthErrors; filesystem errors (ENOENT, EACCES...) as they are.
 */
export async function readDataFile (dataDir: string, rel: string, opts: { maxBytes: number }): Promise<DataFile> {
  const real = await resolveInsideData(dataDir, rel)
  // O_NONBLOCK: opening a FIFO for reading otherwise waits for a writer, forever.
  const fh = await open(real, constants.O_RDONLY | constants.O_NONBLOCK | constants.O_NOFOLLOW)
  try {
    const exact = await fh.stat({ bigint: true })
    const st = { size: Number(exact.size), mtimeMs: mtimeMsOf(exact) }
    if (!exact.isFile()) {
      throw new HearthError('FILE_UNREADABLE', `${rel} is not a regular file`, { path: rel, reasons: ['not a regular file (a FIFO, socket or device, or a link to one)'] })
    }
    if (st.size > opts.maxBytes) throw tooLarge(rel, st.size, opts.maxBytes)
    const chunks: Buffer[] = []
    let total = 0
    // a first read one byte larger than the size fstat gave: when it returns that size, the
    // short read is the end of the file (nearly every file is one read, no second one to see EOF)
    let first = Math.min(st.size + 1, CHUNK, opts.maxBytes + 1)
    for (;;) {
      const buf = Buffer.allocUnsafe(first > 0 ? first : Math.min(CHUNK, opts.maxBytes + 1 - total))
      const { bytesRead } = await fh.read(buf, 0, buf.byteLength, null)
      if (bytesRead === 0) break
      total += bytesRead
      if (total > opts.maxBytes) throw tooLarge(rel, total, opts.maxBytes)
      chunks.push(bytesRead === buf.byteLength ? buf : buf.subarray(0, bytesRead))
      if (first > 0 && bytesRead < first && total >= st.size) break
      first = 0
    }
    return { bytes: chunks.length === 1 ? chunks[0]! : Buffer.concat(chunks, total), size: total, mtimeMs: st.mtimeMs }
  } finally {
    await fh.close()
  }
}

/** A synchronous read of a small file: its bytes, `missing`, or null when readDataFile must decide. */
export type SmallRead = DataFile | 'missing' | null

// O_NOATIME: reading a file just written would otherwise dirty its inode (atime), a journal
// write that can wait behind a running sync of the filesystem; only the owner may ask for it.
const SMALL_READ_FLAGS = constants.O_RDONLY | constants.O_NONBLOCK | constants.O_NOFOLLOW

/**
 * Reads `name` from `realDir` (a scope folder already resolved inside the data folder) on the
 * calling thread, for files the watcher has just seen written: their inode and pages are cached,
 * so open, fstat, read and close cost microseconds, where four thread-pool round trips cost tens
 * of microseconds of CPU each. The same rule as readDataFile: the name itself must not be a
 * symlink (O_NOFOLLOW; a symlink is left to readDataFile, which resolves it), what is opened must
 * be a regular file, opened without blocking. Null for anything but a regular file of at most
 * `maxBytes` (readDataFile reads or refuses it), and for a file that grew while being read.
 */
export function readSmallDataFileSync (realDir: string, name: string, maxBytes: number): SmallRead {
  const path = join(realDir, name)
  let fd: number
  try {
    try {
      fd = openSync(path, SMALL_READ_FLAGS | constants.O_NOATIME)
    } catch (err) {
      if ((err as NodeJS.ErrnoException).code !== 'EPERM') throw err
      fd = openSync(path, SMALL_READ_FLAGS) // not the file's owner: no O_NOATIME
    }
  } catch (err) {
    return (err as NodeJS.ErrnoException).code === 'ENOENT' ? 'missing' : null
  }
  try {
    const exact = fstatSync(fd, { bigint: true })
    const st = { size: Number(exact.size), mtimeMs: mtimeMsOf(exact) }
    if (!exact.isFile() || st.size > maxBytes) return null
    const buf = Buffer.allocUnsafe(st.size + 1)
    const bytesRead = readSync(fd, buf, 0, buf.byteLength, null)
    if (bytesRead > st.size) return null
    return { bytes: buf.subarray(0, bytesRead), size: bytesRead, mtimeMs: st.mtimeMs }
  } catch {
    return null
  } finally {
    closeSync(fd)
  }
}

/** The bytes of `rel` when it is a readable data file of at most `maxBytes`, else null. */
export async function readDataFileOrNull (dataDir: string, rel: string, maxBytes: number): Promise<Uint8Array | null> {
  try {
    return (await readDataFile(dataDir, rel, { maxBytes })).bytes
  } catch {
    return null
  }
}

function tooLarge (rel: string, size: number, maxBytes: number): HearthError {
  return new HearthError('FILE_TOO_LARGE', `${rel} is larger than the ${maxBytes}-byte limit for data files (ingest.maxFileBytes)`,
    { path: rel, size, maxBytes, reasons: [`${size} bytes or more; the limit is ${maxBytes} (ingest.maxFileBytes)`] })
}

/** The SHA-256 a data file's record holds (hex). */
export function sha256Hex (bytes: Uint8Array): string {
  // the one-shot digest: no Hash object per file (~0.7 of 1.5 µs for 1 KB)
  return hash('sha256', bytes, 'hex')
}
