// A file's mtime given by the writer, exact to the microsecond: the mark by which the ingest
// journal tells a data file it created from another writer's (src/ingest/journal.ts). libuv keeps
// whole microseconds of the time it is given (truncated), and Node reports a stat's time in ms as
// `sec * 1e3 + nsec / 1e6`: a time made the same way from whole microseconds comes back from stat
// as the very same double.

const MICROS_PER_SECOND = 1_000_000

/** The mtime (ms, as stat reports it) of whole microseconds since the epoch. */
function fromMicros (micros: number): number {
  const sec = Math.floor(micros / MICROS_PER_SECOND)
  return sec * 1e3 + ((micros % MICROS_PER_SECOND) * 1e3) / 1e6
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
 * The seconds to hand (f)utimes for `mtimeMs` (whole microseconds, as stat or `markedMtime` give
 * it) so that stat gives `mtimeMs` back exactly: a double near 1.7e9 s is off by up to ~0.12 µs,
 * and libuv truncates; half a microsecond above the microsecond lands on it.
 */
export function futimesSeconds (mtimeMs: number): number {
  const micros = Math.round(mtimeMs * 1000)
  return Math.floor(micros / MICROS_PER_SECOND) + ((micros % MICROS_PER_SECOND) + 0.5) / MICROS_PER_SECOND
}
