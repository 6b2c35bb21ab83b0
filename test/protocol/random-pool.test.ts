// The writer's random bytes come from a pool: each call gets fresh bytes of its length, across
// refills, never a view of the pool (a caller writing to its bytes changes nothing else).
import { test } from 'node:test'
import assert from 'node:assert/strict'
import { randomBytesPooled, randomFillPooled } from '../../src/protocol/random-pool.js'

test('pooled random bytes: the asked length, never repeated across many refills, own memory', () => {
  const seen = new Set<string>()
  for (let i = 0; i < 5000; i++) {
    for (const n of [32, 18, 8]) {
      const b = randomBytesPooled(n)
      assert.equal(b.byteLength, n)
      const hex = b.toString('hex')
      assert.ok(!seen.has(hex), 'a value handed out twice')
      seen.add(hex)
    }
  }
  const a = randomBytesPooled(16)
  const copy = Buffer.from(a)
  a.fill(0xff)
  const next = randomBytesPooled(16)
  assert.notDeepEqual(next, Buffer.alloc(16, 0xff), 'writing to one result does not reach the pool')
  assert.deepEqual(copy.byteLength, 16)
  assert.equal(randomBytesPooled(0).byteLength, 0)
  assert.equal(randomBytesPooled(4096).byteLength, 4096)
  assert.throws(() => randomBytesPooled(4097), RangeError)
  // the bytes look random: over 150,000 bytes every value occurs
  const counts = new Array<number>(256).fill(0)
  for (let i = 0; i < 5000; i++) for (const v of randomBytesPooled(30)) counts[v]!++
  assert.ok(counts.every((c) => c > 300), 'every byte value occurs')
})

test('pooled random fill: writes exactly the target view, fresh bytes each time, never beyond it', () => {
  const backing = Buffer.alloc(64, 0xaa)
  const seen = new Set<string>()
  for (let i = 0; i < 3000; i++) {
    const view = backing.subarray(8, 40)
    randomFillPooled(view)
    assert.ok(backing.subarray(0, 8).every((b) => b === 0xaa) && backing.subarray(40).every((b) => b === 0xaa), 'only the view is written')
    const hex = view.toString('hex')
    assert.ok(!seen.has(hex), 'a value handed out twice')
    seen.add(hex)
  }
  randomFillPooled(new Uint8Array(0))
  randomFillPooled(new Uint8Array(4096))
  assert.throws(() => { randomFillPooled(new Uint8Array(4097)) }, RangeError)
})
