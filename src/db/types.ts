// What the local index knows about each data file (docs/protocol.md §3.1 step 4).

export type FileState = 'waiting-schema' | 'waiting-storage' | 'rejected' | 'stored' | 'registered' | 'deleted'

/** Where a file came from: written on this device, received from a peer, restored from chain. */
export type FileOrigin = 'local' | 'peer' | 'chain'

export interface FileRecord {
  /** Path relative to the data folder, with '/' separators: `{scope}/{name}.json`. Primary key. */
  path: string
  scope: string
  /** Envelope collectedAt (ISO 8601 UTC); null when the file could not be parsed. */
  collectedAt: string | null
  schemaId: string | null
  /** CIDv1 of the ciphertext, once stored. */
  cid: string | null
  /** Size in bytes of the plaintext file. */
  size: number
  /** Size in bytes of the ciphertext, once stored. */
  encryptedSize: number | null
  /** SHA-256 hex of the plaintext file bytes; lets a rescan skip unchanged files. */
  sha256: string
  /** mtime of the file on disk when it was ingested (ms); a cheap first check on rescan. */
  mtimeMs: number
  state: FileState
  /** Validation or processing reasons, for rejected and waiting files. */
  reasons?: string[]
  /** Stable error code (src/errors.ts) of a rejection, e.g. SCHEMA_VALIDATION_FAILED. */
  errorCode?: string
  /** On-chain DataRegistry file id once registered (decimal string). */
  fileId?: string | null
  /**
   * Earlier registrations of this file whose ciphertext was lost and stored again under a new CID
   * (`hearth doctor`): superseded by the registration of the new one.
   */
  supersededFileIds?: string[]
  origin: FileOrigin
  /** ms since epoch of the last state change. */
  updatedAt: number
  /**
   * Position of this record's last change in the index's change log (FileIndex.changesSince).
   * Set by the index on every read; ignored on put.
   */
  seq?: number
}

/** A durable work queue (chain registrations, queued upstream requests). Survives SIGKILL. */
export interface QueueEntry<T> {
  key: string
  item: T
  attempts: number
  /** ms since epoch before which the entry is not due. */
  notBefore: number
  lastError?: string
}

export interface DurableQueue<T> {
  /** Add an entry; a second enqueue with the same key keeps the first (idempotent). */
  enqueue (key: string, item: T): Promise<void>
  /** Many enqueues in one atomic batch (keys already queued, or repeated, keep the first). */
  enqueueMany (items: ReadonlyArray<{ key: string; item: T }>): Promise<void>
  /** Up to `limit` entries due at `now` (default Date.now()), oldest first. */
  due (limit: number, now?: number): Promise<Array<QueueEntry<T>>>
  /** Remove a finished entry. */
  ack (key: string): Promise<void>
  /** Record a failure and make the entry due again after `delayMs`. */
  retryLater (key: string, delayMs: number, error: string): Promise<void>
  get (key: string): Promise<QueueEntry<T> | null>
  size (): Promise<number>
}
