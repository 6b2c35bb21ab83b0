// Data files are written whole or not at all: a temp file in the same folder (ignored by the
// watcher: dot-prefixed), fsync, then link() to the final name. link() fails when the name
// exists, which is how two writes to one scope in the same millisecond both survive.
// A temp holds plaintext: it is removed whenever the write fails (ENOSPC included), and the ones a
// killed daemon left behind are removed at the next start (removeStaleTemps).
import { open, link, unlink, mkdir, access, opendir } from 'node:fs/promises'
import { dirname, join, basename } from 'node:path'
import { randomBytes } from 'node:crypto'

// `.<final name>.<12 hex>.tmp`: only names of this shape are ever removed as stale.
const TEMP_NAME = /^\..+\.[0-9a-f]{12}\.tmp$/

function tempPathFor (path: string): string {
  return join(dirname(path), `.${basename(path)}.${randomBytes(6).toString('hex')}.tmp`)
}

/** Writes `bytes` at `path` unless it exists. Returns false (nothing written) when it exists. */
export async function writeNewFile (path: string, bytes: Uint8Array): Promise<boolean> {
  // cheap early answer for the common collision; link() below stays the real arbiter
  if (await access(path).then(() => true, () => false)) return false
  await mkdir(dirname(path), { recursive: true })
  const temp = tempPathFor(path)
  const fh = await open(temp, 'wx', 0o600)
  try {
    try {
      await fh.writeFile(bytes)
      await fh.sync()
    } finally {
      await fh.close()
    }
    try {
      await link(temp, path)
      return true
    } catch (err) {
      if ((err as NodeJS.ErrnoException).code === 'EEXIST') return false
      throw err
    }
  } finally {
    await unlink(temp).catch(() => {})
  }
}

/**
 * Removes the temps of writes that never finished (a SIGKILL or power loss between open and
 * unlink). Run at start while this daemon holds the home's lock and before anything writes, so
 * every such temp is stale. Returns how many were removed.
 */
export async function removeStaleTemps (dataDir: string): Promise<number> {
  let removed = 0
  let top
  try {
    top = await opendir(dataDir)
  } catch (err) {
    if ((err as NodeJS.ErrnoException).code === 'ENOENT') return 0
    throw err
  }
  for await (const scopeEntry of top) {
    if (!scopeEntry.isDirectory()) continue
    const dir = await opendir(join(dataDir, scopeEntry.name)).catch(() => null)
    if (dir === null) continue
    for await (const f of dir) {
      if (f.isFile() && TEMP_NAME.test(f.name)) {
        await unlink(join(dataDir, scopeEntry.name, f.name)).then(() => { removed++ }, () => {})
      }
    }
  }
  return removed
}
