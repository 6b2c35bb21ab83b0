// Builders for file-index tests: records whose every field derives from the path, so a test (or
// a reader after a crash) can tell a complete record from a partial one.
import { createHash } from 'node:crypto'
import type { FileRecord, FileState } from '../../src/db/types.js'
import type { FileIndex } from '../../src/db/file-index.js'
import type { ChangeFeed } from '../../src/search/indexer.js'

export function sha256Of (text: string): string {
  return createHash('sha256').update(text).digest('hex')
}

export function fileRecord (path: string, collectedAt: string | null, overrides: Partial<FileRecord> = {}): FileRecord {
  const scope = path.slice(0, path.indexOf('/'))
  return {
    path,
    scope,
    collectedAt,
    schemaId: '7',
    cid: `bafk${sha256Of(path).slice(0, 20)}`,
    size: path.length,
    encryptedSize: path.length + 100,
    sha256: sha256Of(path),
    mtimeMs: 1_700_000_000_000,
    state: 'stored' as FileState,
    origin: 'local',
    updatedAt: 1_700_000_000_000,
    ...overrides
  }
}

/** True when `r` is exactly what fileRecord(r.path, ...) builds, apart from the mutable fields. */
export function isCompleteRecord (r: FileRecord): boolean {
  const scope = r.path.slice(0, r.path.indexOf('/'))
  return r.scope === scope && r.sha256 === sha256Of(r.path) && r.cid === `bafk${sha256Of(r.path).slice(0, 20)}` &&
    r.size === r.path.length && r.encryptedSize === r.path.length + 100 && typeof r.collectedAt === 'string' &&
    typeof r.seq === 'number' && r.seq > 0
}

/** A file index's change log as the search reads it, counting the pages read (`reads()`). */
export function countedChanges (index: Pick<FileIndex, 'changesSince' | 'currentSeq' | 'latest'>): { changes: ChangeFeed; reads: () => number } {
  let reads = 0
  return {
    changes: {
      changesSince: async (since, limit) => { reads++; return await index.changesSince(since, limit) },
      currentSeq: async () => await index.currentSeq(),
      latest: async (scope, filter) => await index.latest(scope, filter)
    },
    reads: () => reads
  }
}
