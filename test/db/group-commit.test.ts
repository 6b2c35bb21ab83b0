import { test } from 'node:test'
import assert from 'node:assert/strict'
import { createGroupCommit } from '../../src/db/group-commit.js'

test('group commit: concurrent submits share flushes, later ones wait for the next, a failure rejects only its group', async () => {
  const flushes: number[][] = []
  let fail = false
  const submit = createGroupCommit<number>(async (items) => {
    flushes.push([...items])
    await new Promise((resolve) => setTimeout(resolve, 10))
    if (fail) throw new Error('disk full')
  })
  await Promise.all(Array.from({ length: 50 }, async (_, i) => { await submit(i) }))
  assert.ok(flushes.length <= 2, `50 concurrent submits took ${flushes.length} flushes`)
  assert.deepEqual(flushes.flat().sort((a, b) => a - b), Array.from({ length: 50 }, (_, i) => i))

  // one submitted while a flush runs goes into the next flush, never the running one
  flushes.length = 0
  const first = submit(100)
  await new Promise((resolve) => setTimeout(resolve, 2))
  const second = submit(101)
  await Promise.all([first, second])
  assert.deepEqual(flushes, [[100], [101]])

  fail = true
  const failing = submit(1)
  await assert.rejects(failing, /disk full/)
  fail = false
  await submit(2) // the next group is unaffected
  assert.deepEqual(flushes.at(-1), [2])
})
