// `hearth doctor` and the search index (daemon stopped): an intact index is only brought up to
// date, a damaged or missing one is built again from every stored version, read back from the
// ciphertext when data/ no longer holds the file.
import { test } from 'node:test'
import assert from 'node:assert/strict'
import { rm, unlink, writeFile } from 'node:fs/promises'
import { join } from 'node:path'
import { runCli, startDaemonProcess } from '../support/daemon.js'
import { SearchStore } from '../../src/search/store.js'
import { findHits } from '../../src/search/find.js'
import { checkQuery } from '../../src/search/query.js'

test('hearth doctor rebuilds a damaged or missing search index from the stored versions', { timeout: 300_000 }, async (t) => {
  const d = await startDaemonProcess(t)
  const plays = [{ endedAt: '2024-03-02T08:00:00Z', msPlayed: 200000, kind: 'track', track: 'Feeling Good', artist: 'Nina Simone', album: 'Pastel Blues' }]
  const posted = await d.request({ method: 'POST', path: '/v1/data/spotify.streamingHistory?collectedAt=2024-03-31T23:00:00Z', body: { month: '2024-03', plays } })
  assert.equal(posted.status, 201, posted.body.toString())
  assert.equal(await d.stop(), 0)
  // the plaintext file gone too: the rebuild reads the version back from its ciphertext
  await unlink(join(d.home.data, posted.json.path))

  const found = (q: string): number => {
    const store = new SearchStore(d.home.search, { mustExist: true })
    try { return findHits(store, checkQuery({ q }), 10).hits.length } finally { store.close() }
  }
  const doctor = async (): Promise<any> => {
    const run = await runCli(d.home, ['doctor', '--json'])
    assert.equal(run.code, 0, run.stderr + run.stdout)
    return JSON.parse(run.stdout).search
  }

  assert.equal((await doctor()).state, 'ok', 'an intact index is only brought up to date')
  assert.equal(found('pastel'), 1)

  await writeFile(join(d.home.search, 'search.db'), Buffer.alloc(16384, 0x5a))
  const damaged = await doctor()
  assert.equal(damaged.state, 'rebuilt')
  assert.ok(damaged.problems.length > 0)
  assert.equal(found('pastel'), 1)

  await rm(d.home.search, { recursive: true })
  const missing = await doctor()
  assert.equal(missing.state, 'rebuilt')
  assert.deepEqual(missing.problems, ['the index file is missing'])
  assert.equal(found('nina'), 1)
  const text = await runCli(d.home, ['doctor'])
  assert.match(text.stdout, /search index: ok, 1 versions, 3 record fields/)
})
