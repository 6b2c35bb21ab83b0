// A file's mtime as Hearth keeps and compares it: whole microseconds, read from nanosecond
// (bigint) stats. The writer marks a data file it creates with a random part of a millisecond:
// the mark by which the ingest journal tells a file it created from another writer's
// (src/ingest/journal.ts). Node versions differ in how a time given to (f)utimes lands and how
// stat's `mtimeMs` double is rounded: the libuv of Node 20 and 22 keeps whole microseconds
// (truncated), Node 24's keeps nanoseconds, so the same call leaves …830.516000 on one and
// …830.516576 on the other, whose `mtimeMs` reads back as …830.5166. Truncating the exact
// nanoseconds to the microsecond gives the same number on every version for a time set here, and
// for any other file a number that is the same each time it is read.

import type { BigIntStats } from 'node:fs'

const MICROS_PER_SECOND = 1_000_000

/** The mtime (ms, as Node 20 reports it: `sec * 1e3 + nsec / 1e6`) of whole microseconds since the epoch. */
function fromMicros (micros: number): number {
  const sec = Math.floor(micros / MICROS_PER_SECOND)
  return sec * 1e3 + ((micros - sec * MICROS_PER_SECOND) * 1e3) / 1e6
}

/**
 * `ms` (whole milliseconds, e.g. `Date.now()`) with a random part of 1 to 999 whole microseconds:
 * a file whose times were kept by a copy (`cp -p`, `rsync -t`: whole seconds or milliseconds, or
 * another file's) practically never has it.
 */
export function markedMtime (ms: number): number {
  return fromMicros(Math.floor(ms) * 1000 + 1 + Math.floor(Math.random() * 999))
}

/**
 * The seconds to hand (f)utimes for `mtimeMs` (whole microseconds, as `mtimeMsOf` or `markedMtime`
 * give it) so that `mtimeMsOf` gives `mtimeMs` back exactly: a double near 1.7e9 s is off by up to
 * ~0.12 µs; half a microsecond above the microsecond lands in it whether the platform truncates to
 * the microsecond or keeps nanoseconds.
 */
export function futimesSeconds (mtimeMs: number): number {
  const micros = Math.round(mtimeMs * 1000)
  const sec = Math.floor(micros / MICROS_PER_SECOND)
  return sec + ((micros - sec * MICROS_PER_SECOND) + 0.5) / MICROS_PER_SECOND
}

/** A file's mtime (ms of whole microseconds, truncated) from its exact nanoseconds: the same on every Node version. */
export function mtimeMsOf (st: Pick<BigIntStats, 'mtimeNs'>): number {
  return fromMicros(Number(st.mtimeNs / 1000n))
}

/**
 * A file's mtime as this Node's plain `stat` reports it (`sec * 1e3 + nsec / 1e6`): what earlier
 * versions of Hearth kept, and on Node 24 journaled as a link's mtime when a create's time came back
 * other than asked; compared besides `mtimeMsOf` so such an entry still recognises its file.
 */
export function reportedMtimeMs (st: Pick<BigIntStats, 'mtimeNs'>): number {
  const sec = st.mtimeNs / 1_000_000_000n
  return Number(sec) * 1e3 + Number(st.mtimeNs - sec * 1_000_000_000n) / 1e6
}

/** The size and mtime (as `mtimeMsOf`) of a bigint stat, the two numbers a scan compares with a file's record. */
export function sizeAndMtime (st: Pick<BigIntStats, 'size' | 'mtimeNs'>): { size: number; mtimeMs: number } {
  return { size: Number(st.size), mtimeMs: mtimeMsOf(st) }
}
