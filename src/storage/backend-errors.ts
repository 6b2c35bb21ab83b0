// How storage backends' own failures (Helia, UnixFS, blockstores, the Kubo client) become the error
// catalogue's codes: a missing block is STORAGE_NOT_FOUND, a CID that names no file INVALID_ARGUMENT,
// anything else STORAGE_UNAVAILABLE with the cause kept.
import type { CID } from 'multiformats/cid'
import { HearthError, isHearthError } from '../errors.js'
import type { Logger } from '../log.js'
import { canonicalCid } from './cid.js'

export function errorMessage (err: unknown): string {
  return err instanceof Error ? err.message : String(err ?? '')
}

/** The embedded backend's failure of `op` (on `cid`) as a catalogue error; aborts pass through. */
export function embeddedStorageError (err: unknown, op: string, cid?: CID, logger?: Logger): Error {
  if (isHearthError(err)) return err
  const name = (err as Error)?.name
  if (name === 'AbortError' || name === 'TimeoutError') return err as Error
  const details = { backend: 'embedded', op, ...(cid !== undefined ? { cid: canonicalCid(cid) } : {}) }
  if (name === 'BlockNotFoundWhileOfflineError' || name === 'NotFoundError' || name === 'LoadBlockFailedError') {
    return new HearthError('STORAGE_NOT_FOUND', `content not found locally${cid !== undefined ? `: ${canonicalCid(cid)}` : ''}`, details)
  }
  if (name === 'NotAFileError' || name === 'NoContentError' || name === 'NotUnixFSError') {
    return new HearthError('INVALID_ARGUMENT', 'CID does not name a file', details)
  }
  logger?.warn({ err, ...details }, 'embedded storage operation failed')
  return new HearthError('STORAGE_UNAVAILABLE', `embedded storage ${op} failed: ${errorMessage(err)}`, details, { cause: err })
}
