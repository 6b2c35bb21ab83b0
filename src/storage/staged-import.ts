// A multi-block file's blocks written before it is known whether the file is to be kept: a large
// POST body's ciphertext comes off the encryption worker while the body is still arriving and
// being parsed and validated (ingest/early-store.ts), and storing it then, rather than after the
// validation, leaves only the commit (a rename per block, one sync, the pin) and the index batch
// for after it.
//
// Where the blocks go until then, and why: into a staging folder beside the blockstore
// (`ipfs/staged-blocks`), under names of this import's own (`<random id>.<block name>`), synced
// there once the last one is written (the body is still being validated meanwhile). Nothing in
// the blockstore changes before `commit`, which renames them over their blockstore names (a block
// another file holds already has the same bytes: content-addressed), syncs, and pins the root.
//   - A body that fails (not canonical, invalid, a client gone, a worker given back): `discard`
//     removes this import's staged files and nothing else. No block of the blockstore is touched,
//     so a block another record pins (or another import is writing) cannot be lost, and nothing
//     is pinned, listed or counted in `storage.bytes` (which counts the blockstore and the
//     datastore, not this folder).
//   - A crash (or a kill) before the commit: the files are left in the staging folder, which the
//     next start empties before any import runs (stageSweep; the datastore's lock is held, so no
//     other process is staging). A crash during the commit leaves blocks in the blockstore that
//     no pin and no record names, as a crash inside an ordinary add does (durable-import.ts).
import { randomBytes } from 'node:crypto'
import { readdir, rm, stat } from 'node:fs/promises'
import { basename, dirname, join } from 'node:path'
import type { UnixFS, UnixFSComponents } from '@helia/unixfs'
import type { CID } from 'multiformats/cid'
import { HearthError } from '../errors.js'
import { canonicalCid, unixfsAddOptions } from './cid.js'
import { blockFilePath } from './raw-blocks.js'
import { knownDigestLeaves, splitPieces, type StreamPiece } from './stream-pieces.js'
import type { FileWriter } from './file-writer.js'
import { blockSink } from './block-sink.js'
import type { SyncFiles } from './deferred-sync.js'

/** A streamed add whose blocks are written but not yet part of the blockstore (StorageBackend.stageStream). */
export interface StagedStream {
  /** Moves the blocks into the blockstore, makes them durable and pins the root: the file's CID. Once. */
  commit (): Promise<string>
  /** Removes what was staged (the pieces' source is the caller's to end first). Nothing else changes. */
  discard (): Promise<void>
}

export interface StagedImportDeps {
  stagingDir: string
  blocksDir: string
  writer: FileWriter
  syncFiles: SyncFiles
  /** UnixFS over the given blockstore (the staging one here). */
  unixfs: (blockstore: UnixFSComponents['blockstore']) => Promise<UnixFS>
  /** Records the root's pin over the blocks just moved in. */
  pin: (root: CID, blocks: CID[]) => Promise<void>
  /** A file of one piece: the ordinary add (a single block, nothing to stage). */
  addSingle: (bytes: Uint8Array) => Promise<string>
}

/** The staging folder of a blockstore: its sibling, on the same filesystem (renames). */
export function stagingDirOf (blocksDir: string): string {
  return join(dirname(blocksDir), 'staged-blocks')
}

/**
 * At start, before any import: the staging folder emptied (files a crashed run left) and its
 * path, or null when it would not be on the blockstore's filesystem (a rename could not move a
 * block in; such a store adds after the validation, as before). Returns how many files it removed.
 */
export async function stageSweep (blocksDir: string): Promise<{ dir: string | null; removed: number }> {
  const dir = stagingDirOf(blocksDir)
  const names = await readdir(dir).catch((err: NodeJS.ErrnoException) => { if (err.code === 'ENOENT') return []; throw err })
  await Promise.all(names.map(async (name) => { await rm(join(dir, name), { force: true, recursive: true }) }))
  const [parent, blocks] = await Promise.all([stat(dirname(blocksDir)), stat(blocksDir)])
  return { dir: parent.dev === blocks.dev ? dir : null, removed: names.length }
}

export function stageImport (deps: StagedImportDeps, pieces: AsyncIterable<StreamPiece>): StagedStream {
  const id = randomBytes(6).toString('hex')
  /** Staged block name → where it goes and its CID (a block put twice is staged once). */
  const staged = new Map<string, { to: string; cid: CID }>()
  // the importer does not wait for each write (block-sink.ts); discard and commit wait for all of them
  const sink = blockSink(deps.writer, { replace: false, move: true })
  let state: 'staging' | 'committing' | 'done' | 'discarded' = 'staging'
  const abort = new AbortController()

  async function putStaged (cid: CID, bytes: Uint8Array): Promise<CID> {
    if (state === 'discarded') throw new HearthError('INVALID_ARGUMENT', 'the staged add was discarded')
    const to = blockFilePath(deps.blocksDir, cid)
    const from = join(deps.stagingDir, `${id}.${basename(to)}`)
    // known before it is written: a discard removes it whether its write finished or failed
    staged.set(from, { to, cid })
    sink.put(cid, from, bytes)
    return cid
  }

  // The import runs from now on: each block is written as the importer hands it over, and all of
  // them are synced once the last one is (before the caller has decided, which is the point).
  const importing = (async (): Promise<CID | Uint8Array> => {
    // nothing to stage for a file of one piece (or none): the commit adds it as a single block
    const split = await splitPieces(pieces)
    if ('single' in split) return split.single
    const store = {
      put: putStaged,
      get: () => { throw new Error('a staged import reads no block') },
      has: async () => false
    } as unknown as UnixFSComponents['blockstore']
    // each piece goes on as it comes (the puts do not block: no batches of ten to wait for)
    const root = await (await deps.unixfs(store)).addByteStream(split.source, { ...unixfsAddOptions(), signal: abort.signal, blockWriteConcurrency: 1, bufferImporter: knownDigestLeaves(split.digests) })
    await sink.flush()
    await deps.syncFiles([...staged.keys()])
    return root
  })()
  importing.catch(() => {}) // met by commit or discard

  return {
    async commit () {
      if (state !== 'staging') throw new Error(`a staged add is committed once (it is ${state})`)
      state = 'committing'
      let root: CID | Uint8Array
      try {
        root = await importing
      } catch (err) {
        // not all there (a source that failed, a full disk): what was staged goes, as on discard
        await sink.flush().catch(() => {})
        await deps.writer.removeFiles([...staged.keys()]).catch(() => {})
        state = 'done'
        throw err
      }
      try {
        if (root instanceof Uint8Array) return await deps.addSingle(root)
        const blocks = [...staged]
        await deps.writer.moveFiles(blocks.map(([from, { to }]) => ({ from, to })))
        staged.clear()
        await deps.syncFiles(blocks.map(([, { to }]) => to))
        await deps.pin(root, blocks.map(([, { cid }]) => cid))
        return canonicalCid(root)
      } finally {
        state = 'done'
      }
    },
    async discard () {
      if (state !== 'staging') return
      state = 'discarded'
      abort.abort()
      // every block write already asked for ends first, so every file staged is known here
      await importing.catch(() => {})
      await sink.flush().catch(() => {})
      await deps.writer.removeFiles([...staged.keys()])
      staged.clear()
    }
  }
}
