// Pokes during a pull (src/sync/engine.ts): a device does not poke the peer it is pulling from
// (that peer would pull back once per debounce window while it serves the transfer); it pokes it
// once the pull ends, so what it wrote meanwhile still arrives at once. Real libp2p nodes on
// 127.0.0.1 and the real components of test/support/sync-device.ts.
import { test } from 'node:test'
import assert from 'node:assert/strict'
import { join } from 'node:path'
import { tempDir } from '../support/tmp.js'
import { instant, startDevice, testOwner, waitFor } from '../support/sync-device.js'

test('a device pulling from a peer pokes it once the pull ends, not while it runs', async (t) => {
  const dir = await tempDir(t)
  const owner = await testOwner()
  const a = await startDevice({ dir: join(dir, 'a'), owner, engine: { intervalMs: 0 } })
  t.after(async () => { await a.stop() })
  for (let i = 0; i < 150; i++) await a.writeLocal('instagram.profile', { username: `a-${i}` }, instant(i))
  // stop-and-wait fetching: the pull lasts long enough for many debounce windows
  const b = await startDevice({ dir: join(dir, 'b'), owner, bootstrapPeers: a.addrs(), engine: { intervalMs: 0, window: { requests: 1 }, batch: { files: 1 }, pokeDebounceMs: 20 } })
  t.after(async () => { await b.stop() })
  await waitFor('B pulling from A', async () => (await b.index.count()) >= 10)
  const pokesBefore = a.engine.stats().pokesReceived
  // B writes while it pulls: each write asks for a poke
  for (let i = 0; i < 5; i++) {
    await b.writeLocal('spotify.savedTracks', { from: `b-${i}` }, instant(i, Date.UTC(2026, 6, 1)))
    await new Promise((resolve) => setTimeout(resolve, 60))
  }
  assert.ok((await b.index.count()) < 155, 'the pull was still running while B wrote')
  assert.equal(a.engine.stats().pokesReceived, pokesBefore, 'A was not poked during B\'s pull')
  await waitFor('all of A\'s files on B', async () => (await b.index.count()) === 155)
  await waitFor('B\'s writes on A, after one poke', async () => (await a.index.count()) === 155, 30_000)
  assert.ok(a.engine.stats().pokesReceived - pokesBefore <= 2, `pokes after the pull: ${a.engine.stats().pokesReceived - pokesBefore}`)
})
