// What a power cut does to a data file written without a sync: its pages are lost (the file is
// empty, shorter, or holds garbage) while its inode's times, which the filesystem's journal
// committed with its name, stay. A test that tears a file with truncate or writeFile moves its
// mtime too, which a real power cut does not: `tearFile` puts it back to the nanosecond.
import { execFile } from 'node:child_process'
import { stat, truncate, writeFile } from 'node:fs/promises'
import { promisify } from 'node:util'

const run = promisify(execFile)

/** Tears `path` as a power cut would: to `length` bytes, or its bytes replaced by `garbage`; its mtime kept. */
export async function tearFile (path: string, damage: { length: number } | { garbage: Uint8Array }): Promise<void> {
  const { mtimeNs } = await stat(path, { bigint: true })
  if ('length' in damage) await truncate(path, damage.length)
  else await writeFile(path, damage.garbage)
  await setMtimeNs(path, mtimeNs)
}

/**
 * Sets `path`'s mtime to the nanosecond: Node 20's and 22's utimes keep whole microseconds, 24's
 * a double's nanoseconds; coreutils' touch sets exactly these (utimensat), on every version.
 */
export async function setMtimeNs (path: string, mtimeNs: bigint): Promise<void> {
  const seconds = mtimeNs / 1_000_000_000n
  const nanos = (mtimeNs % 1_000_000_000n).toString().padStart(9, '0')
  await run('touch', ['-m', '-d', `@${seconds}.${nanos}`, path])
}
