// Data files are written whole or not at all: a temp file in the same folder (ignored by the
// watcher: dot-prefixed), fsync, then link() to the final name. link() fails when the name
// exists, which is how two writes to one scope in the same millisecond both survive.
import { open, link, unlink, mkdir, access } from 'node:fs/promises'
import { dirname, join, basename } from 'node:path'
import { randomBytes } from 'node:crypto'

/** Writes `bytes` at `path` unless it exists. Returns false (nothing written) when it exists. */
export async function writeNewFile (path: string, bytes: Uint8Array): Promise<boolean> {
  // cheap early answer for the common collision; link() below stays the real arbiter
  if (await access(path).then(() => true, () => false)) return false
  await mkdir(dirname(path), { recursive: true })
  const temp = join(dirname(path), `.${basename(path)}.${randomBytes(6).toString('hex')}.tmp`)
  const fh = await open(temp, 'wx', 0o600)
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
  } finally {
    await unlink(temp).catch(() => {})
  }
}
