// The helpers the shipped connectors share (plugins/_shared/read.js) for large event logs and snapshots.
import assert from 'node:assert/strict'
import { test } from 'node:test'
// @ts-expect-error plain-JS plugin module without a declaration file
import { monthsAsTheyEnd, snapshotParts } from '../../plugins/_shared/read.js'

async function groups (times: string[], maxHeld: number): Promise<Array<[string, string[]]>> {
  async function * records (): AsyncGenerator<string> { yield * times }
  const out: Array<[string, string[]]> = []
  for await (const g of monthsAsTheyEnd(records(), (t: string) => t, maxHeld)) out.push(g as [string, string[]])
  return out
}

test('monthsAsTheyEnd: a log in time order comes out month by month, holding at most maxHeld records', async () => {
  const newestFirst = ['2024-03-02T00:00:00Z', '2024-03-01T00:00:00Z', '2024-02-20T00:00:00Z', '2024-02-10T00:00:00Z', '2024-02-01T00:00:00Z', '2023-12-31T23:59:59Z']
  const all = await groups(newestFirst, 100)
  assert.deepEqual(all, [
    ['2023-12', ['2023-12-31T23:59:59Z']],
    ['2024-02', ['2024-02-01T00:00:00Z', '2024-02-10T00:00:00Z', '2024-02-20T00:00:00Z']],
    ['2024-03', ['2024-03-01T00:00:00Z', '2024-03-02T00:00:00Z']]
  ])
  const bounded = await groups(newestFirst, 2)
  assert.deepEqual(new Set(bounded.map((g) => JSON.stringify(g))), new Set(all.map((g) => JSON.stringify(g))), 'the same months, each whole')
  assert.deepEqual(await groups([...newestFirst].reverse(), 2), all, 'oldest first too')
  // out of order past the bound: the month comes in two groups, nothing is lost
  const late = await groups(['2024-03-01T00:00:00Z', '2024-02-01T00:00:00Z', '2024-02-02T00:00:00Z', '2024-03-05T00:00:00Z'], 2)
  assert.deepEqual(late, [['2024-03', ['2024-03-01T00:00:00Z']], ['2024-02', ['2024-02-01T00:00:00Z', '2024-02-02T00:00:00Z']], ['2024-03', ['2024-03-05T00:00:00Z']]])
})

test('snapshotParts: one item, or parts past perItem, all dated alike', () => {
  const spec = { scope: 'x.accounts', collectedAt: '2024-05-04T10:20:30Z', key: 'accounts', noun: 'accounts', perItem: 2 }
  assert.deepEqual(snapshotParts(spec, []), [{ scope: 'x.accounts', collectedAt: '2024-05-04T10:20:30Z', data: { accounts: [] }, label: '0 accounts' }])
  assert.deepEqual(snapshotParts(spec, [1, 2, 3]).map((i: { data: unknown; label: string }) => [i.data, i.label]), [
    [{ accounts: [1, 2], part: 1, parts: 2 }, '2 accounts (part 1 of 2)'],
    [{ accounts: [3], part: 2, parts: 2 }, '1 accounts (part 2 of 2)']
  ])
})
