// Where log lines go: a file descriptor (stderr by default), written synchronously so the last
// lines before a crash are never lost — but never at the price of the daemon. pino's own
// destination retries a failed write forever, so with stderr on a full disk (ENOSPC) every log
// call blocked the event loop. Here a line that cannot be written is dropped and counted; the
// next line that can be written is preceded by a note of how many were lost and why.
import { writeSync } from 'node:fs'
import { Writable } from 'node:stream'

/** How long a write to a full pipe (EAGAIN) is retried before the line is dropped. */
const EAGAIN_BUDGET_MS = 50

const pause = new Int32Array(new SharedArrayBuffer(4))

/** A Writable (pino and pino-pretty both write to it) whose writes complete synchronously. */
export interface ResilientDestination extends Writable {
  /** Lines dropped since the last successful write. */
  readonly dropped: number
}

export function resilientDestination (fd = 2): ResilientDestination {
  let dropped = 0
  let lastError = ''

  function writeAll (text: string | Buffer): void {
    let buf = typeof text === 'string' ? Buffer.from(text) : text
    const deadline = Date.now() + EAGAIN_BUDGET_MS
    while (buf.byteLength > 0) {
      try {
        buf = buf.subarray(writeSync(fd, buf))
      } catch (err) {
        if ((err as NodeJS.ErrnoException).code !== 'EAGAIN' || Date.now() > deadline) throw err
        Atomics.wait(pause, 0, 0, 1)
      }
    }
  }

  function writeLine (line: Buffer): void {
    try {
      if (dropped > 0) {
        writeAll(JSON.stringify({ level: 40, time: Date.now(), msg: `${dropped} log lines were dropped: ${lastError}` }) + '\n')
        dropped = 0
      }
      writeAll(line)
    } catch (err) {
      dropped++
      lastError = (err as NodeJS.ErrnoException).code ?? (err as Error).message
    }
  }

  const stream = new Writable({
    write (chunk: Buffer, _encoding, callback) {
      writeLine(chunk)
      callback()
    }
  })
  return Object.defineProperty(stream, 'dropped', { get: () => dropped }) as ResilientDestination
}
