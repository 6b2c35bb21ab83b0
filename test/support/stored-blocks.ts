// The blocks of an embedded store that is not running, whichever tier holds them: a small block
// in the LevelDB beside the pins (src/storage/small-blocks.ts), any other as a block file. For
// tests that damage, remove or serve stored blocks as a disk or a gateway would.
import { readFile, rm, writeFile } from 'node:fs/promises'
import { existsSync } from 'node:fs'
import { dirname, join } from 'node:path'
import { ClassicLevel } from 'classic-level'
import type { CID } from 'multiformats/cid'
import { base36Of, blockFilePath } from '../../src/storage/raw-blocks.js'
import { SMALL_BLOCK_RANGE, smallBlockKey } from '../../src/storage/small-blocks.js'

/** An embedded store's folders (a home layout has both). */
export interface BlockDirs { blocks: string; datastore: string }

/** The folders of a store whose datastore sits beside its blocks folder (homes and most tests). */
export function blockDirsOf (blocksDir: string): BlockDirs {
  return { blocks: blocksDir, datastore: join(dirname(blocksDir), 'datastore') }
}

/** Runs `fn` on the store's LevelDB (null when there is none), closed afterwards; fails while the store runs. */
async function withLevel<T> (dirs: BlockDirs, fn: (db: ClassicLevel<string, Uint8Array> | null) => Promise<T>): Promise<T> {
  if (!existsSync(join(dirs.datastore, 'CURRENT'))) return await fn(null)
  const db = new ClassicLevel<string, Uint8Array>(dirs.datastore, { keyEncoding: 'utf8', valueEncoding: 'view' })
  await db.open({ createIfMissing: false })
  try { return await fn(db) } finally { await db.close() }
}

/** The stored bytes of a block and where they are, or null when neither tier has it. */
export async function readStoredBlock (dirs: BlockDirs, cid: CID): Promise<{ bytes: Uint8Array; tier: 'small' | 'file' } | null> {
  const small = await withLevel(dirs, async (db) => await db?.get(smallBlockKey(cid)))
  if (small !== undefined) return { bytes: small, tier: 'small' }
  const file = await readFile(blockFilePath(dirs.blocks, cid)).catch(() => null)
  return file === null ? null : { bytes: file, tier: 'file' }
}

/** Replaces the stored bytes of a block where it is kept (as a disk's damage would). */
export async function overwriteStoredBlock (dirs: BlockDirs, cid: CID, bytes: Uint8Array): Promise<void> {
  const where = await readStoredBlock(dirs, cid)
  if (where === null) throw new Error(`no stored block ${cid.toString()}`)
  if (where.tier === 'small') await withLevel(dirs, async (db) => { await db!.put(smallBlockKey(cid), bytes) })
  else await writeFile(blockFilePath(dirs.blocks, cid), bytes)
}

/**
 * Removes a block from both tiers (no error when it is in neither); `pin`: its pin record too (a
 * block a killed process never wrote: it waited in memory for the journal's checkpoint).
 */
export async function removeStoredBlock (dirs: BlockDirs, cid: CID, opts: { pin?: boolean } = {}): Promise<void> {
  await withLevel(dirs, async (db) => {
    await db?.del(smallBlockKey(cid))
    if (opts.pin === true) await db?.batch([{ type: 'del', key: pinKey(cid) }, { type: 'del', key: pinnedBlockKey(cid) }])
  })
  await rm(blockFilePath(dirs.blocks, cid), { force: true })
}

// Helia's pin records as raw-blocks.ts writes them
const pinKey = (cid: CID): string => `/pin/${base36Of(cid.toV1().bytes)}`
const pinnedBlockKey = (cid: CID): string => `/pinned-block/${base36Of(cid.multihash.bytes)}`

/** Whether the store pins `cid` (a single block's recursive pin). */
export async function isPinned (dirs: BlockDirs, cid: CID): Promise<boolean> {
  return await withLevel(dirs, async (db) => (await db?.get(pinKey(cid))) !== undefined)
}

/** Every small block of the store, by key (read once: the LevelDB is closed again at once). */
export async function smallBlocksOf (dirs: BlockDirs): Promise<Map<string, Uint8Array>> {
  return await withLevel(dirs, async (db) => {
    const out = new Map<string, Uint8Array>()
    if (db === null) return out
    for await (const [key, value] of db.iterator(SMALL_BLOCK_RANGE)) out.set(key, value)
    return out
  })
}
