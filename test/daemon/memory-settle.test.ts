// The idle daemon's full collection (src/daemon/memory-settle.ts): once after the start when the
// event loop has been quiet long enough, never while it is busy, and again only after later work
// followed by a longer quiet period. What it returns is measured by bench/limits.ts (idle RSS rows).
import test from 'node:test'
import assert from 'node:assert/strict'
import { memorySettleService } from '../../src/daemon/memory-settle.js'
import { createLogger } from '../../src/log.js'

const logger = createLogger({ level: 'silent' })
const sleep = async (ms: number): Promise<void> => { await new Promise((resolve) => setTimeout(resolve, ms)) }

/** Keeps the event loop busy (well over the 2 % the service calls work) for `ms`; with `growMb`, the heap grows that much meanwhile. */
async function busyFor (ms: number, growMb = 0): Promise<void> {
  const end = Date.now() + ms
  let kept: number[][] | null = []
  for (let i = 0; i < growMb * 64; i++) kept.push(new Array(2048).fill(i))
  while (Date.now() < end) {
    const spin = Date.now() + 15
    while (Date.now() < spin) { /* work */ }
    await new Promise((resolve) => setImmediate(resolve))
  }
  kept = null
}

test('after the start the daemon collects once it has been quiet, not while it works, not after work that left the heap as it was, and after work that grew it only after the longer quiet', async (t) => {
  const settle = memorySettleService({ logger, checkMs: 200, quietAfterStartMs: 400, quietAfterWorkMs: 1200 })
  t.after(async () => { await settle.stop() })
  await settle.start()
  await busyFor(1000)
  assert.equal((await settle.status()).settles, 0, 'no collection while the event loop is busy')
  const deadline = Date.now() + 5_000
  while ((await settle.status()).settles === 0 && Date.now() < deadline) await sleep(20)
  const first = await settle.status()
  assert.ok(first.settles >= 1, 'a collection once quiet after the start')
  assert.equal(typeof first.lastPauseMs, 'number')
  // V8 may ask for a second one (it kept its young generation); after that none while idle
  await sleep(1000)
  const idle = (await settle.status()).settles
  await sleep(1600)
  assert.equal((await settle.status()).settles, idle, 'an idle daemon is not collected again and again')
  await busyFor(600)
  await sleep(1800)
  assert.equal((await settle.status()).settles, idle, 'work that did not grow the heap is not followed by a collection')

  await busyFor(600, 16)
  await sleep(600)
  assert.equal((await settle.status()).settles, idle, 'after work, a short quiet is not enough')
  const again = Date.now() + 10_000
  while ((await settle.status()).settles === idle && Date.now() < again) await sleep(20)
  assert.ok((await settle.status()).settles > idle, 'collected again once quiet for the longer period after work')
  await settle.stop()
})

test('a stopped service collects nothing more', async () => {
  const settle = memorySettleService({ logger, checkMs: 20, quietAfterStartMs: 40 })
  await settle.start()
  await settle.stop()
  await sleep(200)
  assert.equal((await settle.status()).settles, 0)
})
