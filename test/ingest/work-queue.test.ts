// The bounded work queue: keys handed on together start one run together (a watcher's batch of
// dropped files is one ingest batch), and each key is queued once however often it is pushed.
import { test } from 'node:test'
import assert from 'node:assert/strict'
import { createWorkQueue } from '../../src/ingest/work-queue.js'

test('pushMany starts one run with every key it queued (up to batchSize); push starts a run per key while runs are free', async () => {
  const runs: string[][] = []
  const queue = createWorkQueue({ concurrency: 4, batchSize: 3, runBatch: async (keys) => { runs.push(keys); await new Promise((resolve) => setImmediate(resolve)) } })
  queue.pushMany(['a', 'b', 'c', 'd', 'a'])
  await queue.idle()
  assert.deepEqual(runs, [['a', 'b', 'c'], ['d']], 'one run of batchSize, then the rest; the repeated key once')
  runs.length = 0
  for (const key of ['e', 'f']) queue.push(key)
  await queue.idle()
  assert.deepEqual(runs, [['e'], ['f']], 'one by one, each key starts its own run while runs are free')
  await queue.close()
})

test('keys pushed together while every run is busy wait and go together in the next free run', async () => {
  const runs: string[][] = []
  let release: () => void = () => {}
  const busy = new Promise<void>((resolve) => { release = resolve })
  const queue = createWorkQueue({ concurrency: 1, batchSize: 32, runBatch: async (keys) => { runs.push(keys); if (runs.length === 1) await busy } })
  queue.pushMany(['a'])
  queue.pushMany(['b', 'c'])
  queue.push('d')
  assert.equal(queue.size, 3, 'waiting while the one run is busy')
  release()
  await queue.idle()
  assert.deepEqual(runs, [['a'], ['b', 'c', 'd']])
  await queue.close()
})

test('a closed queue takes no more keys', async () => {
  const runs: string[][] = []
  const queue = createWorkQueue({ concurrency: 2, batchSize: 8, runBatch: async (keys) => { runs.push(keys) } })
  await queue.close()
  queue.pushMany(['a', 'b'])
  queue.push('c')
  await queue.idle()
  assert.deepEqual(runs, [])
  assert.equal(queue.size, 0)
})
