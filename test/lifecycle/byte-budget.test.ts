import { test } from 'node:test'
import assert from 'node:assert/strict'
import { createByteBudget } from '../../src/lifecycle/byte-budget.js'
import { isHearthError } from '../../src/errors.js'

const tick = async (): Promise<void> => { await new Promise((resolve) => setImmediate(resolve)) }

test('work over the budget waits its turn in order; the peak never passes the budget', async () => {
  const budget = createByteBudget({ name: 'test', limitBytes: 100, maxWaiting: 10 })
  const order: string[] = []
  const gates = new Map<string, () => void>()
  const job = (name: string, bytes: number): Promise<void> => budget.run(bytes, async () => {
    order.push(`start ${name}`)
    await new Promise<void>((resolve) => gates.set(name, resolve))
    order.push(`end ${name}`)
  })
  const all = [job('a', 60), job('b', 30), job('c', 50), job('d', 10)]
  await tick()
  assert.deepEqual(order, ['start a', 'start b'])
  assert.deepEqual(budget.status(), { inFlightBytes: 90, running: 2, waiting: 2, peakBytes: 90 })
  gates.get('a')!(); await tick(); await tick()
  assert.deepEqual(order.slice(2), ['end a', 'start c', 'start d'], 'd waited behind c, first come first served')
  for (const name of ['b', 'c', 'd']) { gates.get(name)!(); await tick() }
  await Promise.all(all)
  assert.deepEqual(budget.status(), { inFlightBytes: 0, running: 0, waiting: 0, peakBytes: 90 })
})

test('one piece of work larger than the budget runs alone; a full waiting line is WORKERS_BUSY; a failure frees its bytes', async () => {
  const budget = createByteBudget({ name: 'test', limitBytes: 10, maxWaiting: 1 })
  let release = (): void => {}
  const big = budget.run(500, async () => { await new Promise<void>((resolve) => { release = resolve }) })
  await tick()
  const waitingOne = budget.run(1, async () => 'ran')
  await assert.rejects(budget.run(1, async () => 'never'), (err) => isHearthError(err, 'WORKERS_BUSY') && err.status === 503)
  release()
  await big
  assert.equal(await waitingOne, 'ran')
  await assert.rejects(budget.run(5, async () => { throw new Error('boom') }), /boom/)
  assert.equal(budget.status().inFlightBytes, 0)
})
