// A multi-block file through Helia's importer with `ipfs add` parameters, each block written (temp,
// rename, on the file writer's thread) as the importer hands it over, so a file still arriving is
// being stored already. The blocks are written without syncs of their own and made durable
// together once the last one is written: one syncfs for all of them and their folders
// (deferred-sync.ts) instead of a file and a folder fsync per 256 KiB block (80 for a 10 MB file).
// Nothing names the file's CID before that (its pin, the caller's index record), so a crash in
// between leaves only unreferenced blocks. The embedded backend records the pin afterwards.
import type { UnixFS, UnixFSComponents } from '@helia/unixfs'
import type { CID } from 'multiformats/cid'
import { unixfsAddOptions } from './cid.js'
import { blockFilePath } from './raw-blocks.js'
import { knownDigestLeaves } from './stream-pieces.js'
import { blockSink } from './block-sink.js'
import type { FileWriter } from './file-writer.js'
import type { SyncFiles } from './deferred-sync.js'

export interface DurableImportDeps {
  blocksDir: string
  /** Where blocks already held are read from (the importer asks for them). */
  blockstore: { get: (c: CID, o?: object) => unknown, has: (c: CID, o?: object) => Promise<boolean> }
  writer: FileWriter
  syncFiles: SyncFiles
  /** UnixFS over the given blockstore. */
  unixfs: (blockstore: UnixFSComponents['blockstore']) => Promise<UnixFS>
}

/** The file's root and every block written for it (all durable when this resolves). */
export async function importDurably (
  deps: DurableImportDeps,
  source: Iterable<Uint8Array> | AsyncIterable<Uint8Array>,
  signal?: AbortSignal,
  digests?: WeakMap<ArrayBufferLike, Uint8Array>,
  opts: { move?: boolean } = {}
): Promise<{ root: CID, written: CID[] }> {
  const written: CID[] = []
  const files: string[] = []
  const { blockstore, blocksDir, writer } = deps
  // a block's create, write and rename cost the main thread a share of one message instead of four
  // fs calls, and the importer does not wait for it (block-sink.ts)
  const sink = blockSink(writer, { replace: true, move: opts.move === true })
  const durable = {
    put: async (c: CID, b: Uint8Array) => { const path = blockFilePath(blocksDir, c); sink.put(c, path, b); files.push(path); written.push(c); return c },
    get: (c: CID, o?: object) => blockstore.get(c, o),
    has: async (c: CID, o?: object) => await blockstore.has(c, o)
  } as unknown as UnixFSComponents['blockstore']
  // each piece goes on as it comes (no batches of ten to wait for: the puts do not block); the
  // leaf step reads a block's size before its put, which may move its buffer away
  const options = { ...unixfsAddOptions(), signal, blockWriteConcurrency: 1, bufferImporter: knownDigestLeaves(digests ?? new WeakMap()) }
  let root: CID
  try {
    root = await (await deps.unixfs(durable)).addByteStream(source, options)
  } catch (err) {
    await sink.flush().catch(() => {}) // a failed import's writes end before it is reported
    throw err
  }
  await sink.flush()
  await deps.syncFiles(files)
  return { root, written }
}
