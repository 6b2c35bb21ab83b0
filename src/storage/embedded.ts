// The embedded backend (docs/protocol.md §3.3, the default): an in-process Helia node whose pins
// live in a LevelDB datastore in `datastoreDir`, with the small blocks (small-blocks.ts: the one
// raw block of a small file, nearly every file) beside them, and whose other blocks live in
// `blocksDir` (one file per block, blockstore-fs's layout). Reads look in both (TieredBlockstore),
// so block files written before the small-block tier existed are still read, pinned and collected.
//
// Single-block files skip Helia's importer and pin walker: one hash, and Helia's pin records
// written in one group-committed batch that holds the small block itself (raw-blocks.ts); a
// larger single block is written durably as a file first.
// Larger files go through Helia's importer, each block written durably as it comes out;
// `addStream` takes a large file's ciphertext in pieces while it is still being encrypted, so
// chunking, hashing and block writes overlap the encryption. The pin is recorded after every
// block is on disk.
//
// Helia itself (and the libp2p it brings in) is loaded only when a pin or unpin of a multi-block
// file needs its pin machinery: starting the storage, single-block files (add, pin, unpin), reads
// and `has` use the blockstore, LevelDB and @helia/unixfs (loaded on the first multi-block add or
// read) alone, which keeps the daemon's start and idle memory small.
//
// It starts NO networking at all: `createHeliaLight` builds a node without libp2p, without block
// brokers (bitswap, trustless gateways) and without routers, and reads go to the blockstore
// itself, so a missing block is an immediate STORAGE_NOT_FOUND instead of a network search.
// Getting content onto this node is the sync layer's job (docs/protocol.md §3.4), not this module's.
//
// The LevelDB datastore takes an exclusive lock on its folder, so a second process opening the same
// home (the CLI while the daemon runs) gets STORAGE_UNAVAILABLE instead of corrupting pins
// (embedded-open.ts).
import type { UnixFS, UnixFSComponents } from '@helia/unixfs'
import type { ClassicLevel } from 'classic-level'
import type { CID } from 'multiformats/cid'
import { HearthError } from '../errors.js'
import type { Logger } from '../log.js'
import { canonicalCid, parseCid } from './cid.js'
import { sequentialWalker } from './pin-walker.js'
import type { StorageBackend, StorageHealth, UnsyncedAdd } from './types.js'
import { splitPieces, type StreamPiece } from './stream-pieces.js'
import { importDurably } from './durable-import.js'
import { stageImport, type StagedStream } from './staged-import.js'
import { folderSize, type FolderSize } from './folder-size.js'
import { PinLock } from './pin-lock.js'
import { createDirSync, type DirSync } from './durable-file.js'
import { createFileSyncer, type FileSyncer, type SyncFiles } from './deferred-sync.js'
import { PinRecords, isSingleBlock, rawBlockCid, writeBlockDurably, hasBlockFile } from './raw-blocks.js'
import { DeferredBlocks } from './deferred-blocks.js'
import { SmallBlocks, TieredBlockstore, fitsSmallBlocks } from './small-blocks.js'
import { createFileWriter, type FileWriter } from './file-writer.js'
import { openEmbeddedStores, startHelia, type HeliaNode } from './embedded-open.js'
import { embeddedStorageError } from './backend-errors.js'
import { allBlocksPresent } from './block-presence.js'
import { code as RAW_CODEC } from 'multiformats/codecs/raw'

export interface EmbeddedStorageOptions {
  blocksDir: string
  datastoreDir: string
  logger?: Logger
  /** How a multi-block file's blocks are made durable together (default: its own createFileSyncer). */
  syncFiles?: SyncFiles
  /** The thread that writes deferred blocks (default: its own createFileWriter); a given one is not closed by stop(). */
  writer?: FileWriter
}

export async function createEmbeddedStorage (opts: EmbeddedStorageOptions): Promise<StorageBackend> {
  const { files, db, stagingDir } = await openEmbeddedStores(opts.blocksDir, opts.datastoreDir, opts.logger)
  opts.logger?.debug({ blocksDir: opts.blocksDir, datastoreDir: opts.datastoreDir }, 'embedded storage started')
  return new EmbeddedStorage(new TieredBlockstore(new SmallBlocks(db), files), db, new PinRecords(db), opts, stagingDir)
}

class EmbeddedStorage implements StorageBackend {
  readonly kind = 'embedded' as const
  #helia: Promise<HeliaNode> | null = null
  #unixfs: Promise<UnixFS> | null = null
  #stopped = false
  #size: FolderSize | null = null
  // Helia's pin bookkeeping is a read-modify-write of per-block counters with no lock of its
  // own; see PinLock for which pin changes may run side by side.
  readonly #pins = new PinLock()
  readonly #syncDir: DirSync = createDirSync()
  readonly #writer: FileWriter
  readonly #ownWriter: FileWriter | null
  // journaled single blocks not yet on disk (addDeferred): served from memory until written
  readonly #deferred: DeferredBlocks
  readonly #ownSyncer: FileSyncer | null
  readonly #syncFiles: SyncFiles

  constructor (
    private readonly blockstore: TieredBlockstore,
    /** The LevelDB of the small blocks and the pins (Helia's datastore too, once Helia starts). */
    private readonly db: ClassicLevel<string, Uint8Array>,
    private readonly pinRecords: PinRecords,
    private readonly opts: EmbeddedStorageOptions,
    /** Where blocks wait for their file's commit (staged-import.ts); null: no staging here. */
    private readonly stagingDir: string | null = null
  ) {
    this.#ownWriter = opts.writer === undefined ? createFileWriter() : null
    this.#writer = opts.writer ?? this.#ownWriter!
    this.#deferred = new DeferredBlocks(opts.blocksDir, this.#writer, async (blocks) => {
      await Promise.all(blocks.map(async ({ cid, bytes, path }) => {
        await this.#pins.shared(cid.toString(), async () => { await this.pinRecords.add(cid, [cid], path === null ? { bytes, sync: true } : {}) })
      }))
    })
    this.#ownSyncer = opts.syncFiles === undefined ? createFileSyncer() : null
    this.#syncFiles = opts.syncFiles ?? this.#ownSyncer!
  }

  /** Helia, for the pin machinery of multi-block files: started on first use (a failed start is tried again next time). */
  async #node (): Promise<HeliaNode> {
    const starting = this.#helia ??= startHelia(this.blockstore, this.db, this.opts.datastoreDir)
    try {
      return await starting
    } catch (err) {
      if (this.#helia === starting) this.#helia = null
      throw err
    }
  }

  /** UnixFS reads and multi-block adds straight on the blockstore (offline by construction). */
  async #fs (blockstore?: UnixFSComponents['blockstore']): Promise<UnixFS> {
    const make = async (store: UnixFSComponents['blockstore']): Promise<UnixFS> => (await import('@helia/unixfs')).unixfs({ blockstore: store })
    // one instance on the blockstore for every read; another only for a durable add's own store
    if (blockstore !== undefined) return await make(blockstore)
    if (this.#unixfs === null) {
      const made = make(this.blockstore as unknown as UnixFSComponents['blockstore'])
      made.catch(() => { if (this.#unixfs === made) this.#unixfs = null }) // a failed load is tried again
      this.#unixfs = made
    }
    return await this.#unixfs
  }

  expectLarge (op: 'add' | 'read'): void {
    // @helia/unixfs and its importer/exporter are a few hundred modules, loaded on first use; a
    // read of Hearth's own files needs only the block-by-block reader
    if (op === 'add') this.#fs().catch(() => {})
    else import('./verified-blocks.js').catch(() => {})
  }

  async add (bytes: Uint8Array, opts: { signal?: AbortSignal } = {}): Promise<string> {
    this.#assertRunning()
    if (!(bytes instanceof Uint8Array)) throw new HearthError('INVALID_ARGUMENT', 'storage add expects bytes')
    // Blocks are written (durably) before the pin, so a crash in between leaves unpinned blocks that
    // the next add of the same bytes finds and pins: add is idempotent and resumable.
    if (isSingleBlock(bytes)) {
      const cid = rawBlockCid(bytes)
      try {
        // idempotent re-adds (schema definitions at every start, re-imports) write nothing
        if (await this.#holdsPinned(cid, bytes)) return canonicalCid(cid)
        await this.#addSingle(cid, bytes, this.#syncDir)
      } catch (err) {
        throw this.#wrap(err, 'add', cid)
      }
      return canonicalCid(cid)
    }
    return await this.#importDurably([bytes], opts.signal)
  }

  async addStream (pieces: AsyncIterable<StreamPiece>, opts: { signal?: AbortSignal } = {}): Promise<string> {
    this.#assertRunning()
    // one piece is the whole file: the single-block path when it fits one chunk
    const split = await splitPieces(pieces)
    if ('single' in split) return await this.add(split.single, opts)
    // the pieces are given up (types.ts): a whole one is moved to the file writer, not copied;
    // one whose digest came with it is not hashed again (knownDigestLeaves)
    return await this.#importDurably(split.source, opts.signal, split.digests, true)
  }

  stageStream (pieces: AsyncIterable<StreamPiece>): StagedStream | null {
    if (this.stagingDir === null) return null
    this.#assertRunning()
    const staged = stageImport({
      stagingDir: this.stagingDir,
      blocksDir: this.opts.blocksDir,
      writer: this.#writer,
      syncFiles: this.#syncFiles,
      unixfs: async (store) => await this.#fs(store),
      pin: async (root, blocks) => { await this.#pinWritten(root, blocks) },
      addSingle: async (bytes) => await this.add(bytes)
    }, pieces)
    return { commit: async () => await staged.commit().catch((err: unknown) => { throw this.#wrap(err, 'add') }), discard: staged.discard }
  }

  /** A multi-block file stored durably (durable-import.ts), then pinned with every block it wrote; `move`: its pieces were given up. */
  async #importDurably (source: Iterable<Uint8Array> | AsyncIterable<Uint8Array>, signal?: AbortSignal, digests?: WeakMap<ArrayBufferLike, Uint8Array>, move = false): Promise<string> {
    let imported: { root: CID, written: CID[] }
    try {
      imported = await importDurably({
        blocksDir: this.opts.blocksDir,
        blockstore: this.blockstore,
        writer: this.#writer,
        syncFiles: this.#syncFiles,
        unixfs: async (store) => await this.#fs(store)
      }, source, signal, digests, { move })
    } catch (err) {
      throw this.#wrap(err, 'add')
    }
    await this.#pinWritten(imported.root, imported.written)
    return canonicalCid(imported.root)
  }

  /** A root pinned over the blocks just written for it: every block of the DAG, so no walk over them. */
  async #pinWritten (root: CID, blocks: CID[]): Promise<void> {
    await this.#pins.exclusive(async () => { await this.pinRecords.add(root, blocks) })
      .catch((err: unknown) => { throw this.#wrap(err, 'pin', root) })
  }

  async addUnsynced (bytes: Uint8Array): Promise<UnsyncedAdd | null> {
    this.#assertRunning()
    if (!(bytes instanceof Uint8Array) || !isSingleBlock(bytes)) return null
    const cid = rawBlockCid(bytes)
    try {
      // a small block is durable once its (group-committed) batch is: nothing left to sync
      const file = await this.#addSingle(cid, bytes, null)
      return { cid: canonicalCid(cid), files: file === null ? [] : [file] }
    } catch (err) {
      throw this.#wrap(err, 'add', cid)
    }
  }

  /**
   * Stores and pins one raw block: a small one in the pin batch (synced), a larger one as a file
   * (durably unless `syncDir` is null) before its pin. Returns the file written, if any.
   */
  async #addSingle (cid: CID, bytes: Uint8Array, syncDir: DirSync | null): Promise<string | null> {
    if (fitsSmallBlocks(bytes)) {
      await this.#pins.shared(cid.toString(), async () => { await this.pinRecords.add(cid, [cid], { bytes, sync: true }) })
      return null
    }
    const file = await writeBlockDurably(this.opts.blocksDir, cid, bytes, syncDir)
    await this.#pins.shared(cid.toString(), async () => { await this.pinRecords.add(cid) })
    return file
  }

  /** Whether this raw block is stored intact enough to skip a re-add (a block file: its size) and pinned. */
  async #holdsPinned (cid: CID, bytes: Uint8Array): Promise<boolean> {
    // a small block and its pin are in one LevelDB: one read answers both
    const { bytes: small, pinned } = await this.pinRecords.smallBlockAndPin(cid)
    if (small !== undefined) return pinned && Buffer.from(small.buffer, small.byteOffset, small.byteLength).equals(bytes)
    // a new block is one failed stat here
    return pinned && await hasBlockFile(this.opts.blocksDir, cid, bytes.byteLength)
  }

  async addDeferred (bytes: Uint8Array): Promise<UnsyncedAdd | null> {
    this.#assertRunning()
    if (!(bytes instanceof Uint8Array) || !isSingleBlock(bytes)) return null
    const cid = rawBlockCid(bytes)
    const file = this.#deferred.stage(cid, bytes)
    return { cid: canonicalCid(cid), files: file === null ? [] : [file] }
  }

  async writeDeferred (): Promise<void> {
    try {
      await this.#deferred.flush()
    } catch (err) {
      throw this.#wrap(err, 'add')
    }
  }

  async pin (cid: string, opts: { signal?: AbortSignal } = {}): Promise<void> {
    this.#assertRunning()
    const parsed = parseCid(cid)
    if (this.#deferred.has(parsed)) return // pinned when its block is written
    // Checked first: Helia's pin walker reports a missing block as an unhandled rejection of its own.
    if (!(await this.has(cid))) {
      throw new HearthError('STORAGE_NOT_FOUND', `content not found locally: ${canonicalCid(parsed)}`, { backend: 'embedded', op: 'pin', cid: canonicalCid(parsed) })
    }
    if (parsed.code === RAW_CODEC) {
      await this.#pins.shared(parsed.toString(), async () => { await this.pinRecords.add(parsed) })
        .catch((err: unknown) => { throw this.#wrap(err, 'pin', parsed) })
      return
    }
    await this.#pinRecursively(parsed, opts.signal)
  }

  async get (cid: string, opts: { signal?: AbortSignal } = {}): Promise<Uint8Array> {
    this.#assertRunning()
    const parsed = parseCid(cid)
    const waiting = this.#deferred.get(parsed)
    if (waiting !== undefined) return waiting
    const chunks: Uint8Array[] = []
    let length = 0
    try {
      // a raw CID is one block, small (LevelDB) or a file: read as it is, without UnixFS
      const source = parsed.code === RAW_CODEC ? this.blockstore.get(parsed, opts) : (await this.#fs()).cat(parsed, { offline: true, signal: opts.signal })
      for await (const chunk of source) {
        chunks.push(chunk)
        length += chunk.length
      }
    } catch (err) {
      throw this.#wrap(err, 'get', parsed)
    }
    if (chunks.length === 1) return chunks[0]
    const out = new Uint8Array(length)
    let offset = 0
    for (const c of chunks) { out.set(c, offset); offset += c.length }
    return out
  }

  async readVerified (cid: string, opts: { signal?: AbortSignal } = {}): Promise<Uint8Array | null> {
    this.#assertRunning()
    const parsed = parseCid(cid)
    if (parsed.code === RAW_CODEC) return null // one block: `get` reads it (from memory when deferred)
    try {
      // loaded with the first multi-block read, like the UnixFS code it stands in for
      const { readVerifiedFile } = await import('./verified-blocks.js')
      return await readVerifiedFile(this.opts.blocksDir, parsed, opts)
    } catch (err) {
      throw this.#wrap(err, 'get', parsed)
    }
  }

  async has (cid: string): Promise<boolean> {
    if (this.#stopped) return false
    let parsed: CID
    try { parsed = parseCid(cid) } catch { return false }
    if (this.#deferred.has(parsed)) return true
    try {
      if (!(await this.blockstore.has(parsed))) return false
      // A recursive pin was only recorded after every block of the DAG was read, so it proves the
      // whole file is here without reading it again.
      if (await this.#isPinnedRoot(parsed)) return true
      if (parsed.code === RAW_CODEC) return true
      const stat = await (await this.#fs()).stat(parsed, { extended: true, offline: true })
      return stat.type === 'raw' || (stat.type === 'file' && stat.localSize === stat.size)
    } catch {
      return false
    }
  }

  async present (cid: string): Promise<boolean> {
    let parsed: CID
    try { parsed = parseCid(cid) } catch { return false }
    if (this.#stopped) return false
    if (this.#deferred.has(parsed)) return true
    return await allBlocksPresent(this.blockstore, parsed)
  }

  async unpin (cid: string): Promise<void> {
    this.#assertRunning()
    const parsed = parseCid(cid)
    if (parsed.code === RAW_CODEC) {
      await this.#deferred.drop(parsed)
      await this.#pins.shared(parsed.toString(), async () => { await this.pinRecords.removeSingleBlock(parsed) })
        .catch((err: unknown) => { throw this.#wrap(err, 'unpin', parsed) })
      return
    }
    await this.#serialPin(parsed, async () => {
      if (!(await this.#isPinnedRoot(parsed))) return
      const helia = await this.#node()
      for await (const _ of helia.pins.rm(parsed, { offline: true, walker: sequentialWalker } as object)) { /* drain */ }
    }).catch((err: unknown) => { throw this.#wrap(err, 'unpin', parsed) })
  }

  async health (): Promise<StorageHealth> {
    if (this.#stopped) return { ok: false, detail: 'embedded IPFS node is stopped' }
    // the block files and the LevelDB holding the small blocks (and the pins)
    this.#size ??= folderSize([this.opts.blocksDir, this.opts.datastoreDir])
    return { ok: true, detail: `embedded IPFS node, blocks in ${this.opts.blocksDir}`, bytes: this.#size.current() }
  }

  async stop (): Promise<void> {
    if (this.#stopped) return
    // blocks still in memory are written (their journal entries, if any, are replayed anyway)
    await this.#deferred.flush().catch((err: unknown) => { this.opts.logger?.warn({ err }, 'writing deferred blocks at stop failed') })
    this.#stopped = true
    await this.#size?.settled()
    await this.#pins.idle().catch(() => {})
    try {
      const helia = await this.#helia?.catch(() => null)
      await helia?.stop()
    } finally {
      await this.#ownWriter?.close()
      this.#ownSyncer?.close()
      await this.blockstore.files.close()
      await this.db.close()
      this.opts.logger?.debug({ blocksDir: this.opts.blocksDir }, 'embedded storage stopped')
    }
  }

  async #pinRecursively (cid: CID, signal?: AbortSignal): Promise<void> {
    await this.#serialPin(cid, async () => {
      try {
        // "Already pinned" is answered from the pin index before any block is read.
        const helia = await this.#node()
        for await (const _ of helia.pins.add(cid, { signal, offline: true, walker: sequentialWalker } as object)) { /* drain */ }
      } catch (err) {
        if ((err as Error)?.name !== 'AlreadyPinnedError') throw err
      }
    }).catch((err: unknown) => { throw this.#wrap(err, 'pin', cid) })
  }

  /** Helia's pin record of `cid` (PinRecords reads the same key), without starting Helia. */
  async #isPinnedRoot (cid: CID): Promise<boolean> {
    return await this.pinRecords.has(cid)
  }

  #serialPin<T> (cid: CID, fn: () => Promise<T>): Promise<T> {
    return cid.code === RAW_CODEC ? this.#pins.shared(cid.toString(), fn) : this.#pins.exclusive(fn)
  }

  #assertRunning (): void {
    if (this.#stopped) throw new HearthError('STORAGE_UNAVAILABLE', 'embedded storage is stopped', { backend: 'embedded' })
  }

  #wrap (err: unknown, op: string, cid?: CID): Error {
    return embeddedStorageError(err, op, cid, this.opts.logger)
  }
}
