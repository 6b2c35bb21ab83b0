// A bare Helia node on the folders an embedded store left (stopped): an independent look at its
// pins and blocks, and Helia's own garbage collection over both block tiers (small blocks in the
// datastore's LevelDB, block files).
import { join } from 'node:path'
import { createHeliaLight } from 'helia'
import { FsBlockstore } from 'blockstore-fs'
import { LevelDatastore } from 'datastore-level'
import { ClassicLevel } from 'classic-level'
import { CID } from 'multiformats/cid'
import { SmallBlocks, TieredBlockstore } from '../../src/storage/small-blocks.js'

export interface HeliaInspection {
  pinned (cid: string): Promise<boolean>
  gc (): Promise<void>
  hasBlock (cid: string): Promise<boolean>
  close (): Promise<void>
}

/**
 * Opens the same folders with a bare Helia node on both block tiers (the small blocks in the
 * datastore's LevelDB, the block files): an independent look at what our backend left on disk.
 */
export async function inspectWithHelia (dir: string): Promise<HeliaInspection> {
  const files = new FsBlockstore(join(dir, 'blocks'))
  const db = new ClassicLevel<string, Uint8Array>(join(dir, 'datastore'), { keyEncoding: 'utf8', valueEncoding: 'view' })
  await files.open()
  await db.open()
  const datastore = new LevelDatastore(db as unknown as ConstructorParameters<typeof LevelDatastore>[0])
  await datastore.open()
  const blockstore = new TieredBlockstore(new SmallBlocks(db), files)
  const helia = createHeliaLight({ blockstore, datastore })
  await helia.start()
  return {
    pinned: async (cid) => await helia.pins.get(CID.parse(cid)).then(() => true, () => false),
    gc: async () => { await helia.gc() },
    hasBlock: async (cid) => await blockstore.has(CID.parse(cid)),
    close: async () => { await helia.stop(); await files.close(); await datastore.close() }
  }
}
