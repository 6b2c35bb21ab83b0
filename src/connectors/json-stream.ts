// Parses JSON as it streams in and hands out the values at chosen paths one at a time, so a
// 300 MB conversations.json costs one conversation of memory, not the whole text and its tree.
import { JSONParser } from '@streamparser/json'
import { HearthError } from '../errors.js'

/**
 * The values at `paths` (e.g. `$.*`, the elements of the top-level array) in document order.
 * `what` names the file in the EXPORT_UNREADABLE error raised when the text is not valid JSON.
 */
export async function * streamJsonValues (chunks: AsyncIterable<Uint8Array>, opts: { paths: string[]; what: string }): AsyncGenerator<unknown> {
  const parser = new JSONParser({ paths: opts.paths, keepStack: false })
  const ready: unknown[] = []
  let failure: Error | undefined
  parser.onValue = ({ value }) => { ready.push(value) }
  parser.onError = (err) => { failure ??= err }
  const invalid = (err: Error): HearthError =>
    new HearthError('EXPORT_UNREADABLE', `${opts.what} is not valid JSON: ${err.message}`, { path: opts.what })
  let first = true
  for await (let chunk of chunks) {
    if (first) {
      first = false
      // A byte-order mark is not JSON; exports written on Windows sometimes start with one.
      if (chunk[0] === 0xef && chunk[1] === 0xbb && chunk[2] === 0xbf) chunk = chunk.subarray(3)
    }
    if (chunk.length === 0) continue
    if (parser.isEnded) throw invalid(new Error('text after the end of the JSON value'))
    parser.write(chunk)
    if (failure !== undefined) throw invalid(failure)
    for (const value of ready.splice(0)) yield value
  }
  if (first) throw invalid(new Error('the file is empty'))
  if (!parser.isEnded) parser.end()
  if (failure !== undefined) throw invalid(failure)
  for (const value of ready.splice(0)) yield value
}
