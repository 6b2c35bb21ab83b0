// Small secret files under identity/: the folder is 0700, every file 0600, written atomically
// (temp file + fsync + rename or link) so a crash never leaves a half-written key behind.
import { randomBytes } from 'node:crypto'
import { chmod, link, mkdir, open, readFile, rename, unlink } from 'node:fs/promises'
import { basename, dirname, join } from 'node:path'
import { HearthError } from '../errors.js'

export const SECRET_DIR_MODE = 0o700
export const SECRET_FILE_MODE = 0o600

export async function ensureSecretDir (dir: string): Promise<void> {
  await mkdir(dir, { recursive: true, mode: SECRET_DIR_MODE })
  // mkdir's mode is filtered by the umask and ignored for a folder that already exists.
  await chmod(dir, SECRET_DIR_MODE)
}

export type WriteMode = 'create' | 'replace'

/**
 * Writes `content` to `file` with mode 0600. 'create' never replaces an existing file (the final
 * step is link(2), which fails atomically with EEXIST) and returns false when the file exists;
 * 'replace' renames over it.
 */
export async function writeSecretFile (file: string, content: string, mode: WriteMode): Promise<boolean> {
  const dir = dirname(file)
  await ensureSecretDir(dir)
  const tmp = join(dir, `.${basename(file)}.${process.pid}.${randomBytes(6).toString('hex')}.tmp`)
  const handle = await open(tmp, 'wx', SECRET_FILE_MODE)
  try {
    await handle.chmod(SECRET_FILE_MODE)
    await handle.writeFile(content, 'utf8')
    await handle.sync()
  } finally {
    await handle.close()
  }
  let written = true
  try {
    if (mode === 'replace') {
      await rename(tmp, file)
    } else {
      try {
        await link(tmp, file)
      } catch (err) {
        if ((err as NodeJS.ErrnoException).code !== 'EEXIST') throw err
        written = false
      }
    }
  } finally {
    if (mode === 'create') await unlink(tmp).catch(() => {})
  }
  await syncDir(dir)
  return written
}

/** The file's text, or null when it does not exist; FILE_UNREADABLE for any other read error. */
export async function readSecretFile (file: string): Promise<string | null> {
  try {
    return await readFile(file, 'utf8')
  } catch (err) {
    const code = (err as NodeJS.ErrnoException).code
    if (code === 'ENOENT') return null
    throw new HearthError('FILE_UNREADABLE', `cannot read ${file}: ${code ?? 'error'}`, { path: file, code })
  }
}

async function syncDir (dir: string): Promise<void> {
  const handle = await open(dir, 'r')
  try { await handle.sync() } finally { await handle.close() }
}

/**
 * Makes the named secret properties non-enumerable, so JSON.stringify, pino and console.log of
 * an identity object never print them, while code can still read them.
 */
export function hideSecrets<T extends object> (obj: T, keys: Array<keyof T>): T {
  for (const key of keys) {
    if (Object.prototype.hasOwnProperty.call(obj, key)) {
      Object.defineProperty(obj, key, { enumerable: false })
    }
  }
  return obj
}
