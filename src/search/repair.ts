// `hearth doctor`'s part for the search index (the daemon is stopped): the file is checked by
// SQLite and FTS5; a damaged, foreign or missing one is deleted and built again from every stored
// version, and an intact one is brought up to date with the file index.
import type { Logger } from '../log.js'
import { Indexer, type IndexerDeps } from './indexer.js'
import { SearchStore, removeSearchFiles } from './store.js'
import { isDamage } from './service.js'

export interface SearchRepair {
  /** ok (intact, caught up), rebuilt (damaged or missing: built again from the stored versions). */
  state: 'ok' | 'rebuilt'
  problems: string[]
  versions: number
  rows: number
}

export async function rebuildSearchIndex (deps: IndexerDeps & { dir: string; logger: Logger; onProgress?: (line: string) => void }): Promise<SearchRepair> {
  const progress = deps.onProgress ?? (() => {})
  let problems: string[]
  let store: SearchStore | null = null
  try {
    store = new SearchStore(deps.dir, { mustExist: true })
    problems = store.check()
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
  try {
    const indexer = new Indexer(store, deps)
    let steps = 0
    while (await indexer.step()) if (++steps % 50 === 0) progress(`search index: ${store.counts().versions} versions indexed`)
    return { state: problems.length > 0 ? 'rebuilt' : 'ok', problems, ...store.counts() }
  } finally {
    store.close()
  }
}
