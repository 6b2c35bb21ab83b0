// Copying a request body's chunks into shared memory (a large body lands in a SharedArrayBuffer
// the encryption worker reads as it arrives). V8 copies into shared memory with relaxed atomic
// stores: a machine word at a time when source and target are equally aligned, else byte by byte.
// The socket's chunks start at whatever offset the HTTP parser cut them, so a 10 MB body was
// mostly copied byte by byte: 4–12 ms of the main thread, against ~1 ms aligned. A chunk aligned
// otherwise than its target is first copied (an ordinary memcpy) into scratch memory at the
// target's alignment, then word by word from there.

/** The word the relaxed copy moves at once. */
const WORD = 8
/** Shorter copies are left as they are (the scratch copy would cost more than it saves). */
const MIN_REALIGNED_BYTES = 4096
/** The scratch memory's size: longer chunks are copied in parts of it. */
const SCRATCH_BYTES = 256 * 1024

/** Its own ArrayBuffer, so its first byte is aligned as the allocator aligns (at least a word). */
let scratch: Buffer | null = null

/** `source` copied into `target` at `at`, as much as fits; the bytes copied. */
export function copyIntoShared (source: Uint8Array, target: Uint8Array, at: number): number {
  const n = Math.max(0, Math.min(source.byteLength, target.byteLength - at))
  const shift = (target.byteOffset + at) % WORD
  if (!(target.buffer instanceof SharedArrayBuffer) || n < MIN_REALIGNED_BYTES || source.byteOffset % WORD === shift) {
    target.set(source.subarray(0, n), at)
    return n
  }
  scratch ??= Buffer.allocUnsafeSlow(SCRATCH_BYTES + WORD)
  for (let done = 0; done < n;) {
    // each part starts where the target's alignment is `shift` again: parts are whole words long
    const part = Math.min(SCRATCH_BYTES, n - done)
    scratch.set(source.subarray(done, done + part), shift)
    target.set(scratch.subarray(shift, shift + part), at + done)
    done += part
  }
  return n
}
