// "To send" and "to receive" per peer (hearth peers, the dashboard's Devices) are true: 0 once two
// devices are in sync, even when the last seq of a log left no entry (a write taken back), and
// otherwise the number of changes a peer has yet to be listed, each file once, rejected ones not
// at all. Real libp2p nodes on 127.0.0.1, real file indexes and storage (test/support/sync-device.ts).
import { test } from 'node:test'
import assert from 'node:assert/strict'
import { join } from 'node:path'
import { learnTheirCursor, newLivePeer } from '../../src/sync/status.js'
import { tempDir } from '../support/tmp.js'
import { instant, startDevice, testOwner, waitFor, type TestDevice } from '../support/sync-device.js'

test('a peer\'s greeting never moves its cursor for our log back; its pulls may (our log restarted, or it forgot us)', () => {
  const live = newLivePeer()
  learnTheirCursor(live, 5, 'greeting')
  assert.equal(live.theirCursor, 5)
  learnTheirCursor(live, 9, 'pull')
  learnTheirCursor(live, 7, 'greeting') // written before the ack of 9 arrived on another stream
  assert.equal(live.theirCursor, 9)
  learnTheirCursor(live, 0, 'pull')
  assert.equal(live.theirCursor, 0)
})

test('two devices in sync show 0 to send and 0 to receive; a device offline is owed its changes, each file once', async (t) => {
  const dir = await tempDir(t)
  const owner = await testOwner()
  const a = await startDevice({ dir: join(dir, 'a'), owner })
  t.after(async () => { await a.stop() })
  await a.writeLocal('instagram.profile', { username: 'kept' }, instant(1))
  // a write taken back (FileIndex.revert of a name that had nothing): the last seq of A's log has no entry
  const taken = await a.writeLocal('instagram.profile', { username: 'taken back' }, instant(2))
  await a.index.revert(taken.path, null)
  assert.equal((await a.index.changesSince(0)).length, 1)
  assert.equal(await a.index.currentSeq(), 3)

  let b: TestDevice | null = await startDevice({ dir: join(dir, 'b'), owner, bootstrapPeers: a.addrs() })
  t.after(async () => { await b?.stop() })
  const bId = b.node.peerId
  await waitFor('B holds A\'s file', async () => (await b!.index.count()) === 1)
  const onA = async (): Promise<any> => (await a.engine.peers()).find((p) => p.peerId === bId)
  // before: B's cursor stopped at A's last entry (1), so A showed 2 to send and B 2 to receive, for good
  await waitFor('A has nothing left to send B', async () => (await onA())?.pendingOut === 0, 30_000)
  const aOnB = async (): Promise<any> => (await b!.engine.peers()).find((p) => p.peerId === a.node.peerId)
  await waitFor('B has handled A\'s log up to its head', async () => (await aOnB())?.cursor === 3, 30_000)
  await waitFor('B\'s pull ended', async () => (await aOnB())?.syncing === false, 30_000)
  assert.equal((await aOnB()).pendingIn, 0, 'B has nothing left to receive from A')

  // B offline: one new file rewritten twice, and a rejected one (never offered), are one change to send
  await b.stop()
  b = null
  await waitFor('B gone', async () => !a.node.connectedPeers().includes(bId))
  const fresh = await a.writeLocal('instagram.profile', { username: 'new' }, instant(3))
  for (let i = 1; i <= 2; i++) await a.index.put({ ...fresh, updatedAt: fresh.updatedAt + i })
  await a.index.put({ ...fresh, path: 'instagram.profile/broken.json', state: 'rejected', cid: null, encryptedSize: null, reasons: ['not JSON'] })
  assert.equal(await a.index.currentSeq(), 7)
  assert.equal((await onA()).pendingOut, 1)
})
