// DELETE /v1/data/{scope}: removes the scope's files from the data folder and the index, and
// unpins each ciphertext no other record still uses. The index leaves tombstones, which is how
// the deletion reaches the owner's other devices. On-chain registrations cannot be undone.
import { unlink, rmdir, readdir } from 'node:fs/promises'
import type { FileIndex } from '../db/file-index.js'
import type { FileRecord } from '../db/types.js'
import type { StorageBackend } from '../storage/types.js'
import type { Logger } from '../log.js'
import { absoluteDataPath } from './layout.js'

/** Removes these records' files and index entries, unpinning ciphertexts nothing else uses. */
export async function removeRecords (deps: { dataDir: string; index: FileIndex; storage: StorageBackend; logger: Logger }, records: readonly FileRecord[]): Promise<{ deleted: number; unpinned: number }> {
  let deleted = 0
  let unpinned = 0
  for (const record of records) {
    if (!record.path.includes('#')) await unlink(absoluteDataPath(deps.dataDir, record.path)).catch(() => {})
    if (await deps.index.delete(record.path)) deleted++
    if (record.cid !== null && (await deps.index.byCid(record.cid)).length === 0) {
      await deps.storage.unpin(record.cid).catch((err) => deps.logger.warn({ cid: record.cid, err: (err as Error).message }, 'unpin failed'))
      unpinned++
    }
  }
  return { deleted, unpinned }
}

export async function removeScope (deps: { dataDir: string; index: FileIndex; storage: StorageBackend; logger: Logger }, scope: string): Promise<{ deleted: number; unpinned: number }> {
  let deleted = 0
  let unpinned = 0
  for (;;) {
    const page = await deps.index.versions(scope, { limit: 200, offset: 0 })
    if (page.length === 0) break
    const removed = await removeRecords(deps, page)
    deleted += removed.deleted
    unpinned += removed.unpinned
  }
  // what is left: files the index holds without a collectedAt (unparseable, rejected) and stray files
  const leftovers = await readdir(absoluteDataPath(deps.dataDir, scope)).catch(() => [] as string[])
  for (const name of leftovers) {
    const rel = `${scope}/${name}`
    await unlink(absoluteDataPath(deps.dataDir, rel)).catch(() => {})
    if (await deps.index.delete(rel)) deleted++
  }
  await rmdir(absoluteDataPath(deps.dataDir, scope)).catch(() => {})
  return { deleted, unpinned }
}
