// X (Twitter) archives hold their JSON as a JavaScript statement, `window.YTD.tweets.part0 = [ … ]`,
// so the browser page inside the archive can load it. This turns such a file's bytes into the
// JSON after the `=` as they stream in (memory holds one chunk), for streamJsonValues to read.
import { HearthError } from '../errors.js'

/** The name before the `=` is short; a file without one early on is not such a statement. */
const MAX_PREFIX_BYTES = 1024
const NAME = /^\s*[A-Za-z_$][\w$]*(\.[A-Za-z_$][\w$]*|\[\s*(\d+|"[^"]*"|'[^']*')\s*\])*\s*$/
const EQUALS = 0x3d
const isTrailing = (b: number | undefined): boolean => b === 0x3b || b === 0x20 || b === 0x0a || b === 0x0d || b === 0x09 // ; and blanks

/**
 * The bytes after `<name> =`, without the statement's closing `;` and the blanks around it.
 * EXPORT_UNREADABLE when the file does not start with an assignment to a plain name.
 */
export async function * jsonOfAssignment (chunks: AsyncIterable<Uint8Array>, what: string): AsyncGenerator<Uint8Array> {
  let head: Buffer | null = Buffer.alloc(0)
  let held: Buffer = Buffer.alloc(0) // a trailing `;` and blanks, passed on only if more text follows
  for await (const chunk of chunks) {
    let bytes: Buffer = Buffer.from(chunk.buffer, chunk.byteOffset, chunk.byteLength)
    if (head !== null) {
      head = Buffer.concat([head, bytes])
      const eq = head.indexOf(EQUALS)
      const name = head.subarray(0, eq < 0 ? head.length : eq).toString('utf8').replace(/^\uFEFF/, '')
      if (eq < 0 && head.length <= MAX_PREFIX_BYTES) continue
      if (eq < 0 || eq > MAX_PREFIX_BYTES || !NAME.test(name)) throw notAssignment(what)
      bytes = head.subarray(eq + 1)
      head = null
    }
    if (held.length > 0) bytes = Buffer.concat([held, bytes])
    let end = bytes.length
    while (end > 0 && isTrailing(bytes[end - 1])) end--
    held = bytes.subarray(end)
    if (end > 0) yield bytes.subarray(0, end)
  }
  if (head !== null) throw notAssignment(what)
}

function notAssignment (what: string): HearthError {
  return new HearthError('EXPORT_UNREADABLE', `${what} is not JSON assigned to a name (window.YTD.<name>.part0 = […])`, { path: what })
}
