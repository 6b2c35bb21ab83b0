// A random-access zip reader. It reads the central directory once and inflates single entries
// on demand, so a multi-gigabyte export (Instagram media, ChatGPT images) costs only the bytes
// of the JSON files a connector asks for. Inflation uses node:zlib's asynchronous inflateRaw,
// which runs on libuv's thread pool instead of blocking the daemon's event loop (bench/connectors-zip.ts
// compares it with fflate). Supports stored and deflated entries, ZIP64, data descriptors and
// the extended-timestamp field; rejects encrypted entries and other compression methods.
import { open, type FileHandle } from 'node:fs/promises'
import { inflateRaw, crc32 } from 'node:zlib'
import { promisify } from 'node:util'
import { HearthError } from '../errors.js'

const inflateRawAsync = promisify(inflateRaw)

const SIG_EOCD = 0x06054b50
const SIG_ZIP64_LOCATOR = 0x07064b50
const SIG_ZIP64_EOCD = 0x06064b50
const SIG_CENTRAL = 0x02014b50
const SIG_LOCAL = 0x04034b50
const EOCD_SIZE = 22
const MAX_COMMENT = 0xffff
const EXTRA_ZIP64 = 0x0001
const EXTRA_TIMESTAMP = 0x5455
const FLAG_ENCRYPTED = 0x1
const METHOD_STORED = 0
const METHOD_DEFLATED = 8
/** JSON.parse needs the whole text in one string; V8 strings top out near 512 MiB. */
export const MAX_ENTRY_BYTES = 512 * 1024 * 1024

export interface ZipEntry {
  /** The name as stored, '\\' turned into '/'. */
  name: string
  compressedSize: number
  size: number
  crc: number
  method: number
  flags: number
  localHeaderOffset: number
  modifiedAt: Date | null
}

export interface ZipArchive {
  readonly path: string
  readonly entries: readonly ZipEntry[]
  read (entry: ZipEntry): Promise<Buffer>
  close (): Promise<void>
}

/** True when the file's last bytes hold a zip end-of-central-directory record. */
export async function looksLikeZip (path: string): Promise<boolean> {
  const fh = await open(path, 'r')
  try {
    const { size } = await fh.stat()
    return findEocd(await readTail(fh, size)) >= 0
  } finally { await fh.close() }
}

export async function openZip (path: string): Promise<ZipArchive> {
  const fh = await open(path, 'r')
  try {
    const { size } = await fh.stat()
    const entries = await readCentralDirectory(fh, size, path)
    return {
      path,
      entries,
      read: async (entry) => await readEntry(fh, size, entry, path),
      close: async () => { await fh.close() }
    }
  } catch (err) {
    await fh.close()
    throw err
  }
}

function unreadable (path: string, why: string, extra?: Record<string, unknown>): HearthError {
  return new HearthError('EXPORT_UNREADABLE', `${path} is not a readable zip archive: ${why}`, { path, ...extra })
}

async function readAt (fh: FileHandle, position: number, length: number): Promise<Buffer> {
  const buf = Buffer.alloc(length)
  let done = 0
  while (done < length) {
    const { bytesRead } = await fh.read(buf, done, length - done, position + done)
    if (bytesRead === 0) break
    done += bytesRead
  }
  return done === length ? buf : buf.subarray(0, done)
}

async function readTail (fh: FileHandle, size: number): Promise<{ buf: Buffer; start: number }> {
  const len = Math.min(size, EOCD_SIZE + MAX_COMMENT + 20)
  return { buf: await readAt(fh, size - len, len), start: size - len }
}

function findEocd ({ buf }: { buf: Buffer }): number {
  for (let i = buf.length - EOCD_SIZE; i >= 0; i--) {
    // The comment length must reach exactly to the end of the file, which rules out the
    // signature bytes appearing by chance inside an entry's data.
    if (buf.readUInt32LE(i) === SIG_EOCD && i + EOCD_SIZE + buf.readUInt16LE(i + 20) === buf.length) return i
  }
  return -1
}

async function readCentralDirectory (fh: FileHandle, fileSize: number, path: string): Promise<ZipEntry[]> {
  const tail = await readTail(fh, fileSize)
  const at = findEocd(tail)
  if (at < 0) throw unreadable(path, 'no end-of-central-directory record (not a zip, or truncated)')
  const eocd = tail.buf
  let count = eocd.readUInt16LE(at + 10)
  let cdSize = eocd.readUInt32LE(at + 12)
  let cdOffset = eocd.readUInt32LE(at + 16)
  if (eocd.readUInt16LE(at + 4) !== 0 || eocd.readUInt16LE(at + 6) !== 0) {
    throw unreadable(path, 'multi-volume (split) archives are not supported; join the parts first')
  }
  if (count === 0xffff || cdSize === 0xffffffff || cdOffset === 0xffffffff) {
    const locatorAt = at - 20
    if (locatorAt < 0 || eocd.readUInt32LE(locatorAt) !== SIG_ZIP64_LOCATOR) throw unreadable(path, 'ZIP64 locator missing')
    const z64Offset = Number(eocd.readBigUInt64LE(locatorAt + 8))
    const z64 = await readAt(fh, z64Offset, 56)
    if (z64.length < 56 || z64.readUInt32LE(0) !== SIG_ZIP64_EOCD) throw unreadable(path, 'ZIP64 end record missing')
    count = Number(z64.readBigUInt64LE(32))
    cdSize = Number(z64.readBigUInt64LE(40))
    cdOffset = Number(z64.readBigUInt64LE(48))
  }
  if (cdOffset + cdSize > fileSize) throw unreadable(path, 'central directory lies beyond the end of the file (truncated download?)')
  const cd = await readAt(fh, cdOffset, cdSize)
  const entries: ZipEntry[] = []
  let p = 0
  for (let i = 0; i < count; i++) {
    if (p + 46 > cd.length || cd.readUInt32LE(p) !== SIG_CENTRAL) throw unreadable(path, `central directory entry ${i + 1} of ${count} is damaged`)
    const flags = cd.readUInt16LE(p + 8)
    const method = cd.readUInt16LE(p + 10)
    const dosTime = cd.readUInt16LE(p + 12)
    const dosDate = cd.readUInt16LE(p + 14)
    const crc = cd.readUInt32LE(p + 16)
    let compressedSize = cd.readUInt32LE(p + 20)
    let size = cd.readUInt32LE(p + 24)
    const nameLen = cd.readUInt16LE(p + 28)
    const extraLen = cd.readUInt16LE(p + 30)
    const commentLen = cd.readUInt16LE(p + 32)
    let localHeaderOffset = cd.readUInt32LE(p + 42)
    const end = p + 46 + nameLen + extraLen + commentLen
    if (end > cd.length) throw unreadable(path, `central directory entry ${i + 1} of ${count} is damaged`)
    // Names are decoded as UTF-8 whether or not flag bit 11 says so: the exports connectors read
    // are written by tools that use UTF-8, and CP437 names would only garble non-ASCII paths.
    const name = cd.toString('utf8', p + 46, p + 46 + nameLen).replaceAll('\\', '/')
    let modifiedAt = dosDateTime(dosDate, dosTime)
    let x = p + 46 + nameLen
    const extraEnd = x + extraLen
    while (x + 4 <= extraEnd) {
      const id = cd.readUInt16LE(x)
      const len = cd.readUInt16LE(x + 2)
      const body = x + 4
      if (body + len > extraEnd) break
      if (id === EXTRA_ZIP64) {
        let q = body
        if (size === 0xffffffff && q + 8 <= body + len) { size = Number(cd.readBigUInt64LE(q)); q += 8 }
        if (compressedSize === 0xffffffff && q + 8 <= body + len) { compressedSize = Number(cd.readBigUInt64LE(q)); q += 8 }
        if (localHeaderOffset === 0xffffffff && q + 8 <= body + len) { localHeaderOffset = Number(cd.readBigUInt64LE(q)) }
      } else if (id === EXTRA_TIMESTAMP && len >= 5 && (cd.readUInt8(body) & 1) === 1) {
        // The extended timestamp is UTC seconds, exact where the DOS time is local and 2 s coarse.
        modifiedAt = new Date(cd.readInt32LE(body + 1) * 1000)
      }
      x = body + len
    }
    entries.push({ name, compressedSize, size, crc, method, flags, localHeaderOffset, modifiedAt })
    p = end
  }
  return entries
}

// DOS times carry no zone. unzip (and every desktop extractor) restores them as local time, so
// reading them as local time gives a zip entry the same mtime as the file unzipped from it.
function dosDateTime (date: number, time: number): Date | null {
  if (date === 0) return null
  const d = new Date((date >> 9) + 1980, ((date >> 5) & 0xf) - 1, date & 0x1f, time >> 11, (time >> 5) & 0x3f, (time & 0x1f) * 2)
  return Number.isNaN(d.getTime()) ? null : d
}

async function readEntry (fh: FileHandle, fileSize: number, entry: ZipEntry, path: string): Promise<Buffer> {
  const what = { entry: entry.name }
  if ((entry.flags & FLAG_ENCRYPTED) !== 0) throw unreadable(path, `entry ${entry.name} is encrypted`, what)
  if (entry.method !== METHOD_STORED && entry.method !== METHOD_DEFLATED) {
    throw unreadable(path, `entry ${entry.name} uses compression method ${entry.method}; only stored and deflate are supported`, what)
  }
  if (entry.size > MAX_ENTRY_BYTES) {
    throw unreadable(path, `entry ${entry.name} is ${entry.size} bytes, more than the ${MAX_ENTRY_BYTES} a connector can read at once`, what)
  }
  const local = await readAt(fh, entry.localHeaderOffset, 30)
  if (local.length < 30 || local.readUInt32LE(0) !== SIG_LOCAL) throw unreadable(path, `local header of ${entry.name} is damaged`, what)
  const dataStart = entry.localHeaderOffset + 30 + local.readUInt16LE(26) + local.readUInt16LE(28)
  if (dataStart + entry.compressedSize > fileSize) throw unreadable(path, `entry ${entry.name} is cut off (truncated download?)`, what)
  const compressed = await readAt(fh, dataStart, entry.compressedSize)
  let data: Buffer
  if (entry.method === METHOD_STORED) data = compressed
  else {
    try {
      data = await inflateRawAsync(compressed)
    } catch (err) {
      throw unreadable(path, `entry ${entry.name} does not inflate: ${(err as Error).message}`, what)
    }
  }
  if (data.length !== entry.size || (crc32(data) >>> 0) !== entry.crc) {
    throw unreadable(path, `entry ${entry.name} is corrupt (size or CRC-32 mismatch)`, what)
  }
  return data
}
