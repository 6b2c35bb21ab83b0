// One interface for every place ciphertext can live (docs/protocol.md §3.3). Implementations: embedded
// (in-process Helia) and kubo (a Kubo node over its RPC API). CIDs are CIDv1 strings, identical
// to what `ipfs add --cid-version 1` (UnixFS, raw leaves, 256 KiB chunks) gives the same bytes.
import type { StreamPiece } from './stream-pieces.js'
import type { StagedStream } from './staged-import.js'

/** Reachability and, where the backend knows it, the bytes it holds (`bytes`, null until measured). */
export interface StorageHealth { ok: boolean; detail?: string; bytes?: number | null; version?: string }

/** Content written by `addUnsynced`: its CID and the files still to be synced. */
export interface UnsyncedAdd { cid: string; files: string[] }

export interface StorageBackend {
  readonly kind: 'embedded' | 'kubo'
  /** Store and pin the bytes; resolves to the CIDv1 string. Idempotent. */
  add (bytes: Uint8Array, opts?: { signal?: AbortSignal }): Promise<string>
  /**
   * Store and pin like `add`, without waiting for any sync: the content is readable at once, and
   * it survives a killed process but not a power cut until `files` (absolute paths) are synced.
   * For a caller that holds the bytes durably meanwhile (the ingest journal). Always writes, even
   * when the content is present (a journal replay repairs a torn block that way). Null when the
   * backend cannot (kubo, content over one block): use `add`.
   */
  addUnsynced? (bytes: Uint8Array): Promise<UnsyncedAdd | null>
  /**
   * `addUnsynced` without writing anything yet: the content is kept in memory (readable at once
   * through `get` and `has`) and its files and pin are written by the next `writeDeferred`; a
   * killed process loses them. For the ingest journal, which holds the bytes durably and calls
   * `writeDeferred` before it syncs `files`. Null when the backend cannot: use `addUnsynced`.
   */
  addDeferred? (bytes: Uint8Array): Promise<UnsyncedAdd | null>
  /** Writes (unsynced) and pins everything `addDeferred` kept so far. */
  writeDeferred? (): Promise<void>
  /**
   * `add` for bytes that arrive in pieces (a large file's ciphertext, chunked while it is still
   * being encrypted): the same CID as `add` of the pieces joined. Optional: without it the caller
   * joins the pieces and calls `add`. A piece's SHA-256, when given, is trusted (it comes from
   * this process's own workers). The pieces are given up: one that is exactly one chunk and its
   * buffer's whole view may be moved to another thread (its buffer detached); so may
   * `stageStream`'s.
   */
  addStream? (pieces: AsyncIterable<StreamPiece>, opts?: { signal?: AbortSignal }): Promise<string>
  /**
   * `addStream` in two steps, for content that may yet be dropped (a POST body still arriving or
   * being validated): its blocks are written and synced as the pieces come, outside the store
   * (storage/staged-import.ts), and become content of the store only on `commit` (its CID,
   * pinned); `discard` removes them (end the pieces' source first). Null when the backend
   * cannot (kubo, a staging folder on another filesystem): use `addStream` once it is decided.
   */
  stageStream? (pieces: AsyncIterable<StreamPiece>): StagedStream | null
  /**
   * A multi-block add or read is coming (a peer's large file is being fetched, or asked for): load
   * what that needs now, while the caller still waits for the bytes. Optional; never throws.
   */
  expectLarge? (op: 'add' | 'read'): void
  /** Pin content that is already present (or fetchable) under this CID. */
  pin (cid: string, opts?: { signal?: AbortSignal }): Promise<void>
  /** The whole content of a CID. Throws HearthError STORAGE_NOT_FOUND when absent. */
  get (cid: string, opts?: { signal?: AbortSignal }): Promise<Uint8Array>
  /**
   * `get` with every block checked against its CID as it is read (STORAGE_VERIFY_FAILED
   * otherwise), for content the backend can prove that way; null: use `get` and check the whole
   * (withVerifiedReads does either). Optional.
   */
  readVerified? (cid: string, opts?: { signal?: AbortSignal }): Promise<Uint8Array | null>
  /** Whether the content is available locally without any network fetch. */
  has (cid: string): Promise<boolean>
  /**
   * Whether every block of the content still exists here, by existence alone (no pin taken as
   * proof, no leaf read): the check for lost block files. Optional: `has` otherwise.
   */
  present? (cid: string): Promise<boolean>
  /** Drop the pin; the blocks may be garbage-collected later. Unknown CIDs are not an error. */
  unpin (cid: string): Promise<void>
  /**
   * The libp2p addresses (with `/p2p/<id>`) other IPFS nodes can fetch this store's blocks from
   * over bitswap, given to pinning services as origins. Absent: the backend serves no blocks
   * (the embedded store starts no networking).
   */
  peerAddresses? (): Promise<string[]>
  /** Reachability, for `hearth status`. Never throws. */
  health (): Promise<StorageHealth>
  stop (): Promise<void>
}
