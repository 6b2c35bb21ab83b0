// The daemon's foundation behind `/health`: the temps a previous run left, the one file-writer
// thread and `syncfs` helper every part shares, and the database with its file index. Each opens
// on start and closes on stop; what they open is used by every later part.
import type { HomeLayout } from '../home.js'
import type { Logger } from '../log.js'
import { service, startedValue, type Service } from '../lifecycle/service.js'
import { openDatabase, type HearthDatabase } from '../db/database.js'
import { openFileIndex, type FileIndex } from '../db/file-index.js'
import { createDataFileWriter, removeStaleTemps } from '../ingest/atomic-write.js'
import type { FileWriter } from '../storage/file-writer.js'
import { createFileSyncer, type FileSyncer } from '../storage/deferred-sync.js'

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

export interface FileWritingService extends Service {
  /** The one file-writer thread: data files (ingest, sync's receive) and storage's deferred blocks. */
  readonly writer: FileWriter
  /** The one `syncfs` helper: the ingest journal's checkpoint, sync's batches, storage's large adds. */
  readonly syncFiles: FileSyncer
}

/**
 * One file-writer thread and one `syncfs` helper for the whole daemon, instead of one per part:
 * each worker thread is an isolate of several MB while it runs. The thread starts on the first
 * write and ends when idle (file-writer.ts); the helper shell starts now, behind `/health`, so no
 * request pays its fork (a separate process: not in the daemon's RSS). Stopped after every part
 * that writes through them (the stack stops in reverse), so their last flushes still run.
 */
export function fileWritingService (home: HomeLayout): FileWritingService {
  const writer = createDataFileWriter(home.data)
  const syncFiles = createFileSyncer()
  return {
    ...service('fileWriting', {
      async start () { syncFiles.warm() },
      async stop () {
        syncFiles.close()
        await writer.close()
      }
    }),
    writer,
    syncFiles
  }
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
