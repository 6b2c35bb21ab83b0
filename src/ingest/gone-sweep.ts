// After a scan (the initial one, or a polling rescan): records of files that stored nothing
// (rejected, waiting for their schema) whose file was deleted while the daemon was not watching
// go back through the pipeline, which finds them missing and forgets them (ingest-file.ts,
// goneFile). The scan walks only the files that exist, so it cannot see these itself.
import { lstat } from 'node:fs/promises'
import type { FileIndex } from '../db/file-index.js'
import { absoluteDataPath } from './layout.js'
import { storesNothing } from './ingest-file.js'

const PAGE = 500

/** Pushes every such path whose file is gone; returns how many. */
export async function sweepGoneFiles (deps: { dataDir: string; index: Pick<FileIndex, 'byState'>; push: (rel: string) => void; signal?: AbortSignal }): Promise<number> {
  let pushed = 0
  for (const state of ['rejected', 'waiting-schema'] as const) {
    let after: string | undefined
    for (;;) {
      if (deps.signal?.aborted === true) return pushed
      const page = await deps.index.byState(state, { limit: PAGE, ...(after !== undefined ? { after } : {}) })
      if (page.length === 0) break
      after = page[page.length - 1]!.path
      for (const record of page) {
        if (!storesNothing(record)) continue
        const gone = await lstat(absoluteDataPath(deps.dataDir, record.path)).then(() => false, (err: NodeJS.ErrnoException) => err.code === 'ENOENT')
        if (gone) { deps.push(record.path); pushed++ }
      }
    }
  }
  return pushed
}
