// A small disk of its own for a test: a tmpfs mounted on a temp folder (needs root or
// CAP_SYS_ADMIN; null without), unmounted when the test ends; and a filler that takes all of it.
import type { TestContext } from 'node:test'
import { execFileSync } from 'node:child_process'
import { mkdtemp, open, rm } from 'node:fs/promises'
import { tmpdir } from 'node:os'
import { join } from 'node:path'

export async function smallDisk (t: Pick<TestContext, 'after'>, megabytes: number): Promise<string | null> {
  const dir = await mkdtemp(join(tmpdir(), 'hearth-disk-'))
  try {
    execFileSync('mount', ['-t', 'tmpfs', '-o', `size=${megabytes}m,mode=0700`, 'tmpfs', dir], { stdio: 'ignore' })
  } catch {
    await rm(dir, { recursive: true, force: true })
    return null
  }
  t.after(async () => {
    execFileSync('umount', ['-l', dir], { stdio: 'ignore' })
    await rm(dir, { recursive: true, force: true })
  })
  return dir
}

/** Writes a filler file until the disk refuses, then gives `leave` bytes back; returns its path. */
export async function fill (dir: string, leave = 0): Promise<string> {
  const path = join(dir, 'filler')
  const fh = await open(path, 'a')
  const chunk = Buffer.alloc(64 * 1024)
  try {
    for (;;) await fh.write(chunk)
  } catch (err) {
    if ((err as NodeJS.ErrnoException).code !== 'ENOSPC') throw err
  }
  // the last partial chunk
  try { for (;;) await fh.write(Buffer.alloc(512)) } catch {}
  try { for (;;) await fh.write(Buffer.alloc(1)) } catch {}
  if (leave > 0) await fh.truncate(Math.max(0, (await fh.stat()).size - leave))
  await fh.close()
  return path
}
