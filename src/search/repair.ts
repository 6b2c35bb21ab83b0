// `hearth doctor`'s part for the search index (the daemon is stopped): the file is checked by
// SQLite and FTS5; a damaged, foreign or missing one is deleted and built again from every stored
// version, and an intact one is brought up to date with the file index.
import { existsSync } from 'node:fs'
import { join } from 'node:path'
import type { Logger } from '../log.js'
import { Indexer, type IndexerDeps } from './indexer.js'
import { SEARCH_DB_FILE, SearchStore, removeSearchFiles } from './store.js'
import { isDamage } from './service.js'

export interface SearchRepair {
  /** ok (intact, caught up), rebuilt (damaged or missing: built again from the stored versions). */
  state: 'ok' | 'rebuilt'
  problems: string[]
  versions: number
  rows: number
}

export async function rebuildSearchIndex (deps: IndexerDeps & { dir: string; logger: Logger; declarations?: string; onProgress?: (line: string) => void }): Promise<SearchRepair> {
  const progress = deps.onProgress ?? (() => {})
  let problems: string[]
  let store: SearchStore | null = null
  try {
    if (!existsSync(join(deps.dir, SEARCH_DB_FILE))) throw Object.assign(new Error('the index file is missing'), { code: 'SQLITE_CANTOPEN' })
    store = new SearchStore(deps.dir, { mustExist: true })
    problems = store.check()
    const built = store.declarations()
    if (problems.length === 0 && deps.declarations !== undefined && built !== null && built !== deps.declarations) {
      problems = ['it was built under other search declarations (a connector was added, updated or removed)']
    }
  } catch (err) {
    if (!isDamage(err)) throw err
    problems = [(err as Error).message]
  }
  if (problems.length > 0) {
    store?.close()
    store = null
    progress(`search index: ${problems[0] ?? 'damaged'}; building it again from the stored versions`)
    removeSearchFiles(deps.dir)
  }
  store ??= new SearchStore(deps.dir)
  if (deps.declarations !== undefined) store.setDeclarations(deps.declarations)
  try {
    for (;;) {
      try {
        const indexer = new Indexer(store, deps)
        let steps = 0
        while (await indexer.step()) if (++steps % 50 === 0) progress(`search index: ${store.counts().versions} versions indexed`)
        return { state: problems.length > 0 ? 'rebuilt' : 'ok', problems, ...store.counts() }
      } catch (err) {
        // damage met while reading, or an index of another file index (recreated by this doctor)
        if (!isDamage(err) || problems.length > 0) throw err
        problems = [(err as Error).message]
        progress(`search index: ${problems[0]!}; building it again from the stored versions`)
        store.close()
        removeSearchFiles(deps.dir)
        store = new SearchStore(deps.dir)
        if (deps.declarations !== undefined) store.setDeclarations(deps.declarations)
      }
    }
  } finally {
    store.close()
  }
}
