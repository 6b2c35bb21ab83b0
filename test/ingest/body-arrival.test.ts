// body-arrival.ts: the reading side never passes what the writing side said is there, and stops
// when the writer abandons the bytes or nothing comes for too long.
import { test } from 'node:test'
import assert from 'node:assert/strict'
import { arrivedSegments, createArrival } from '../../src/ingest/body-arrival.js'
import { isHearthError } from '../../src/errors.js'

test('segments are what has arrived, in slices of at most the given size, up to the whole', () => {
  const bytes = new Uint8Array(new SharedArrayBuffer(1000)).map((_, i) => i % 251)
  const arrival = createArrival()
  arrival.arrived(300)
  const segments = arrivedSegments(bytes, arrival.control, 128)
  const seen: Uint8Array[] = []
  for (let i = 0; i < 3; i++) seen.push(segments.next().value as Uint8Array)
  assert.deepEqual(seen.map((s) => s.byteLength), [128, 128, 44], 'nothing past the 300 bytes there')
  arrival.complete(1000)
  for (const s of segments) seen.push(s)
  assert.deepEqual(Buffer.concat(seen), Buffer.from(bytes))
  assert.ok(seen.every((s) => s.byteLength <= 128))
})

test('an abandoned arrival stops the reader, also one about to wait; nothing arriving for stallMs stops it too', () => {
  const bytes = new Uint8Array(new SharedArrayBuffer(100))
  const abandoned = createArrival()
  abandoned.arrived(10)
  const reader = arrivedSegments(bytes, abandoned.control, 64)
  assert.equal(reader.next().value?.byteLength, 10)
  abandoned.abandon()
  assert.throws(() => reader.next(), (err) => isHearthError(err, 'INVALID_ARGUMENT') && /abandoned/.test(err.message))
  abandoned.complete(100)
  assert.throws(() => [...arrivedSegments(bytes, abandoned.control, 64)], /abandoned/, 'an abandoned arrival stays abandoned')
  const quiet = createArrival()
  const started = performance.now()
  assert.throws(() => [...arrivedSegments(bytes, quiet.control, 64, 30)], /no bytes arrived for 30 ms/)
  assert.ok(performance.now() - started >= 25)
})
