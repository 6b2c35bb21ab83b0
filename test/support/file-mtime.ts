// A file's mtime as Hearth records it (whole microseconds from the exact nanoseconds:
// src/storage/file-times.ts), the same on every Node version; plain stat's `mtimeMs` is not.
import { stat } from 'node:fs/promises'
import { mtimeMsOf } from '../../src/storage/file-times.js'

export async function fileMtimeMs (path: string): Promise<number> {
  return mtimeMsOf(await stat(path, { bigint: true }))
}
