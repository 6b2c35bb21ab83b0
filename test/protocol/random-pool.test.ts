// The writer's random bytes come from a pool: each call gets fresh bytes of its length, across
// refills, never a view of the pool (a caller writing to its bytes changes nothing else).
import { test } from 'node:test'
import assert from 'node:assert/strict'
import { randomBytesPooled } from '../../src/protocol/random-pool.js'

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
