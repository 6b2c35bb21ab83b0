// Helia's pin records as raw-blocks.ts writes them without multiformats' base-x loop or cborg's
// encoder: the same keys and the same bytes, or Helia would not find its pins.
import { test } from 'node:test'
import assert from 'node:assert/strict'
import { randomBytes } from 'node:crypto'
import { base36 } from 'multiformats/bases/base36'
import * as cborg from 'cborg'
import { base36Of, encodePinnedBlock, rawBlockCid } from '../../src/storage/raw-blocks.js'

test('base36Of is multiformats\' base36.encode: CIDs, multihashes, leading zero bytes, empty', () => {
  const inputs: Uint8Array[] = [new Uint8Array(0), new Uint8Array([0]), new Uint8Array([0, 0, 0]), new Uint8Array([0, 0, 1]), new Uint8Array([255])]
  for (let i = 0; i < 200; i++) {
    const cid = rawBlockCid(randomBytes(1 + i))
    inputs.push(cid.bytes, cid.multihash.bytes, randomBytes(i % 40))
    inputs.push(Buffer.concat([Buffer.alloc(i % 4), randomBytes(1 + (i % 37))]))
  }
  for (const bytes of inputs) assert.equal(base36Of(bytes), base36.encode(bytes), Buffer.from(bytes).toString('hex'))
})

test('encodePinnedBlock writes what cborg.encode writes for every counter', () => {
  const cids = Array.from({ length: 50 }, (_, i) => rawBlockCid(randomBytes(10 + i)))
  const counters = [
    ...cids.map((c) => ({ pinCount: 1, pinnedBy: [c.bytes] })),
    { pinCount: 1, pinnedBy: [new Uint8Array(0)] },
    { pinCount: 1, pinnedBy: [randomBytes(23)] },
    { pinCount: 1, pinnedBy: [randomBytes(24)] },
    { pinCount: 1, pinnedBy: [randomBytes(255)] },
    { pinCount: 1, pinnedBy: [randomBytes(300)] },
    { pinCount: 2, pinnedBy: [cids[0]!.bytes, cids[1]!.bytes] },
    { pinCount: 0, pinnedBy: [] }
  ]
  for (const counter of counters) assert.deepEqual(Buffer.from(encodePinnedBlock(counter)), Buffer.from(cborg.encode(counter)))
})
