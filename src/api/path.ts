// Request paths are matched as sent, never resolved: a `.` or `..` segment (raw, percent-encoded,
// or hidden behind an encoded slash or backslash) would let `/v1/data/../upstream/status` reach
// another route or mount, or travel on to the upstream. Such paths are refused on every listener.
import { HearthError } from '../errors.js'

const DOT_SEGMENT = /^\.\.?$/

export function refuseDotSegments (rawPath: string): void {
  for (const segment of rawPath.split('/')) {
    if (segment.length === 0) continue
    // nothing encoded and no backslash: the segment is itself the one piece to look at
    if (!segment.includes('%') && !segment.includes('\\')) {
      if (segment === '.' || segment === '..') refuse(rawPath)
      continue
    }
    let decoded = segment
    if (segment.includes('%')) {
      try { decoded = decodeURIComponent(segment) } catch { continue } // bad encoding: the router's INVALID_PATH
    }
    if (decoded.split(/[/\\]/).some((piece) => DOT_SEGMENT.test(piece))) refuse(rawPath)
  }
}

function refuse (rawPath: string): never {
  throw new HearthError('INVALID_PATH', `the path may not contain "." or ".." segments: ${JSON.stringify(rawPath.slice(0, 200))}`)
}
