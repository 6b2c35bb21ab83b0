// Unique temp folders per test, removed when the test ends, so tests can run twice and in parallel.
import { mkdtemp, readdir, rm } from 'node:fs/promises'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import type { TestContext } from 'node:test'

export async function tempDir (t: Pick<TestContext, 'after'>, prefix = 'hearth-test-'): Promise<string> {
  const dir = await mkdtemp(join(tmpdir(), prefix))
  t.after(async () => { await rm(dir, { recursive: true, force: true, maxRetries: 3 }) })
  return dir
}

/** Every file below `dir` (absolute paths, sorted); none when it does not exist. */
export async function filesUnder (dir: string): Promise<string[]> {
  const out: string[] = []
  for (const e of await readdir(dir, { withFileTypes: true }).catch(() => [])) {
    if (e.isDirectory()) out.push(...await filesUnder(join(dir, e.name)))
    else out.push(join(dir, e.name))
  }
  return out.sort()
}
