// The search part, built from what it needs: the file index's change log, a version's plaintext
// read back (the data folder or the decrypted ciphertext), and what each installed connector
// declares searchable in its scopes' `search` (connector.json), read once at start.
import { createHash } from 'node:crypto'
import type { HomeLayout } from '../home.js'
import type { Logger } from '../log.js'
import type { FileIndex } from '../db/file-index.js'
import type { StorageBackend } from '../storage/types.js'
import type { HearthEventHub } from '../lifecycle/events.js'
import { readEnvelope } from '../ingest/read-back.js'
import { connectorDirs, scanConnectors } from '../connectors/loader.js'
import { createSearchService, type SearchService, type SearchSpec } from '../search/index.js'
import type { IndexerDeps } from '../search/indexer.js'

export interface SearchSetupDeps {
  home: HomeLayout
  index: FileIndex
  storage: StorageBackend
  masterKey: Uint8Array
  logger: Logger
}

/** The indexer's inputs (shared by the daemon and `hearth doctor`). */
export async function searchInputs (deps: SearchSetupDeps): Promise<IndexerDeps & { declarations: string }> {
  const specs = new Map<string, SearchSpec>()
  const { connectors } = await scanConnectors(connectorDirs(deps.home), { logger: deps.logger })
  for (const c of connectors) for (const s of c.metadata.scopes) if (s.search !== undefined) specs.set(s.scope, s.search)
  const read = { dataDir: deps.home.data, storage: deps.storage, masterKey: deps.masterKey }
  return {
    changes: deps.index,
    readData: async (record) => (await readEnvelope(read, record)).data,
    specFor: (scope) => specs.get(scope) ?? {},
    logger: deps.logger,
    declarations: createHash('sha256').update(JSON.stringify([...specs].sort(([a], [b]) => a < b ? -1 : 1))).digest('hex')
  }
}

export async function searchService (deps: SearchSetupDeps & { events: HearthEventHub; backgroundAfter?: Promise<void> }): Promise<SearchService> {
  return createSearchService({ ...await searchInputs(deps), dir: deps.home.search, events: deps.events, ...(deps.backgroundAfter !== undefined ? { backgroundAfter: deps.backgroundAfter } : {}) })
}
