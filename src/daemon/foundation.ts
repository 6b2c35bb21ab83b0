// The daemon's foundation behind `/health`: the temps a previous run left, and the database with
// its file index. Each opens on start and closes on stop; what they open is used by every later part.
import type { HomeLayout } from '../home.js'
import type { Logger } from '../log.js'
import { service, startedValue, type Service } from '../lifecycle/service.js'
import { openDatabase, type HearthDatabase } from '../db/database.js'
import { openFileIndex, type FileIndex } from '../db/file-index.js'
import { removeStaleTemps } from '../ingest/atomic-write.js'

/**
 * The temp files of writes a previous run did not finish. Runs once the home is ours (the lock is
 * held) and before anything writes to the data folder, so every such temp is stale. It reads
 * every folder of the data folder, so it runs behind `/health`, not before.
 */
export function staleTempsService (home: HomeLayout, logger: Logger): Service {
  return service('staleTemps', {
    async start () {
      const staleTemps = await removeStaleTemps(home.data)
      if (staleTemps > 0) logger.info({ removed: staleTemps }, 'removed temp files of writes a previous run did not finish')
    }
  })
}

export interface DatabaseService extends Service {
  readonly db: HearthDatabase
  readonly index: FileIndex
}

/** The home's LevelDB and its file index. */
export function databaseService (dir: string): DatabaseService {
  let db: HearthDatabase | null = null
  let index: FileIndex | null = null
  const lifecycle = service('database', {
    async start () {
      db = await openDatabase(dir)
      index = await openFileIndex({ db })
    },
    async stop () {
      const opened = db
      db = null
      index = null
      await opened?.close()
    }
  })
  return {
    ...lifecycle,
    get db () { return startedValue(db, 'the database') },
    get index () { return startedValue(index, 'the file index') }
  }
}
