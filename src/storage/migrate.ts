// Copies every CID of a home from one storage backend to another (`hearth storage migrate`), so
// the configuration can switch backends without losing a file. The caller switches only after this
// resolves; on any failure it throws and the old backend stays in charge.
//
// Every CID is verified end to end on the new backend: the bytes read from the source must hash to
// the CID (so a damaged source is never copied as if it were the file), the new backend's `add`
// must answer the same CID, and the bytes read back from it must hash to that CID again. A CID the
// target already holds (pinned) is verified the same way and only re-pinned, so an interrupted
// migration is simply run again.
//
// CIDs are streamed, never collected: memory does not grow with the number of files.
import { HearthError, isHearthError } from '../errors.js'
import { canonicalCid, cidOfBytes } from './cid.js'
import type { StorageBackend } from './types.js'

export interface MigrateProgress {
  /** CIDs finished so far (copied or skipped). */
  done: number
  total?: number
  cid: string
  action: 'copied' | 'skipped'
}

export interface MigrateOptions {
  from: StorageBackend
  to: StorageBackend
  cids: AsyncIterable<string> | Iterable<string>
  total?: number
  onProgress?: (p: MigrateProgress) => void
  /** CIDs moved at the same time (each holds one file in memory). */
  concurrency?: number
  signal?: AbortSignal
}

export interface MigrateResult {
  /** Added to the target by this run. */
  copied: number
  /** Read back from the target and found intact (copied and skipped ones alike). */
  verified: number
  /** Already on the target and intact; only re-pinned. */
  skipped: number
}

const MAX_MISSING_LISTED = 20

export async function migrateStorage (opts: MigrateOptions): Promise<MigrateResult> {
  const { from, to } = opts
  const concurrency = Math.max(1, Math.min(opts.concurrency ?? 4, 32))
  const result: MigrateResult = { copied: 0, verified: 0, skipped: 0 }
  const missing: string[] = []
  let missingCount = 0
  let done = 0
  const seen = new Set<string>()
  const iterator = toAsyncIterator(opts.cids)
  let failure: unknown

  const moveOne = async (cid: string): Promise<void> => {
    const action = await migrateCid(from, to, cid, opts.signal)
    if (action === 'missing') {
      missingCount++
      if (missing.length < MAX_MISSING_LISTED) missing.push(cid)
      return
    }
    if (action === 'copied') result.copied++
    else result.skipped++
    result.verified++
    done++
    opts.onProgress?.({ done, ...(opts.total !== undefined ? { total: opts.total } : {}), cid, action })
  }

  const worker = async (): Promise<void> => {
    while (failure === undefined) {
      opts.signal?.throwIfAborted()
      const next = await iterator.next()
      if (next.done === true) return
      const cid = canonicalCid(next.value)
      // The same ciphertext may be referenced twice (e.g. a file and its copy); move it once.
      // Only a bounded window of recent CIDs is remembered, so memory stays flat.
      if (seen.has(cid)) continue
      seen.add(cid)
      if (seen.size > 10_000) seen.delete(seen.values().next().value as string)
      await moveOne(cid)
    }
  }

  await Promise.all(Array.from({ length: concurrency }, async () => {
    try { await worker() } catch (err) { failure ??= err }
  }))
  if (failure !== undefined) throw failure
  if (missingCount > 0) {
    throw new HearthError('STORAGE_NOT_FOUND',
      `${missingCount} CID(s) are not on the ${from.kind} backend, so they cannot be migrated; nothing was switched`,
      { missing, missingCount, ...result })
  }
  return result
}

async function migrateCid (from: StorageBackend, to: StorageBackend, cid: string, signal?: AbortSignal): Promise<'copied' | 'skipped' | 'missing'> {
  if (await to.has(cid)) {
    const present = await to.get(cid, { signal })
    if (await cidOfBytes(present) === cid) {
      await to.pin(cid, { signal })
      return 'skipped'
    }
    // The target's copy is damaged: copy it again below, and the read-back decides.
  }
  let bytes: Uint8Array
  try {
    bytes = await from.get(cid, { signal })
  } catch (err) {
    if (isHearthError(err, 'STORAGE_NOT_FOUND')) return 'missing'
    throw err
  }
  if (await cidOfBytes(bytes) !== cid) {
    throw new HearthError('STORAGE_VERIFY_FAILED', `the ${from.kind} backend returned bytes that are not the content of ${cid}`, { cid, backend: from.kind })
  }
  const added = await to.add(bytes, { signal })
  if (added !== cid) {
    throw new HearthError('STORAGE_VERIFY_FAILED', `the ${to.kind} backend stored ${cid} under another CID (${added})`, { cid, got: added, backend: to.kind })
  }
  const readBack = await to.get(cid, { signal })
  if (!sameBytes(readBack, bytes)) {
    throw new HearthError('STORAGE_VERIFY_FAILED', `the ${to.kind} backend gave back other bytes for ${cid}`, { cid, backend: to.kind })
  }
  return 'copied'
}

function sameBytes (a: Uint8Array, b: Uint8Array): boolean {
  return a.length === b.length && Buffer.from(a.buffer, a.byteOffset, a.byteLength).equals(Buffer.from(b.buffer, b.byteOffset, b.byteLength))
}

function toAsyncIterator (source: AsyncIterable<string> | Iterable<string>): AsyncIterator<string> {
  if (Symbol.asyncIterator in source) return source[Symbol.asyncIterator]()
  const it = source[Symbol.iterator]()
  return { next: async () => it.next() }
}
