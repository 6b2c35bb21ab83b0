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
  digests?: WeakMap<ArrayBufferLike, Uint8Array>
): Promise<{ root: CID, written: CID[] }> {
  const written: CID[] = []
  const files: string[] = []
  const { blockstore, blocksDir, writer } = deps
  const durable = {
    // a block's create, write and rename cost the main thread one message instead of four fs calls
    put: async (c: CID, b: Uint8Array) => { const path = blockFilePath(blocksDir, c); await writer.replaceBlocks([{ path, bytes: b }]); files.push(path); written.push(c); return c },
    get: (c: CID, o?: object) => blockstore.get(c, o),
    has: async (c: CID, o?: object) => await blockstore.has(c, o)
  } as unknown as UnixFSComponents['blockstore']
  const options = { ...unixfsAddOptions(), signal, ...(digests !== undefined ? { bufferImporter: knownDigestLeaves(digests) } : {}) }
  const root = await (await deps.unixfs(durable)).addByteStream(source, options)
  await deps.syncFiles(files)
  return { root, written }
}
