// The first services of the daemon: the home's lock and its database. Each opens on start and
// closes on stop; what they open is used by every later part.
import { chmod, mkdir } from 'node:fs/promises'
import type { HomeLayout } from '../home.js'
import type { Logger } from '../log.js'
import { service, startedValue, type Service } from '../lifecycle/service.js'
import { openDatabase, type HearthDatabase } from '../db/database.js'
import { openFileIndex, type FileIndex } from '../db/file-index.js'
import { removeStaleTemps } from '../ingest/atomic-write.js'
import { acquireDaemonLock, type DaemonLock } from './lock.js'

/**
 * The home: its folders (owner-only), the one-daemon-per-home lock, and, once the home is ours,
 * the temp files of writes a previous run did not finish.
 */
export function homeService (home: HomeLayout, logger: Logger): Service {
  let lock: DaemonLock | null = null
  return service('home', {
    async start () {
      for (const dir of [home.root, home.data, home.index, home.run, home.images]) await mkdir(dir, { recursive: true })
      await chmod(home.root, 0o700)
      lock = await acquireDaemonLock(home.lock)
      const staleTemps = await removeStaleTemps(home.data)
      if (staleTemps > 0) logger.info({ removed: staleTemps }, 'removed temp files of writes a previous run did not finish')
    },
    async stop () { await lock?.release() }
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
