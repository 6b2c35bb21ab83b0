// The data folder's layout (docs/protocol.md §2.3): `data/{scope}/{collectedAt with ':' → '-'}.json`.
// Decides which paths the pipeline looks at, and guards against paths that leave the folder.
import { realpathSync } from 'node:fs'
import { realpath } from 'node:fs/promises'
import { isAbsolute, join, normalize, relative, sep } from 'node:path'
import { HearthError } from '../errors.js'
import { scopeProblem } from '../protocol/scope.js'

export type PathClass =
  | { kind: 'data'; rel: string; scopeFolder: string; name: string; scopeProblem: string | null }
  | { kind: 'ignored'; rel: string; reason: string }

// Partial downloads and editor/atomic-write temporaries: their final name appears later.
const TEMP_SUFFIXES = ['.tmp', '.temp', '.part', '.partial', '.crdownload', '.download', '.swp', '.swx', '~']

/** Classify a path relative to the data folder ('/' or the platform separator). Pure. */
export function classifyDataPath (rel: string): PathClass {
  // the common case (every file event, every write): `scope/name.json`, said once, without a regex
  const slash = rel.indexOf('/')
  if (slash > 0 && slash < rel.length - 1 && rel.indexOf('/', slash + 1) < 0 && !rel.includes('\\') && rel.endsWith('.json')) {
    const scopeFolder = rel.slice(0, slash)
    const name = rel.slice(slash + 1)
    // a name ending in .json ends in none of TEMP_SUFFIXES
    if (scopeFolder.charCodeAt(0) !== 0x2e && name.charCodeAt(0) !== 0x2e) return { kind: 'data', rel, scopeFolder, name, scopeProblem: scopeProblem(scopeFolder) }
  }
  return classifyAnySpelling(rel)
}

/**
 * classifyDataPath without its fast path: any spelling (backslashes, doubled or outer slashes,
 * any case of the suffix), normalised first. Exported for the test that the fast path answers
 * exactly as this does.
 */
export function classifyAnySpelling (rel: string): PathClass {
  const parts = rel.split(/[\\/]/).filter((p) => p.length > 0)
  const normalised = parts.join('/')
  if (parts.length !== 2) return { kind: 'ignored', rel: normalised, reason: 'not directly inside a scope folder' }
  const [scopeFolder, name] = parts as [string, string]
  if (scopeFolder.startsWith('.') || name.startsWith('.')) return { kind: 'ignored', rel: normalised, reason: 'hidden file or folder' }
  const lower = name.toLowerCase()
  if (TEMP_SUFFIXES.some((s) => lower.endsWith(s))) return { kind: 'ignored', rel: normalised, reason: 'temporary file' }
  if (!lower.endsWith('.json')) return { kind: 'ignored', rel: normalised, reason: 'not a .json file' }
  return { kind: 'data', rel: normalised, scopeFolder, name, scopeProblem: scopeProblem(scopeFolder) }
}

export function relativeDataPath (dataDir: string, absolute: string): string {
  return relative(dataDir, absolute).split(sep).join('/')
}

export function absoluteDataPath (dataDir: string, rel: string): string {
  // a data folder path already in normal form and a path of plain names (every POST's): joined as
  // they are, which is what join gives them, without its normalisation pass
  if (sep === '/' && plainNames(rel) && normalFolder(dataDir)) return `${dataDir}/${rel}`
  return join(dataDir, ...rel.split('/'))
}

let lastNormalFolder: string | null = null

function normalFolder (dir: string): boolean {
  if (dir === lastNormalFolder) return true
  if (dir === '' || dir.endsWith('/') || normalize(dir) !== dir) return false
  lastNormalFolder = dir
  return true
}

/** Whether `rel` is names joined by single slashes, none of them `.` or `..`. */
function plainNames (rel: string): boolean {
  let start = 0
  for (;;) {
    const end = rel.indexOf('/', start)
    const length = (end < 0 ? rel.length : end) - start
    if (length === 0) return false
    if (rel.charCodeAt(start) === 0x2e && (length === 1 || (length === 2 && rel.charCodeAt(start + 1) === 0x2e))) return false
    if (end < 0) return true
    start = end + 1
  }
}

/**
 * The real location of a data path; throws PATH_OUTSIDE_DATA when it (or a symlink on the way)
 * resolves outside the data folder, so a planted link cannot make Hearth read other files.
 */
export async function resolveInsideData (dataDir: string, rel: string): Promise<string> {
  return insideData(rel, await realpath(dataDir), await realpath(absoluteDataPath(dataDir, rel)))
}

/**
 * resolveInsideData on the calling thread, for a path just written (its folders' entries are
 * cached: the lookup costs microseconds, two thread-pool round trips tens of them); throws the same.
 */
export function resolveInsideDataSync (dataDir: string, rel: string): string {
  return insideData(rel, realpathSync.native(dataDir), realpathSync.native(absoluteDataPath(dataDir, rel)))
}

function insideData (rel: string, root: string, real: string): string {
  const back = relative(root, real)
  if (back === '' || back.startsWith('..') || isAbsolute(back)) {
    throw new HearthError('PATH_OUTSIDE_DATA', `${rel} resolves outside the data folder`, { path: rel })
  }
  return real
}
