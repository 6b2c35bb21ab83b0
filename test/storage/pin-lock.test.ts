import { test } from 'node:test'
import assert from 'node:assert/strict'
import { PinLock } from '../../src/storage/pin-lock.js'

const tick = async (ms = 5): Promise<void> => { await new Promise((r) => setTimeout(r, ms)) }

test('shared pins of different CIDs overlap, of one CID run one at a time', async () => {
  const lock = new PinLock()
  const log: string[] = []
  const job = (name: string) => async () => { log.push(`start ${name}`); await tick(); log.push(`end ${name}`) }
  await Promise.all([lock.shared('a', job('a1')), lock.shared('b', job('b1')), lock.shared('a', job('a2'))])
  assert.ok(log.indexOf('start b1') < log.indexOf('end a1'), 'a and b overlap')
  assert.ok(log.indexOf('end a1') < log.indexOf('start a2'), 'a1 then a2')
})

test('an exclusive pin waits for running shared pins and holds back later ones', async () => {
  const lock = new PinLock()
  const log: string[] = []
  const job = (name: string, ms = 5) => async () => { log.push(`start ${name}`); await tick(ms); log.push(`end ${name}`) }
  const first = lock.shared('a', job('s1', 15))
  await tick(1)
  const ex = lock.exclusive(job('x'))
  const later = lock.shared('b', job('s2'))
  await Promise.all([first, ex, later])
  assert.deepEqual(log, ['start s1', 'end s1', 'start x', 'end x', 'start s2', 'end s2'])
})

test('a failing pin releases the lock', async () => {
  const lock = new PinLock()
  await assert.rejects(lock.shared('a', async () => { throw new Error('boom') }), /boom/)
  await assert.rejects(lock.exclusive(async () => { throw new Error('bang') }), /bang/)
  assert.equal(await lock.shared('a', async () => 42), 42)
  await lock.idle()
})
