// Files the pipeline writes itself: the watcher skips the one event their creation makes, and
// nothing else — a later change of the same file, and every other file, is handed on as usual.
import { test } from 'node:test'
import assert from 'node:assert/strict'
import { appendFile, mkdir } from 'node:fs/promises'
import { join } from 'node:path'
import { createOwnWrites, writeOwnDataFile } from '../../src/ingest/own-writes.js'
import { watchDataFolder } from '../../src/ingest/watcher.js'
import { dropFile, waitFor } from '../support/data-files.js'
import { tempDir } from '../support/tmp.js'

test('marks are taken once, cancelled, expired, and bounded in number', () => {
  let now = 0
  const own = createOwnWrites({ ttlMs: 1000, maxEntries: 3, now: () => now })
  own.expect('s/a.json')
  assert.equal(own.take('s/a.json'), true)
  assert.equal(own.take('s/a.json'), false, 'one event per write')
  own.expect('s/b.json')
  own.cancel('s/b.json')
  assert.equal(own.take('s/b.json'), false)
  own.expect('s/c.json')
  now = 2000
  assert.equal(own.take('s/c.json'), false, 'an expired mark skips nothing')
  for (const n of ['1', '2', '3', '4', '5']) own.expect(`s/${n}.json`)
  assert.equal(own.take('s/1.json'), false, 'the oldest marks go first beyond the limit')
  assert.equal(own.take('s/5.json'), true)
})

test('the watcher skips the creation of a file the pipeline wrote, not its later change nor other files', async (t) => {
  const dataDir = await tempDir(t, 'hearth-own-writes-')
  await mkdir(join(dataDir, 'instagram.profile'))
  const own = createOwnWrites()
  const seen: string[] = []
  const watcher = watchDataFolder({ dataDir, quietMs: 50, onFiles: (rels) => seen.push(...rels), ownWrites: own })
  t.after(async () => { await watcher.close() })
  await watcher.ready

  const ours = 'instagram.profile/2026-01-01T00-00-00.000Z.json'
  assert.equal((await writeOwnDataFile(own, ours, join(dataDir, ours), Buffer.from('{"a":1}'), { synced: false })).written, true)
  const theirs = await dropFile(dataDir, 'instagram.profile', '2026-01-02T00-00-00.000Z.json', '{"b":2}')
  await waitFor('the dropped file handed on', async () => seen.includes(theirs), 10_000)
  await new Promise((resolve) => setTimeout(resolve, 200))
  assert.deepEqual(seen, [theirs], 'our own file is not handed on')

  await appendFile(join(dataDir, ours), ' ')
  await waitFor('a change of our file handed on', async () => seen.includes(ours), 10_000)

  const taken = await writeOwnDataFile(own, ours, join(dataDir, ours), Buffer.from('{"c":3}'), { synced: false })
  assert.equal(taken.written, false, 'an existing name is never overwritten')
  assert.equal(own.take(ours), false, 'and leaves no mark behind')
})
