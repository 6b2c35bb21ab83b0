// The watcher on its own, on a real folder: files are handed on once no change came for them for
// the quiet period, a burst together in a few batches (not one timer and one stat per file), each
// file once; a file still being written is handed on only after its last change.
import { test, type TestContext } from 'node:test'
import assert from 'node:assert/strict'
import { appendFileSync, renameSync, rmSync, writeFileSync } from 'node:fs'
import { mkdir, open, rename, writeFile } from 'node:fs/promises'
import { join } from 'node:path'
import { watchDataFolder } from '../../src/ingest/watcher.js'
import { dropFile, waitFor } from '../support/data-files.js'
import { tempDir } from '../support/tmp.js'

const SCOPE = 'instagram.profile'

type Handed = Array<{ rel: string; at: number }>

/** A watcher on `dataDir` (its scope folder made) that notes each file handed on and when. */
async function watching (t: TestContext, dataDir: string, quietMs: number): Promise<Handed> {
  await mkdir(join(dataDir, SCOPE), { recursive: true })
  const handed: Handed = []
  const watcher = watchDataFolder({ dataDir, quietMs, onFiles: (rels) => { for (const rel of rels) handed.push({ rel, at: performance.now() }) } })
  t.after(async () => { await watcher.close() })
  await watcher.ready
  return handed
}

/** Writes `chunks` pieces into a file opened in place, `pauseMs` apart (the first `firstAfterMs` after the open); when the last was written. */
async function writeInChunks (file: string, chunks: number, pauseMs: number, firstAfterMs = 0): Promise<number> {
  const fh = await open(file, 'w')
  if (firstAfterMs > 0) await new Promise((resolve) => setTimeout(resolve, firstAfterMs))
  let lastWrite = 0
  for (let i = 0; i < chunks; i++) {
    await fh.write(`chunk ${i} `)
    lastWrite = performance.now()
    await new Promise((resolve) => setTimeout(resolve, pauseMs))
  }
  await fh.close()
  return lastWrite
}

/** Waits until `file` was handed on, then a while more, and checks it was handed on once, `quietMs` after `lastWrite`. */
async function handedOnceAfter (handed: Handed, rel: string, lastWrite: number, quietMs: number): Promise<void> {
  await waitFor('the file handed on', async () => handed.length > 0, 10_000)
  await new Promise((resolve) => setTimeout(resolve, 300))
  assert.deepEqual(handed.map((h) => h.rel), [rel], 'once')
  assert.ok(handed[0]!.at - lastWrite >= quietMs - 10, 'only after the last write was quiet for the period')
}

test('a burst of dropped files is handed on in a few batches, each file once', async (t) => {
  const dataDir = await tempDir(t, 'hearth-watcher-')
  await mkdir(join(dataDir, SCOPE))
  const batches: string[][] = []
  const watcher = watchDataFolder({ dataDir, quietMs: 50, onFiles: (rels) => batches.push(rels) })
  t.after(async () => { await watcher.close() })
  await watcher.ready
  const names = Array.from({ length: 200 }, (_, i) => `2026-01-01T00-00-${String(i).padStart(3, '0')}Z.json`)
  for (const name of names) await dropFile(dataDir, SCOPE, name, '{}')
  await waitFor('every file handed on', async () => batches.flat().length >= names.length, 10_000)
  await new Promise((resolve) => setTimeout(resolve, 200))
  assert.deepEqual(batches.flat().sort(), names.map((n) => `${SCOPE}/${n}`).sort(), 'each file once, the temp files never')
  assert.ok(batches.length < names.length / 4, `${batches.length} batches for ${names.length} files`)
})

test('a folder moved in whole (mv of a prepared folder): each of its files handed on once, in a few batches', async (t) => {
  const root = await tempDir(t, 'hearth-watcher-')
  const dataDir = join(root, 'data')
  await mkdir(dataDir)
  const batches: string[][] = []
  const watcher = watchDataFolder({ dataDir, quietMs: 50, onFiles: (rels) => batches.push(rels) })
  t.after(async () => { await watcher.close() })
  await watcher.ready
  const staging = join(root, 'staging', SCOPE)
  await mkdir(staging, { recursive: true })
  const names = Array.from({ length: 500 }, (_, i) => `2026-01-01T00-00-${String(i).padStart(3, '0')}Z.json`)
  for (const name of names) await writeFile(join(staging, name), '{}')
  await rename(staging, join(dataDir, SCOPE))
  await waitFor('every file handed on', async () => batches.flat().length >= names.length, 10_000)
  // written after the move: handed on too, once
  await dropFile(dataDir, SCOPE, 'later.json', '{}')
  await waitFor('the later file handed on', async () => batches.flat().includes(`${SCOPE}/later.json`), 10_000)
  await new Promise((resolve) => setTimeout(resolve, 200))
  assert.deepEqual(batches.flat().sort(), [...names, 'later.json'].map((n) => `${SCOPE}/${n}`).sort())
  assert.ok(batches.length <= 3, `${batches.length} batches`)
})

test('a scope folder removed and replaced by another moved in under its name: the new one is watched, its files handed on', async (t) => {
  const root = await tempDir(t, 'hearth-watcher-')
  const dataDir = join(root, 'data')
  await mkdir(join(dataDir, SCOPE), { recursive: true })
  const handed: string[] = []
  const watcher = watchDataFolder({ dataDir, quietMs: 50, onFiles: (rels) => handed.push(...rels) })
  t.after(async () => { await watcher.close() })
  await watcher.ready
  await dropFile(dataDir, SCOPE, 'old.json', '{}')
  await waitFor('the old folder\'s file handed on', async () => handed.includes(`${SCOPE}/old.json`), 10_000)
  const staging = join(root, 'staging', SCOPE)
  await mkdir(staging, { recursive: true })
  await writeFile(join(staging, 'moved.json'), '{}')
  // in one turn of the event loop: the removal's event finds a folder of that name already there
  rmSync(join(dataDir, SCOPE), { recursive: true })
  renameSync(staging, join(dataDir, SCOPE))
  await waitFor('the moved folder\'s file handed on', async () => handed.includes(`${SCOPE}/moved.json`), 10_000)
  await dropFile(dataDir, SCOPE, 'new.json', '{}')
  await waitFor('a file written into the new folder handed on', async () => handed.includes(`${SCOPE}/new.json`), 10_000)
  // old.json twice: written, then removed with its folder (the pipeline finds it missing)
  assert.deepEqual([...new Set(handed)].sort(), ['moved.json', 'new.json', 'old.json'].map((n) => `${SCOPE}/${n}`))
})

test('a file still being written is handed on once its last write is a quiet period old', async (t) => {
  const dataDir = await tempDir(t, 'hearth-watcher-')
  const handed = await watching(t, dataDir, 150)
  const lastWrite = await writeInChunks(join(dataDir, SCOPE, 'slow.json'), 6, 50)
  await handedOnceAfter(handed, `${SCOPE}/slow.json`, lastWrite, 150)
})

test('a file renamed into place from a temp name, or inside a folder moved in, is handed on without waiting the quiet period', async (t) => {
  const root = await tempDir(t, 'hearth-watcher-')
  const dataDir = join(root, 'data')
  // a quiet period no test waits out: what arrives whole is handed on long before it
  const handed = await watching(t, dataDir, 60_000)
  const started = performance.now()
  await dropFile(dataDir, SCOPE, 'renamed.json', '{}')
  await waitFor('the renamed file handed on', async () => handed.length === 1, 10_000)
  const staging = join(root, 'staging', 'other.scope')
  await mkdir(staging, { recursive: true })
  await writeFile(join(staging, 'a.json'), '{}')
  await writeFile(join(staging, 'b.json'), '{}')
  await rename(staging, join(dataDir, 'other.scope'))
  await waitFor('the moved folder\'s files handed on', async () => handed.length === 3, 10_000)
  assert.deepEqual(handed.map((h) => h.rel).sort(), [`${SCOPE}/renamed.json`, 'other.scope/a.json', 'other.scope/b.json'])
  assert.ok(handed[2]!.at - started < 30_000)
})

test('a file written again right after its rename into place waits for that write to be a quiet period old, and is handed on once', async (t) => {
  const dataDir = await tempDir(t, 'hearth-watcher-')
  const handed = await watching(t, dataDir, 150)
  const file = join(dataDir, SCOPE, 'kept-open.json')
  await writeFile(join(dataDir, SCOPE, '.kept-open.json.tmp'), '{"a":')
  // renamed and then written in the same turn of the event loop: the write's event comes with the rename's
  renameSync(join(dataDir, SCOPE, '.kept-open.json.tmp'), file)
  appendFileSync(file, '1}')
  await handedOnceAfter(handed, `${SCOPE}/kept-open.json`, performance.now(), 150)
})

test('a file created in place right after a temp file is only handed on once its writes are quiet', async (t) => {
  const dataDir = await tempDir(t, 'hearth-watcher-')
  const handed = await watching(t, dataDir, 150)
  // the temp file's creation is a rename event too; the file made next (not renamed) is written in place
  writeFileSync(join(dataDir, SCOPE, '.other.json.tmp'), '')
  const lastWrite = await writeInChunks(join(dataDir, SCOPE, 'in-place.json'), 3, 40, 60)
  await handedOnceAfter(handed, `${SCOPE}/in-place.json`, lastWrite, 150)
})

test('a file created in place a while after a temp file was removed is only handed on once its writes are quiet', async (t) => {
  const dataDir = await tempDir(t, 'hearth-watcher-')
  const handed = await watching(t, dataDir, 150)
  // the temp's removal is a rename event and the temp is gone, but it is not this file's rename
  writeFileSync(join(dataDir, SCOPE, '.gone.json.tmp'), '')
  await new Promise((resolve) => setTimeout(resolve, 20))
  rmSync(join(dataDir, SCOPE, '.gone.json.tmp'))
  await new Promise((resolve) => setTimeout(resolve, 50))
  // created empty, written only later: were it taken for a file renamed into place, the empty file would be handed on first
  const lastWrite = await writeInChunks(join(dataDir, SCOPE, 'after-removal.json'), 3, 40, 60)
  await handedOnceAfter(handed, `${SCOPE}/after-removal.json`, lastWrite, 150)
})
