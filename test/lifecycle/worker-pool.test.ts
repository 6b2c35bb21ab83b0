import assert from 'node:assert/strict'
import { test, type TestContext } from 'node:test'
import { isHearthError } from '../../src/errors.js'
import { createWorkerPool, type WorkerPool, type WorkerPoolOptions } from '../../src/lifecycle/worker-pool.js'

const SCRIPT = new URL('../support/pool-test-worker.ts', import.meta.url)

async function startedPool (t: TestContext, opts: Partial<WorkerPoolOptions> = {}): Promise<WorkerPool> {
  const pool = createWorkerPool({ name: 'test-workers', script: SCRIPT, size: 1, maxQueued: 4, maxJobBytes: 1024, ...opts })
  await pool.start()
  t.after(async () => { await pool.stop() })
  return pool
}

async function all (parts: AsyncIterable<unknown>): Promise<unknown[]> {
  const out: unknown[] = []
  for await (const p of parts) out.push(p)
  return out
}

test('a job answers its parts in order, buffers moved back intact', async (t) => {
  const pool = await startedPool(t)
  const bytes = new Uint8Array([1, 2, 3])
  assert.deepEqual(await all(pool.run({ mode: 'echo', parts: ['a', 2, bytes] }, { bytes: 10 })), ['a', 2, bytes])
  assert.deepEqual(await all(pool.run({ mode: 'echo', parts: [] }, { bytes: 10 })), [])
  const status = await pool.status()
  assert.equal(status.finished, 2)
  assert.equal(status.workers, 1, 'one worker, reused')
})

test('a job that throws fails with its code; a plain error is INTERNAL; the worker serves on', async (t) => {
  const pool = await startedPool(t)
  await assert.rejects(all(pool.run({ mode: 'fail' }, { bytes: 1 })), (err) => isHearthError(err, 'INVALID_ARGUMENT') && err.details?.why === 'test')
  await assert.rejects(all(pool.run({ mode: 'fail-plain' }, { bytes: 1 })), (err) => isHearthError(err, 'INTERNAL') && /a plain error/.test(err.message))
  assert.deepEqual(await all(pool.run({ mode: 'echo', parts: ['ok'] }, { bytes: 1 })), ['ok'])
  assert.equal((await pool.status()).crashed, 0)
})

test('a worker that dies mid-job fails that job with WORKER_FAILED at once, and the next job gets a new worker', async (t) => {
  const pool = await startedPool(t)
  for (const mode of ['exit', 'throw-async']) {
    // (the part sent before the crash may or may not arrive first: the job fails either way)
    await assert.rejects(all(pool.run({ mode }, { bytes: 1 })), (err) => isHearthError(err, 'WORKER_FAILED') && err.status === 503)
    assert.deepEqual(await all(pool.run({ mode: 'echo', parts: [mode] }, { bytes: 1 })), [mode])
  }
  const status = await pool.status()
  assert.equal(status.crashed, 2)
  assert.equal(status.failed, 2)
})

test('the pool is bounded: a full queue is WORKERS_BUSY, an oversized job FILE_TOO_LARGE, both before any work', async (t) => {
  const pool = await startedPool(t, { size: 1, maxQueued: 1 })
  const running = all(pool.run({ mode: 'sleep', ms: 300 }, { bytes: 1 }))
  const queued = all(pool.run({ mode: 'echo', parts: ['queued'] }, { bytes: 1 }))
  await new Promise((resolve) => setTimeout(resolve, 50))
  assert.deepEqual(await pool.status(), { workers: 1, busy: 1, queued: 1, finished: 0, failed: 0, crashed: 0, cancelled: 0 })
  await assert.rejects(all(pool.run({ mode: 'echo', parts: [] }, { bytes: 1 })), (err) => isHearthError(err, 'WORKERS_BUSY') && err.status === 503)
  await assert.rejects(all(pool.run({ mode: 'echo', parts: [] }, { bytes: 1025 })), (err) => isHearthError(err, 'FILE_TOO_LARGE'))
  assert.deepEqual(await running, ['slept'])
  assert.deepEqual(await queued, ['queued'])
})

test('stop fails running and waiting jobs with WORKER_FAILED instead of leaving them hanging', async (t) => {
  const pool = await startedPool(t, { size: 1, maxQueued: 2 })
  const running = assert.rejects(all(pool.run({ mode: 'sleep', ms: 60_000 }, { bytes: 1 })), (err) => isHearthError(err, 'WORKER_FAILED'))
  const waiting = assert.rejects(all(pool.run({ mode: 'echo', parts: [] }, { bytes: 1 })), (err) => isHearthError(err, 'WORKER_FAILED'))
  await new Promise((resolve) => setTimeout(resolve, 50))
  await pool.stop()
  await running
  await waiting
  assert.equal((await pool.status()).workers, 0)
  await assert.rejects(all(pool.run({ mode: 'echo', parts: [] }, { bytes: 1 })), (err) => isHearthError(err, 'WORKER_FAILED'))
})

test('workers start on demand, run side by side up to the size, and end when idle', async (t) => {
  const pool = await startedPool(t, { size: 2, idleMs: 100 })
  assert.equal((await pool.status()).workers, 0, 'none before the first job')
  const jobs = Promise.all([1, 2, 3].map(async () => await all(pool.run({ mode: 'sleep', ms: 300 }, { bytes: 1 }))))
  let most = 0
  while ((await pool.status()).finished < 3) {
    most = Math.max(most, (await pool.status()).busy)
    await new Promise((resolve) => setTimeout(resolve, 10))
  }
  await jobs
  assert.equal(most, 2, 'two jobs ran at once, never three')
  await new Promise((resolve) => setTimeout(resolve, 300))
  assert.equal((await pool.status()).workers, 0, 'idle workers ended')
})

test('warm starts one idle worker ahead of a job, within the size, and it ends when idle like any other', async (t) => {
  const pool = await startedPool(t, { size: 1, idleMs: 200 })
  pool.warm()
  pool.warm()
  assert.deepEqual(await pool.status(), { workers: 1, busy: 0, queued: 0, finished: 0, failed: 0, crashed: 0, cancelled: 0 })
  assert.deepEqual(await all(pool.run({ mode: 'echo', parts: ['warm'] }, { bytes: 1 })), ['warm'])
  assert.equal((await pool.status()).workers, 1, 'the warmed worker ran the job')
  await new Promise((resolve) => setTimeout(resolve, 500))
  assert.equal((await pool.status()).workers, 0)
})

test('a consumer that leaves early cancels its job: the worker stops it at its next part, free for the next job', async (t) => {
  const pool = await startedPool(t)
  const seen: unknown[] = []
  for await (const part of pool.run({ mode: 'endless' }, { bytes: 1 })) {
    seen.push(part)
    if (seen.length === 3) break
  }
  assert.deepEqual(seen, [0, 1, 2])
  // the size-1 pool's one worker would never be free again had the endless job run on
  assert.deepEqual(await all(pool.run({ mode: 'echo', parts: ['next'] }, { bytes: 1 })), ['next'])
  const status = await pool.status()
  assert.equal(status.cancelled, 1)
  assert.equal(status.finished, 1)
  assert.equal(status.workers, 1, 'the same worker served on')
  // a consumer that throws cancels the same way
  await assert.rejects((async () => { for await (const _ of pool.run({ mode: 'endless' }, { bytes: 1 })) throw new Error('consumer failed') })(), /consumer failed/)
  assert.deepEqual(await all(pool.run({ mode: 'echo', parts: ['after'] }, { bytes: 1 })), ['after'])
  assert.equal((await pool.status()).cancelled, 2)
})

test('a job sees how many of its parts the consumer has taken', async (t) => {
  const pool = await startedPool(t)
  assert.deepEqual(await all(pool.run({ mode: 'lockstep' }, { bytes: 1 })), [0, 1, 2, 3])
})

test('an aborted job is cancelled while its consumer waits for a part: the consumer gets the reason, the worker is free', async (t) => {
  const pool = await startedPool(t)
  const abort = new AbortController()
  const waiting = all(pool.run({ mode: 'endless' }, { bytes: 1, signal: abort.signal }))
  const queued = all(pool.run({ mode: 'sleep', ms: 5 }, { bytes: 1, signal: AbortSignal.abort(new Error('aborted before')) }))
  await assert.rejects(queued, /aborted before/)
  abort.abort(new Error('not needed after all'))
  await assert.rejects(waiting, /not needed after all/)
  assert.deepEqual(await all(pool.run({ mode: 'echo', parts: ['next'] }, { bytes: 1 })), ['next'])
  const status = await pool.status()
  assert.deepEqual([status.cancelled, status.failed, status.finished], [1, 0, 1])
})

test('an abort after the job ended but before its parts were read still ends the consumer with the reason, not a short stream', async (t) => {
  const pool = await startedPool(t)
  const abort = new AbortController()
  const parts = pool.run({ mode: 'echo', parts: ['a', 'b', 'c'] }, { bytes: 1, signal: abort.signal })[Symbol.asyncIterator]()
  assert.deepEqual(await parts.next(), { done: false, value: 'a' })
  // the job has ended (its end was counted) while two parts wait unread
  for (let i = 0; i < 500 && (await pool.status()).finished === 0; i++) await new Promise((resolve) => setTimeout(resolve, 2))
  assert.equal((await pool.status()).finished, 1)
  abort.abort(new Error('left after the end'))
  await assert.rejects(parts.next(), /left after the end/)
})

test('a worker\'s control words serve all its jobs: a job left after its end, or read on while the next runs, never touches the next', async (t) => {
  const pool = await startedPool(t)
  // left after its first part, with its other part and its end on their way: a cancel that may
  // reach the worker after the job ended there
  for await (const part of pool.run({ mode: 'echo', parts: ['a', 'b'] }, { bytes: 1 })) { assert.equal(part, 'a'); break }
  assert.deepEqual(await all(pool.run({ mode: 'echo', parts: ['next', 'and on'] }, { bytes: 1 })), ['next', 'and on'], 'the next job on the same worker runs to its end')
  // an ended job whose parts are still being taken while the next job runs on the same worker
  const ended = pool.run({ mode: 'echo', parts: [1, 2, 3] }, { bytes: 1 })[Symbol.asyncIterator]()
  assert.deepEqual(await ended.next(), { done: false, value: 1 })
  for (let i = 0; i < 500 && (await pool.status()).busy > 0; i++) await new Promise((resolve) => setTimeout(resolve, 2))
  // the next job is given to the worker at once (its count set to 0) and answers its count only
  // once signalled, after the ended job's parts were taken: the overlap, however slow the machine
  const signal = new Int32Array(new SharedArrayBuffer(4))
  const next = all(pool.run({ mode: 'taken', signal }, { bytes: 1 }))
  assert.equal((await pool.status()).busy, 1, 'the next job runs')
  assert.deepEqual([await ended.next(), await ended.next()], [{ done: false, value: 2 }, { done: false, value: 3 }])
  Atomics.store(signal, 0, 1)
  assert.deepEqual(await next, [0], 'the next job\'s consumer has taken none of its parts')
  const status = await pool.status()
  assert.equal(status.workers, 1, 'one worker ran them all')
  assert.equal(status.finished + status.cancelled, 4)
})
