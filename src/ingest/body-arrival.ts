// Bytes in shared memory that one thread writes while another reads them: a large request body
// arriving over the socket (the main thread copies each chunk into place) while the encryption
// worker already encrypts what has arrived. A control word in shared memory says how many bytes
// are there; the reader waits on it (Atomics.wait, so only a worker may read this way) and never
// reads past it, so it never sees a byte before it is written.
import { HearthError } from '../errors.js'

const ARRIVED = 0
const STATE = 1
const ARRIVING = 0
const COMPLETE = 1
const ABANDONED = 2

/** The largest buffer an arrival can describe (its count is an Int32). */
export const MAX_ARRIVAL_BYTES = 0x7fff_ffff

/** The writer's side: how many bytes are there, that all are, or that none will come. */
export interface Arrival {
  /** The shared control words, for the reading thread (`arrivedSegments`). */
  readonly control: Int32Array
  /** The first `bytes` bytes are written. */
  arrived (bytes: number): void
  /** All `bytes` bytes are written. */
  complete (bytes: number): void
  /** No more will come: the reader stops with an error. */
  abandon (): void
}

export function createArrival (): Arrival {
  const control = new Int32Array(new SharedArrayBuffer(8))
  // the state first, then the count the reader waits on: a reader that sees the new count sees
  // the new state; an abandon changes the count too (to -1), so a reader about to wait on the old
  // count does not sleep through it
  const publish = (bytes: number, state: number): void => {
    if (Atomics.load(control, STATE) !== ARRIVING) return
    Atomics.store(control, STATE, state)
    Atomics.store(control, ARRIVED, bytes)
    Atomics.notify(control, ARRIVED)
  }
  return {
    control,
    arrived: (bytes) => { publish(bytes, ARRIVING) },
    complete: (bytes) => { publish(bytes, COMPLETE) },
    abandon: () => { publish(-1, ABANDONED) }
  }
}

/**
 * `bytes` in order as they arrive, in slices of at most `sliceBytes`, each as soon as it is there.
 * Blocks while nothing new is there (a worker thread only); throws when the writer abandoned the
 * bytes, or when nothing arrived for `stallMs` (a guard: the writer abandons a slow arrival itself).
 */
export function * arrivedSegments (bytes: Uint8Array, control: Int32Array, sliceBytes: number, stallMs = 30_000): Generator<Uint8Array> {
  let at = 0
  while (at < bytes.byteLength) {
    const ready = Math.min(Atomics.load(control, ARRIVED), bytes.byteLength)
    if (ready > at) {
      const end = Math.min(ready, at + sliceBytes)
      yield bytes.subarray(at, end)
      at = end
      continue
    }
    if (Atomics.load(control, STATE) === ABANDONED) throw new HearthError('INVALID_ARGUMENT', 'the bytes being encrypted were abandoned before they arrived')
    if (Atomics.wait(control, ARRIVED, ready, stallMs) === 'timed-out') {
      throw new HearthError('INVALID_ARGUMENT', `no bytes arrived for ${stallMs} ms (${at} of ${bytes.byteLength} there)`)
    }
  }
}
