// Fetched files are received in batches: while one batch is stored, decrypted, written and
// indexed, the next is read off the stream. The files of a batch go through storage and the
// receive hook together, so the syncs behind them are shared: one group commit of the index
// batch, of the pin records and of each folder per batch instead of one per file
// (src/db/group-commit.ts, src/storage/durable-file.ts). Bounded: at most `files` per batch and
// `bytes` of ciphertext held (the batch being received plus the one gathering; a single larger
// file is always allowed on its own).
import type { LiveEntry } from './protocol.js'
import type { Prepared } from './pull.js'

export interface FetchedFile {
  /** Position of the entry in its page (for the cursor). */
  at: number
  entry: LiveEntry
  bytes: Uint8Array
  /** Work started on it when it was read (its decryption). */
  prepared?: Prepared
}

export interface ReceiveBatcher {
  /** Resolves once a file of `size` bytes may be read off the stream and added. */
  room (size: number): Promise<void>
  add (file: FetchedFile): void
  /** Resolves once every added file is handled; then throws the first failure, if any. */
  drain (): Promise<void>
  /** The first failure of a batch; nothing more is handed to `receive` after one. */
  readonly failure: { error: unknown } | null
}

export interface BatchLimits { files: number; bytes: number }

export function createReceiveBatcher (limits: BatchLimits, receive: (batch: FetchedFile[]) => Promise<void>): ReceiveBatcher {
  const gathering: FetchedFile[] = []
  let held = 0
  let running: Promise<void> | null = null
  let failure: { error: unknown } | null = null
  let wake = (): void => {}
  let changed = new Promise<void>((resolve) => { wake = resolve })

  function notify (): void {
    wake()
    changed = new Promise<void>((resolve) => { wake = resolve })
  }

  function take (): FetchedFile[] {
    const batch: FetchedFile[] = []
    let bytes = 0
    while (gathering.length > 0 && batch.length < limits.files &&
      (batch.length === 0 || bytes + gathering[0]!.bytes.byteLength <= limits.bytes)) {
      const file = gathering.shift()!
      bytes += file.bytes.byteLength
      batch.push(file)
    }
    return batch
  }

  function kick (): void {
    if (running !== null || gathering.length === 0 || failure !== null) return
    running = (async () => {
      while (gathering.length > 0 && failure === null) {
        const batch = take()
        try {
          await receive(batch)
        } catch (error) {
          failure ??= { error }
        } finally {
          for (const f of batch) held -= f.bytes.byteLength
          notify()
        }
      }
      gathering.length = 0
      running = null
      notify()
    })()
  }

  return {
    async room (size) {
      // two batches' worth: one being received, one gathering behind it
      while (failure === null && held > 0 && (held + size > 2 * limits.bytes || gathering.length >= limits.files)) await changed
    },
    add (file) {
      if (failure !== null) return
      gathering.push(file)
      held += file.bytes.byteLength
      kick()
    },
    async drain () {
      while (running !== null) await running
      if (failure !== null) throw failure.error
    },
    get failure () { return failure }
  }
}
