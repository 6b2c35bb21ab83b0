// Builds the assistants' side from the daemon's parts: reads through the data routes' reader, the
// consent labels of the installed connectors, and the builders' access log as the one activity log.
import type { HearthConfig } from '../config/types.js'
import type { HearthDatabase } from '../db/database.js'
import type { FileIndex } from '../db/file-index.js'
import type { StorageBackend } from '../storage/types.js'
import type { Logger } from '../log.js'
import type { Search } from '../search/types.js'
import type { AccessLog } from '../builders/access-log.js'
import { readEnvelope } from '../ingest/read-back.js'
import { consentFor } from '../connectors/consent.js'
import { scanConnectors } from '../connectors/loader.js'
import { setUpAssistants, type Assistants } from '../assistants/index.js'

export function assistantsFor (deps: {
  config: HearthConfig['mcp']
  db: HearthDatabase
  index: FileIndex
  storage: StorageBackend
  dataDir: string
  masterKey: Uint8Array
  accessLog: AccessLog
  connectorDirs: readonly string[]
  search: Search
  logger: Logger
}): Assistants {
  const { accessLog } = deps
  return setUpAssistants({
    config: deps.config,
    db: deps.db,
    index: deps.index,
    readVersion: async (record) => await readEnvelope({ dataDir: deps.dataDir, storage: deps.storage, masterKey: deps.masterKey }, record),
    search: deps.search,
    consent: async (patterns) => consentFor(patterns, (await scanConnectors(deps.connectorDirs)).connectors.map((c) => c.metadata)),
    activity: {
      async record (e) { await accessLog.append({ builder: null, grantId: null, ip: null, userAgent: null, ...e }) },
      async recent (connection, limit) { return (await accessLog.query({ connection, order: 'desc', limit })).entries }
    },
    logger: deps.logger
  })
}
