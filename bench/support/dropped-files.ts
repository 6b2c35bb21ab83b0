// The dropped-files phase of bench/limits.ts: envelopes written into a running daemon's data
// folder by another program, the way a connector does (temp name, then rename), timed until the
// daemon has indexed them all.
import { mkdir, mkdtemp, writeFile, rename, rm } from 'node:fs/promises'
import { tmpdir } from 'node:os'
import { join } from 'node:path'

/** Envelope number `i` of the bench's dropped files (~1 KB) and its file name. */
function droppedEnvelope (scope: string, definitionUrl: string, i: number): { name: string; json: string } {
  const collectedAt = new Date(Date.UTC(2020, 0, 1) + i * 1000).toISOString()
  const env = { $schema: definitionUrl, version: '1.0', scope, collectedAt, data: { username: `drop${i}`, bio: 'y'.repeat(980) } }
  return { name: `${collectedAt.replace(/:/g, '-')}.json`, json: JSON.stringify(env) }
}

/** Drops `count` envelopes of `scope` into data/<scope>/ one after another (temp name, then rename). */
export async function dropFiles (home: string, scope: string, definitionUrl: string, count: number, from: number): Promise<void> {
  const dir = join(home, 'data', scope)
  await mkdir(dir, { recursive: true })
  for (let i = 0; i < count; i++) {
    const { name, json } = droppedEnvelope(scope, definitionUrl, from + i)
    await writeFile(join(dir, `.${name}.tmp`), json)
    await rename(join(dir, `.${name}.tmp`), join(dir, name))
  }
}

/**
 * The same envelopes (of `scope`) written into `<home>/staging/<scope>`, outside the data folder
 * (and on its filesystem): moved into `data/` with one rename, they arrive all at once, as a user's `mv` of a
 * prepared folder does. Returns the folder.
 */
export async function prepareFolder (home: string, scope: string, definitionUrl: string, count: number): Promise<string> {
  const dir = join(home, 'staging', scope)
  await mkdir(dir, { recursive: true })
  for (let i = 0; i < count; i++) {
    const { name, json } = droppedEnvelope(scope, definitionUrl, i)
    await writeFile(join(dir, name), json)
  }
  return dir
}

/** The same files dropped into a folder nobody watches (files/s): the most the row can show. */
export async function floorDropFiles (scope: string, count: number): Promise<number> {
  const home = await mkdtemp(join(tmpdir(), 'hearth-bench-drop-floor-'))
  try {
    const started = performance.now()
    await dropFiles(home, scope, 'ipfs://floor', count, 0)
    return count / ((performance.now() - started) / 1000)
  } finally {
    await rm(home, { recursive: true, force: true })
  }
}
