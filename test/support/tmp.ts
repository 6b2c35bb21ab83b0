// Unique temp folders per test, removed when the test ends, so tests can run twice and in parallel.
import { mkdtemp, rm } from 'node:fs/promises'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import type { TestContext } from 'node:test'

export async function tempDir (t: Pick<TestContext, 'after'>, prefix = 'hearth-test-'): Promise<string> {
  const dir = await mkdtemp(join(tmpdir(), prefix))
  t.after(async () => { await rm(dir, { recursive: true, force: true, maxRetries: 3 }) })
  return dir
}
