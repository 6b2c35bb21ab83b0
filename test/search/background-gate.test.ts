// The daemon's search part catches up with the file index's change log only once every part of a
// start is up (a gate the daemon opens then): on a large home that catch-up would share the main
// thread with the parts still starting. Without a gate it begins at start; stopped before the
// gate opens, it never reads the change log.
import { test, type TestContext } from 'node:test'
import assert from 'node:assert/strict'
import { join } from 'node:path'
import { openDatabase } from '../../src/db/database.js'
import { openFileIndex } from '../../src/db/file-index.js'
import { silentLogger } from '../../src/log.js'
import { createHearthEvents, type HearthEventHub } from '../../src/lifecycle/events.js'
import { createSearchService, type SearchService } from '../../src/search/service.js'
import { countedChanges, fileRecord, sha256Of } from '../support/db-fixtures.js'
import { waitFor } from '../support/data-files.js'
import { tempDir } from '../support/tmp.js'

async function rig (t: TestContext, backgroundAfter?: Promise<void>): Promise<{ search: SearchService; reads: () => number; events: HearthEventHub }> {
  const dir = await tempDir(t, 'hearth-search-gate-')
  const db = await openDatabase(join(dir, 'index'))
  const index = await openFileIndex({ db, durable: false })
  const data = { title: 'gate', text: 'catch up' }
  await index.put(fileRecord('chatgpt.conversations/2026-01-01T00-00-00Z.json', '2026-01-01T00:00:00Z', { sha256: sha256Of(JSON.stringify(data)) }))
  const counted = countedChanges(index)
  const events = createHearthEvents(silentLogger())
  const search = createSearchService({
    dir: join(dir, 'search'),
    changes: counted.changes,
    readData: async () => data,
    specFor: () => ({ fields: ['title', 'text'] }),
    events,
    logger: silentLogger(),
    pollMs: 20,
    ...(backgroundAfter !== undefined ? { backgroundAfter } : {})
  })
  t.after(async () => { await search.stop(); await db.close() })
  return { search, reads: counted.reads, events }
}

test('without a gate the catch-up begins at start', async (t) => {
  const { search, reads } = await rig(t)
  await search.start()
  await waitFor('the change log read', async () => reads() > 0)
})

test('with a gate neither the catch-up, the polling nor an announced change reads the change log before it opens; stopped before, never', async (t) => {
  let open = (): void => {}
  const { search, reads, events } = await rig(t, new Promise<void>((resolve) => { open = resolve }))
  await search.start()
  // a file the initial scan (not gated) stores while the other parts still start
  events.emit('file.indexed', fileRecord('chatgpt.conversations/2026-01-02T00-00-00Z.json', '2026-01-02T00:00:00Z'))
  await new Promise((resolve) => setTimeout(resolve, 200)) // ten polling periods
  assert.equal(reads(), 0)
  open()
  await waitFor('the change log read once the gate opened', async () => reads() > 0)

  let openLate = (): void => {}
  const late = await rig(t, new Promise<void>((resolve) => { openLate = resolve }))
  await late.search.start()
  await late.search.stop()
  openLate()
  await new Promise((resolve) => setTimeout(resolve, 100))
  assert.equal(late.reads(), 0)
})
