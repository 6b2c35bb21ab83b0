// Zip archives through yauzl: the central directory is read once, entry by entry (lazyEntries),
// and single entries are inflated on demand as streams, so a multi-gigabyte export (Instagram
// media, ChatGPT images) costs only the bytes of the files a connector asks for, and a huge JSON
// entry is never held whole unless a connector asks for it whole.
//
// What a hostile archive can do is bounded here:
// - names are decoded as the entry's flag says (bit 11: UTF-8, else CP437; an Info-ZIP Unicode
//   path field wins when its CRC matches); a name that is absolute or climbs out with `..` is
//   refused and listed, never read;
// - inflation stops at the entry's declared size (a zip bomb that declares 100 bytes gets 100
//   bytes and an error) and at the caller's limit, checked against the declared size before
//   anything is inflated; the CRC-32 is checked at the end.
import { close as closeFd, fstat, open as openFd, read as readFd } from 'node:fs'
import { promisify } from 'node:util'
import { Readable, Transform, type TransformCallback } from 'node:stream'
import { crc32 } from 'node:zlib'
import yauzl, { type Entry, type ZipFile } from 'yauzl'
import { HearthError } from '../errors.js'

export interface ZipItem {
  /** The decoded name, '\\' turned into '/'. */
  readonly path: string
  readonly size: number
  readonly modifiedAt: Date | null
  readonly entry: Entry
}

export interface RefusedEntry {
  readonly path: string
  readonly reason: string
}

export interface ZipArchive {
  readonly path: string
  /** File entries (directories left out), in archive order. */
  readonly entries: readonly ZipItem[]
  /** Entries that are never read: names pointing outside the export. */
  readonly refused: readonly RefusedEntry[]
  /** The entry's bytes, inflated as they are read; the stream fails with EXPORT_TOO_LARGE past `maxBytes` or the declared size. */
  openStream (item: ZipItem, maxBytes: number): Promise<Readable>
  close (): Promise<void>
}

export function unreadable (path: string, why: string, extra?: Record<string, unknown>): HearthError {
  return new HearthError('EXPORT_UNREADABLE', `${path} is not a readable zip archive: ${why}`, { path, ...extra })
}

export function tooLarge (where: string, entry: string, size: number, maxBytes: number): HearthError {
  return new HearthError('EXPORT_TOO_LARGE', `${entry} in ${where} is ${size} bytes, more than the ${maxBytes} a connector may read`, { path: where, entry, size, limit: maxBytes })
}

/** Metadata reads (end record, central directory, local headers) are served from blocks of this size. */
const METADATA_BLOCK = 1024 * 1024

/**
 * yauzl's own file reader makes two positioned reads per central-directory entry; with 100,000
 * entries that is 200,000 thread-pool round trips (26 s here, bench/connectors-memory.ts). This
 * reader serves small reads from one cached 1 MiB block, read ahead, so the directory is read
 * in a few large reads; entry data still streams straight from the file.
 */
class BlockCachedReader extends yauzl.RandomAccessReader {
  private block = Buffer.alloc(0)
  private blockStart = 0
  constructor (private readonly fd: number) { super() }

  // Not fs.createReadStream: destroying one (yauzl does when a read is cut short) closes the
  // descriptor every other entry reads from, whatever autoClose says.
  override _readStreamForRange (start: number, end: number): Readable {
    const fd = this.fd
    let position = start
    return new Readable({
      highWaterMark: 64 * 1024,
      read (size) {
        const n = Math.min(size, end - position)
        if (n <= 0) { this.push(null); return }
        const buf = Buffer.allocUnsafe(n)
        readFd(fd, buf, 0, n, position, (err, bytes) => {
          if (err !== null) this.destroy(err)
          else if (bytes === 0) this.push(null)
          else { position += bytes; this.push(buf.subarray(0, bytes)) }
        })
      }
    })
  }

  override read (buffer: Buffer, offset: number, length: number, position: number, callback: (err: Error | null, bytesRead?: number) => void): void {
    const serve = (): void => {
      const from = position - this.blockStart
      const n = Math.max(0, Math.min(length, this.block.length - from))
      this.block.copy(buffer, offset, from, from + n)
      callback(null, n)
    }
    if (position >= this.blockStart && position + length <= this.blockStart + this.block.length) { setImmediate(serve); return }
    if (length > METADATA_BLOCK) {
      readFd(this.fd, buffer, offset, length, position, (err, n) => { callback(err, n) })
      return
    }
    const block = Buffer.allocUnsafe(METADATA_BLOCK)
    readFd(this.fd, block, 0, METADATA_BLOCK, position, (err, n) => {
      if (err !== null) { callback(err); return }
      this.block = block.subarray(0, n)
      this.blockStart = position
      serve()
    })
  }

  override close (callback: (err: Error | null) => void): void { closeFd(this.fd, callback) }
}

export async function openZip (path: string): Promise<ZipArchive> {
  // A plain descriptor, not a FileHandle: the reader owns it and closes it with the archive.
  const fd = await promisify(openFd)(path, 'r')
  const zip = await new Promise<ZipFile>((resolve, reject) => {
    const fail = (err: Error): void => { closeFd(fd, () => {}); reject(unreadable(path, describe(err.message))) }
    fstat(fd, (statErr, stats) => {
      if (statErr !== null) { fail(statErr); return }
      yauzl.fromRandomAccessReader(new BlockCachedReader(fd), stats.size, { lazyEntries: true, autoClose: false, decodeStrings: false, validateEntrySizes: true }, (err, z) => {
        if (err !== null) fail(err); else resolve(z)
      })
    })
  })
  const entries: ZipItem[] = []
  const refused: RefusedEntry[] = []
  try {
    await new Promise<void>((resolve, reject) => {
      zip.on('entry', (entry: Entry) => {
        const name = yauzl.getFileNameLowLevel(entry.generalPurposeBitFlag, entry.fileName as Buffer, entry.extraFields, false)
        const problem = yauzl.validateFileName(name)
        if (problem !== null) refused.push({ path: name, reason: `refused: the name points outside the export (${problem.replace(/:.*$/, '')})` })
        else if (!name.endsWith('/')) {
          const t = entry.getLastModDate()
          entries.push({ path: name, size: entry.uncompressedSize, modifiedAt: Number.isNaN(t.getTime()) ? null : t, entry })
        }
        forgetNameBytes(entry)
        zip.readEntry()
      })
      zip.once('end', () => resolve())
      zip.once('error', (err: Error) => reject(unreadable(path, describe(err.message))))
      zip.readEntry()
    })
  } catch (err) {
    zip.close()
    throw err
  }
  return {
    path,
    entries,
    refused,
    openStream: async (item, maxBytes) => await openEntryStream(zip, path, item, maxBytes),
    close: async () => { zip.close() }
  }
}

// 100,000 entries keep only what reading needs: the raw name, extra and comment bytes go.
function forgetNameBytes (entry: Entry): void {
  entry.fileName = ''
  entry.fileNameRaw = undefined
  entry.extraFieldRaw = undefined
  entry.fileCommentRaw = undefined
  entry.fileComment = undefined
  entry.comment = undefined
  entry.extraFields = []
}

function describe (message: string): string {
  if (/end of central directory record signature not found/i.test(message)) return 'no end-of-central-directory record (not a zip, or truncated)'
  if (/multi-disk/.test(message)) return 'multi-volume (split) archives are not supported; join the parts first'
  return message
}

async function openEntryStream (zip: ZipFile, path: string, item: ZipItem, maxBytes: number): Promise<Readable> {
  const { entry } = item
  const what = { entry: item.path }
  if (entry.isEncrypted()) throw unreadable(path, `entry ${item.path} is encrypted`, what)
  if (!entry.canDecodeFileData()) {
    throw unreadable(path, `entry ${item.path} uses compression method ${entry.compressionMethod}; only stored and deflate are supported`, what)
  }
  if (item.size > maxBytes) throw tooLarge(path, item.path, item.size, maxBytes)
  const raw = await new Promise<Readable>((resolve, reject) => {
    zip.openReadStream(entry, (err, stream) => { if (err !== null) reject(unreadable(path, `entry ${item.path}: ${err.message}`, what)); else resolve(stream) })
  })
  const guard = new EntryGuard(path, item, Math.min(item.size, maxBytes))
  raw.on('error', (err: Error) => {
    guard.destroy(/too many bytes/.test(err.message)
      ? inflatesPastDeclared(path, item)
      : unreadable(path, `entry ${item.path} does not inflate: ${err.message}`, what))
  })
  guard.on('close', () => { raw.destroy() })
  raw.pipe(guard)
  return guard
}

function inflatesPastDeclared (path: string, item: ZipItem): HearthError {
  return new HearthError('EXPORT_TOO_LARGE',
    `entry ${item.path} in ${path} inflates past the ${item.size} bytes it declares (a zip bomb?); nothing more is read from it`,
    { path, entry: item.path, size: item.size })
}

/** Counts and checksums what passes; stops at the declared size, and checks size and CRC-32 at the end. */
class EntryGuard extends Transform {
  private bytes = 0
  private crc = 0
  constructor (private readonly archive: string, private readonly item: ZipItem, private readonly cap: number) { super() }

  override _transform (chunk: Buffer, _enc: BufferEncoding, done: TransformCallback): void {
    this.bytes += chunk.length
    if (this.bytes > this.cap) { done(inflatesPastDeclared(this.archive, this.item)); return }
    this.crc = crc32(chunk, this.crc)
    done(null, chunk)
  }

  override _flush (done: TransformCallback): void {
    if (this.bytes !== this.item.size || (this.crc >>> 0) !== (this.item.entry.crc32 >>> 0)) {
      done(unreadable(this.archive, `entry ${this.item.path} is corrupt (size or CRC-32 mismatch)`, { entry: this.item.path }))
      return
    }
    done()
  }
}
