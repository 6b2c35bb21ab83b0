// Per-path locks: work on one path runs one at a time, in order; a free path is held at once.
import { test } from 'node:test'
import assert from 'node:assert/strict'
import { PathLocks } from '../../src/ingest/path-locks.js'

test('a free path is held at once (tryAcquire); a held one is not, and acquire waits for its release', async () => {
  const locks = new PathLocks()
  const release = locks.tryAcquire('a/1.json')
  assert.ok(release !== null)
  assert.equal(locks.tryAcquire('a/1.json'), null, 'held')
  assert.ok(locks.tryAcquire('a/2.json') !== null, 'another path is free')
  let second = false
  const waiting = locks.acquire('a/1.json').then((r) => { second = true; return r })
  await new Promise((resolve) => setImmediate(resolve))
  assert.equal(second, false, 'waits while the first holds the path')
  release()
  release() // twice is once
  const releaseSecond = await waiting
  assert.equal(locks.tryAcquire('a/1.json'), null, 'now the second holds it')
  releaseSecond()
  assert.ok(locks.tryAcquire('a/1.json') !== null, 'free again')
})

test('run serialises the work on one path in the order it came, and forgets a path once its work is done', async () => {
  const locks = new PathLocks()
  const order: string[] = []
  const step = async (name: string, ms: number): Promise<void> => {
    order.push(`${name} start`)
    await new Promise((resolve) => setTimeout(resolve, ms))
    order.push(`${name} end`)
  }
  const held = locks.tryAcquire('p')!
  const runs = [locks.run('p', async () => { await step('one', 20) }), locks.run('p', async () => { await step('two', 5) }), locks.run('p', async () => { await step('three', 1) })]
  await new Promise((resolve) => setTimeout(resolve, 10))
  assert.deepEqual(order, [], 'nothing runs while the path is held')
  held()
  await Promise.all(runs)
  assert.deepEqual(order, ['one start', 'one end', 'two start', 'two end', 'three start', 'three end'])
  assert.equal(locks.inFlight, 0)
  await assert.rejects(locks.run('p', async () => { throw new Error('boom') }), /boom/)
  assert.equal(locks.inFlight, 0, 'a failed run releases its path')
})
