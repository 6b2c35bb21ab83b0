// Single-block adds whose block and pin are written later, in one batch: a journaled small
// file's ciphertext is already durable in the ingest journal (with its index record), so the
// request path only hashes it and keeps it here; the journal's checkpoint calls `flush`, which
// records every waiting block's pin in one synced batch that holds the small blocks themselves
// (small-blocks.ts: no file, nothing left for the checkpoint to sync), after writing the larger
// ones as files on the file writer's thread in a few messages (synced by the checkpoint's syncfs
// before it drops the entries). Until then `get`/`has` answer from memory, so a reader never sees
// the difference. A crash loses only what the journal replays at the next start (it rewrites
// every journaled block and its pin).
import type { CID } from 'multiformats/cid'
import type { FileWriter } from './file-writer.js'
import { blockFilePath } from './raw-blocks.js'
import { fitsSmallBlocks } from './small-blocks.js'

/** A waiting block; `path` is the block file it will be, null for a small block (kept in LevelDB). */
export interface Waiting { cid: CID; bytes: Uint8Array; path: string | null }

export class DeferredBlocks {
  readonly #waiting = new Map<string, Waiting>()
  #flushing: Promise<void> | null = null
  #bytes = 0

  constructor (
    private readonly blocksDir: string,
    private readonly writer: FileWriter,
    /** Records the pins of blocks just written, and stores the small ones with them (synced). */
    private readonly pin: (blocks: Waiting[]) => Promise<void>
  ) {}

  /** Keeps a block to be written by the next flush; returns the path its file will have (null: none). */
  stage (cid: CID, bytes: Uint8Array): string | null {
    const key = cid.toString()
    const known = this.#waiting.get(key)
    if (known !== undefined) return known.path
    const path = fitsSmallBlocks(bytes) ? null : blockFilePath(this.blocksDir, cid)
    this.#waiting.set(key, { cid, bytes, path })
    this.#bytes += bytes.byteLength
    return path
  }

  get (cid: CID): Uint8Array | undefined {
    return this.#waiting.get(cid.toString())?.bytes
  }

  has (cid: CID): boolean {
    return this.#waiting.has(cid.toString())
  }

  /** Blocks and bytes waiting (GET /v1/status). */
  get pending (): { blocks: number; bytes: number } {
    return { blocks: this.#waiting.size, bytes: this.#bytes }
  }

  /**
   * Forgets a waiting block (its content was unpinned before it was written); one a flush is
   * writing now is waited for, so the caller's unpin then finds its pin record.
   */
  async drop (cid: CID): Promise<void> {
    while (this.#flushing !== null && this.has(cid)) await this.#flushing.catch(() => {})
    this.#forget(cid.toString(), this.#waiting.get(cid.toString()))
  }

  /** Writes every block waiting now and records its pin; a failed flush keeps them for the next one. */
  async flush (): Promise<void> {
    while (this.#flushing !== null) await this.#flushing.catch(() => {})
    if (this.#waiting.size === 0) return
    const batch = [...this.#waiting.values()]
    const run = (async () => {
      const files = batch.filter((b): b is Waiting & { path: string } => b.path !== null)
      if (files.length > 0) await this.writer.writeBlocks(files)
      await this.pin(batch)
      for (const b of batch) this.#forget(b.cid.toString(), b)
    })()
    this.#flushing = run
    try {
      await run
    } finally {
      this.#flushing = null
    }
  }

  #forget (key: string, entry: Waiting | undefined): void {
    if (entry === undefined || this.#waiting.get(key) !== entry) return
    this.#waiting.delete(key)
    this.#bytes -= entry.bytes.byteLength
  }
}
