// Opens what the user points `hearth import` at — the downloaded zip, the folder it was unzipped
// into, a lone JSON file, several archives of one export, or a folder holding those archives —
// as one ExportSource, so connectors never care which it was.
import { createReadStream } from 'node:fs'
import { lstat, readdir, readFile, stat } from 'node:fs/promises'
import { basename, join, resolve } from 'node:path'
import { HearthError, isHearthError } from '../errors.js'
import { DEFAULT_MAX_JSON_VALUES, MAX_DATA_DEPTH, parseBoundedJson } from '../protocol/bounded-json.js'
import { jsonOfAssignment } from './js-assignment.js'
import { streamJsonValues, type RefusedRecord } from './json-stream.js'
import type { ExportEntry, ExportPart, ExportSource, SkippedEntry } from './types.js'
import { openZip, tooLarge, type ZipItem } from './zip.js'

/** JSON.parse needs the whole text in one string; V8 strings top out near 512 MiB. */
export const MAX_ENTRY_BYTES = 512 * 1024 * 1024
/** The most one streamed entry may inflate to: far above any real JSON, HTML or CSV file of an export. */
export const MAX_STREAM_BYTES = 8 * 1024 * 1024 * 1024
/**
 * Counted JSON values (object members, objects, arrays) in one export file read whole: a file is
 * many records (each checked on its own when submitted), bounded by MAX_ENTRY_BYTES; real files
 * take 20 bytes or more per value, so 512 MiB of them stay below this.
 */
export const MAX_EXPORT_FILE_VALUES = 25_000_000
/**
 * Counted JSON values in one streamed record of an export (a ChatGPT conversation as exported):
 * raw records carry what the connector leaves out (~35 values per ChatGPT message against ~8
 * kept), so the limit is four times a body's, about 57,000 messages in one conversation.
 */
export const MAX_EXPORT_RECORD_VALUES = 4 * DEFAULT_MAX_JSON_VALUES

export interface OpenExportOptions {
  /** A record of a streamed file that broke the depth, number or count rule and was left out. */
  onRefusedRecord?: (refused: RefusedRecord & { path: string }) => void
}

// Dates before 1981 are what zip tools write when they have no time (DOS epoch 1980-01-01).
const EARLIEST_REAL_TIME = Date.UTC(1981, 0, 1)

/** One archive, folder or file, opened. */
interface Backing {
  part: ExportPart
  entries: ExportEntry[]
  refused: SkippedEntry[]
  fallbackTime: Date
  openStream (entry: ExportEntry, maxBytes: number): Promise<AsyncIterable<Uint8Array>>
  readWhole (entry: ExportEntry): Promise<Uint8Array>
  close (): Promise<void>
}

/**
 * `locations`: one path or several. A folder whose files are all zip archives (the parts a
 * platform sent) opens as those archives; any other folder is an unzipped export.
 */
export async function openExport (locations: string | readonly string[], opts: OpenExportOptions = {}): Promise<ExportSource> {
  const list = typeof locations === 'string' ? [locations] : [...locations]
  if (list.length === 0) throw new HearthError('INVALID_ARGUMENT', 'no export given')
  const backings: Backing[] = []
  try {
    for (const location of list) {
      for (const b of await openLocation(resolve(location))) backings.push(b)
    }
  } catch (err) {
    await Promise.allSettled(backings.map(async (b) => await b.close()))
    throw err
  }
  return makeSource(backings, opts)
}

async function openLocation (abs: string): Promise<Backing[]> {
  let info
  try {
    info = await stat(abs)
  } catch (err) {
    const code = (err as NodeJS.ErrnoException).code
    if (code === 'ENOENT' || code === 'ENOTDIR') throw new HearthError('NOT_FOUND', `no such file or folder: ${abs}`, { path: abs })
    throw new HearthError('EXPORT_UNREADABLE', `cannot open ${abs}: ${(err as Error).message}`, { path: abs })
  }
  if (info.isDirectory()) {
    const archives = await archivesIn(abs)
    if (archives.length === 0) return [await openFolder(abs, info.mtime)]
    const opened: Backing[] = []
    try {
      for (const a of archives) opened.push(await openZipBacking(a, (await stat(a)).mtime))
    } catch (err) {
      await Promise.allSettled(opened.map(async (b) => await b.close()))
      throw err
    }
    return opened
  }
  if (!info.isFile()) throw new HearthError('EXPORT_UNREADABLE', `${abs} is neither a file nor a folder`, { path: abs })
  if (abs.toLowerCase().endsWith('.json')) return [openSingleFile(abs, info.size, info.mtime)]
  return [await openZipBacking(abs, info.mtime)]
}

/** The zip files of a folder that holds nothing else (noise aside), sorted; [] for any other folder. */
async function archivesIn (dir: string): Promise<string[]> {
  const zips: string[] = []
  for (const d of await readdir(dir, { withFileTypes: true })) {
    if (isNoise(d.name)) continue
    if (!d.isFile() || !d.name.toLowerCase().endsWith('.zip')) return []
    zips.push(join(dir, d.name))
  }
  return zips.sort()
}

function isNoise (path: string): boolean {
  const name = path.slice(path.lastIndexOf('/') + 1)
  return path.startsWith('__MACOSX/') || path.includes('/__MACOSX/') || name === '__MACOSX' || name === '.DS_Store' || name === 'Thumbs.db'
}

function latest (entries: readonly ExportEntry[], fallback: Date): string {
  let newest = -Infinity
  for (const e of entries) {
    const t = e.modifiedAt?.getTime()
    if (t !== undefined && t >= EARLIEST_REAL_TIME && t > newest) newest = t
  }
  const ms = Number.isFinite(newest) ? newest : fallback.getTime()
  return new Date(Math.floor(ms / 1000) * 1000).toISOString().replace('.000Z', 'Z')
}

const byPathOrder = (x: ExportEntry, y: ExportEntry): number => x.path < y.path ? -1 : x.path > y.path ? 1 : 0

function makeSource (backings: Backing[], opts: OpenExportOptions): ExportSource {
  // Parts form one tree. A path in two parts is read from the first (platforms repeat a few
  // index files in every part); the other copy is listed as refused.
  const owner = new Map<string, { entry: ExportEntry; backing: Backing }>()
  const refused: SkippedEntry[] = backings.flatMap((b) => b.refused.map((r) => ({ path: label(b, backings, r.path), reason: r.reason })))
  for (const b of backings) {
    for (const e of b.entries) {
      if (isNoise(e.path)) continue
      const first = owner.get(e.path)
      if (first === undefined) owner.set(e.path, { entry: e, backing: b })
      else refused.push({ path: label(b, backings, e.path), reason: `also in ${basename(first.backing.part.location)}; that copy is used` })
    }
  }
  const entries = [...owner.values()].map((o) => o.entry).sort(byPathOrder)
  const exportedAt = latest(entries, backings[0]!.fallbackTime)
  const opened = new Set<string>()
  const depth = (p: string): number => p.split('/').length
  const where = (path: string): string => backings.length === 1 ? `${path} in ${backings[0]!.part.location}` : `${path} in ${basename(owner.get(path)?.backing.part.location ?? '')}`

  function lookup (path: string): { entry: ExportEntry; backing: Backing } {
    const found = owner.get(path)
    if (found === undefined) throw new HearthError('NOT_FOUND', `no entry ${path} in ${backings.map((b) => b.part.location).join(', ')}`, { path })
    opened.add(path)
    return found
  }
  async function readBytes (path: string): Promise<Uint8Array> {
    const { entry, backing } = lookup(path)
    return await backing.readWhole(entry)
  }
  async function readText (path: string): Promise<string> {
    const text = Buffer.from(await readBytes(path)).toString('utf8')
    return text.charCodeAt(0) === 0xfeff ? text.slice(1) : text
  }
  async function * stream (path: string): AsyncGenerator<Uint8Array> {
    const { entry, backing } = lookup(path)
    yield * await backing.openStream(entry, MAX_STREAM_BYTES)
  }
  return {
    kind: backings.length === 1 ? backings[0]!.part.kind : 'parts',
    location: backings[0]!.part.location,
    exportedAt,
    parts: () => backings.map((b) => b.part),
    entries: () => entries,
    refused: () => refused,
    opened: () => opened,
    find (pattern) {
      const match = typeof pattern === 'string'
        ? (p: string) => p === pattern || p.endsWith('/' + pattern)
        : (p: string) => pattern.test(p)
      return entries.filter((e) => match(e.path)).sort((x, y) => depth(x.path) - depth(y.path) || (x.path < y.path ? -1 : 1))
    },
    readBytes,
    readText,
    async readJson (path) {
      const text = await readText(path)
      try {
        // the rules a request body has (depth, exact numbers), with a count for a whole file
        return parseBoundedJson(text, { maxDepth: MAX_DATA_DEPTH, maxValues: MAX_EXPORT_FILE_VALUES, subject: where(path) })
      } catch (err) {
        if (isHearthError(err, 'INVALID_JSON')) throw new HearthError('EXPORT_UNREADABLE', err.message, { path })
        if (isHearthError(err)) throw new HearthError(err.code, err.message, { ...err.details, file: path })
        throw err
      }
    },
    stream,
    streamJson: (path, streamOpts = {}) => streamJsonValues(streamOpts.jsAssignment === true ? jsonOfAssignment(stream(path), where(path)) : stream(path), {
      paths: streamOpts.paths ?? ['$.*'],
      what: where(path),
      maxValues: MAX_EXPORT_RECORD_VALUES,
      onRefused: (refused) => { opts.onRefusedRecord?.({ ...refused, path }) }
    }),
    async close () { await Promise.allSettled(backings.map(async (b) => await b.close())) }
  }
}

function label (b: Backing, all: readonly Backing[], path: string): string {
  return all.length === 1 ? path : `${basename(b.part.location)}:${path}`
}

async function openZipBacking (location: string, mtime: Date): Promise<Backing> {
  const zip = await openZip(location)
  const items = new Map<string, ZipItem>()
  const entries: ExportEntry[] = []
  for (const z of zip.entries) {
    const path = z.path.replace(/^\.\//, '')
    if (items.has(path)) continue // a duplicated name: the first one wins, as with unzip -n
    items.set(path, z)
    entries.push({ path, size: z.size, modifiedAt: z.modifiedAt })
  }
  const open = async (e: ExportEntry, maxBytes: number): Promise<AsyncIterable<Uint8Array>> => await zip.openStream(items.get(e.path)!, maxBytes)
  return {
    part: { kind: 'zip', location },
    entries,
    refused: [...zip.refused],
    fallbackTime: mtime,
    openStream: open,
    readWhole: async (e) => await collect(await open(e, MAX_ENTRY_BYTES), e.size),
    close: zip.close
  }
}

async function collect (chunks: AsyncIterable<Uint8Array>, expected: number): Promise<Buffer> {
  const parts: Uint8Array[] = []
  for await (const c of chunks) parts.push(c)
  return Buffer.concat(parts, expected)
}

async function openFolder (location: string, mtime: Date): Promise<Backing> {
  const entries: ExportEntry[] = []
  async function walk (dir: string, prefix: string): Promise<void> {
    for (const d of await readdir(dir, { withFileTypes: true })) {
      const full = join(dir, d.name)
      const rel = prefix + d.name
      // Symlinks are skipped: an export never contains them, and following one could read files
      // outside the folder the user pointed at.
      if (d.isDirectory()) await walk(full, rel + '/')
      else if (d.isFile()) {
        const s = await lstat(full)
        entries.push({ path: rel, size: s.size, modifiedAt: s.mtime })
      }
    }
  }
  try {
    await walk(location, '')
  } catch (err) {
    throw new HearthError('EXPORT_UNREADABLE', `cannot read folder ${location}: ${(err as Error).message}`, { path: location })
  }
  return localBacking({ kind: 'folder', location }, entries, mtime, (e) => join(location, ...e.path.split('/')))
}

function openSingleFile (location: string, size: number, mtime: Date): Backing {
  return localBacking({ kind: 'file', location }, [{ path: basename(location), size, modifiedAt: mtime }], mtime, () => location)
}

function localBacking (part: ExportPart, entries: ExportEntry[], mtime: Date, fileOf: (e: ExportEntry) => string): Backing {
  return {
    part,
    entries,
    refused: [],
    fallbackTime: mtime,
    async openStream (e, maxBytes) {
      if (e.size > maxBytes) throw tooLarge(part.location, e.path, e.size, maxBytes)
      return capped(createReadStream(fileOf(e)), fileOf(e), maxBytes)
    },
    async readWhole (e) {
      if (e.size > MAX_ENTRY_BYTES) throw tooLarge(part.location, e.path, e.size, MAX_ENTRY_BYTES)
      try {
        return await readFile(fileOf(e))
      } catch (err) {
        throw new HearthError('EXPORT_UNREADABLE', `cannot read ${fileOf(e)}: ${(err as Error).message}`, { path: fileOf(e) })
      }
    },
    close: async () => {}
  }
}

/** A file that grew after it was listed still stops at the limit. */
async function * capped (chunks: AsyncIterable<Uint8Array>, file: string, maxBytes: number): AsyncGenerator<Uint8Array> {
  let total = 0
  try {
    for await (const c of chunks) {
      total += c.length
      if (total > maxBytes) throw tooLarge(file, basename(file), total, maxBytes)
      yield c
    }
  } catch (err) {
    if (err instanceof HearthError) throw err
    throw new HearthError('EXPORT_UNREADABLE', `cannot read ${file}: ${(err as Error).message}`, { path: file })
  }
}
