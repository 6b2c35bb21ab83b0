// Opens what the user points `hearth import` at — the downloaded zip, the folder it was unzipped
// into, or a lone JSON file — as one ExportSource, so connectors never care which it was.
import { lstat, readdir, readFile, stat } from 'node:fs/promises'
import { basename, join, resolve } from 'node:path'
import { HearthError } from '../errors.js'
import type { ExportEntry, ExportSource } from './types.js'
import { MAX_ENTRY_BYTES, openZip, type ZipEntry } from './zip.js'

// Dates before 1981 are what zip tools write when they have no time (DOS epoch 1980-01-01).
const EARLIEST_REAL_TIME = Date.UTC(1981, 0, 1)

export async function openExport (location: string): Promise<ExportSource> {
  const abs = resolve(location)
  let info
  try {
    info = await stat(abs)
  } catch (err) {
    const code = (err as NodeJS.ErrnoException).code
    if (code === 'ENOENT' || code === 'ENOTDIR') throw new HearthError('NOT_FOUND', `no such file or folder: ${abs}`, { path: abs })
    throw new HearthError('EXPORT_UNREADABLE', `cannot open ${abs}: ${(err as Error).message}`, { path: abs })
  }
  if (info.isDirectory()) return await openFolder(abs, info.mtime)
  if (!info.isFile()) throw new HearthError('EXPORT_UNREADABLE', `${abs} is neither a file nor a folder`, { path: abs })
  if (abs.toLowerCase().endsWith('.json')) return openSingleFile(abs, info.size, info.mtime)
  return await openZipSource(abs, info.mtime)
}

function isNoise (path: string): boolean {
  const name = path.slice(path.lastIndexOf('/') + 1)
  return path.startsWith('__MACOSX/') || path.includes('/__MACOSX/') || name === '.DS_Store' || name === 'Thumbs.db'
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

interface Backing {
  kind: ExportSource['kind']
  location: string
  entries: ExportEntry[]
  fallbackTime: Date
  readRaw (entry: ExportEntry): Promise<Uint8Array>
  close (): Promise<void>
}

function makeSource (b: Backing): ExportSource {
  const entries = b.entries.filter((e) => !isNoise(e.path)).sort((x, y) => x.path < y.path ? -1 : x.path > y.path ? 1 : 0)
  const byPath = new Map(entries.map((e) => [e.path, e]))
  const exportedAt = latest(entries, b.fallbackTime)
  const depth = (p: string): number => p.split('/').length

  async function readBytes (path: string): Promise<Uint8Array> {
    const entry = byPath.get(path)
    if (entry === undefined) throw new HearthError('NOT_FOUND', `no entry ${path} in ${b.location}`, { path })
    return await b.readRaw(entry)
  }
  async function readText (path: string): Promise<string> {
    const text = Buffer.from(await readBytes(path)).toString('utf8')
    return text.charCodeAt(0) === 0xfeff ? text.slice(1) : text
  }
  return {
    kind: b.kind,
    location: b.location,
    exportedAt,
    entries: () => entries,
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
        return JSON.parse(text)
      } catch (err) {
        throw new HearthError('EXPORT_UNREADABLE', `${path} in ${b.location} is not valid JSON: ${(err as Error).message}`, { path })
      }
    },
    close: b.close
  }
}

async function openZipSource (location: string, mtime: Date): Promise<ExportSource> {
  const zip = await openZip(location)
  const raw = new Map<string, ZipEntry>()
  const entries: ExportEntry[] = []
  for (const z of zip.entries) {
    if (z.name.endsWith('/')) continue
    const path = z.name.replace(/^\.?\//, '')
    if (raw.has(path)) continue // a duplicated name: the first one wins, as with unzip -n
    raw.set(path, z)
    entries.push({ path, size: z.size, modifiedAt: z.modifiedAt })
  }
  return makeSource({
    kind: 'zip',
    location,
    entries,
    fallbackTime: mtime,
    readRaw: async (e) => await zip.read(raw.get(e.path)!),
    close: zip.close
  })
}

async function openFolder (location: string, mtime: Date): Promise<ExportSource> {
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
  return makeSource({
    kind: 'folder',
    location,
    entries,
    fallbackTime: mtime,
    readRaw: async (e) => await readLocal(join(location, ...e.path.split('/')), e),
    close: async () => {}
  })
}

function openSingleFile (location: string, size: number, mtime: Date): ExportSource {
  const name = basename(location)
  return makeSource({
    kind: 'file',
    location,
    entries: [{ path: name, size, modifiedAt: mtime }],
    fallbackTime: mtime,
    readRaw: async (e) => await readLocal(location, e),
    close: async () => {}
  })
}

async function readLocal (file: string, entry: ExportEntry): Promise<Uint8Array> {
  if (entry.size > MAX_ENTRY_BYTES) {
    throw new HearthError('EXPORT_UNREADABLE', `${file} is ${entry.size} bytes, more than the ${MAX_ENTRY_BYTES} a connector can read at once`, { path: file })
  }
  try {
    return await readFile(file)
  } catch (err) {
    throw new HearthError('EXPORT_UNREADABLE', `cannot read ${file}: ${(err as Error).message}`, { path: file })
  }
}
