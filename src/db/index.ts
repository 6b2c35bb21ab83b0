// The local database: one LevelDB per home with named namespaces, the file index and durable queues.
export { openDatabase, openKv, PREFIX_END, type HearthDatabase, type Kv, type Sublevel, type BatchOp, type ValueEncoding, type OpenDatabaseOptions } from './database.js'
export { openFileIndex, FileIndex, type ChangeEntry, type ScopeSummary, type StateFilter, type FileIndexCheck } from './file-index.js'
export { createDurableQueue } from './queue.js'
export { sortableInstant, FILE_STATES, isFileState } from './keys.js'
export type { FileRecord, FileState, FileOrigin, DurableQueue, QueueEntry } from './types.js'
