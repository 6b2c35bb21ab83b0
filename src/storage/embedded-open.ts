// Opening the embedded backend's stores (embedded.ts): the block files, the LevelDB that holds the
// pins and the small blocks, the staging folder of large files' blocks (emptied), and Helia on top of them when the pin machinery of a multi-block file
// needs it. No networking: createHeliaLight has no libp2p, block brokers or routers. Helia's view
// of the LevelDB (datastore-level, with datastore-core and the it-* helpers: ~15–50 ms of a start's
// module loading) is made with Helia, on first use: nothing else reads the LevelDB through it.
import type { createHeliaLight } from 'helia'
import type { LevelDatastore } from 'datastore-level'
import { FsBlockstore } from 'blockstore-fs'
import { ClassicLevel } from 'classic-level'
import { mkdir } from 'node:fs/promises'
import { HearthError } from '../errors.js'
import { guardTornLog } from '../db/torn-log.js'
import type { Logger } from '../log.js'
import { errorMessage } from './backend-errors.js'
import { stageSweep } from './staged-import.js'
import type { TieredBlockstore } from './small-blocks.js'

export type HeliaNode = ReturnType<typeof createHeliaLight>

export interface EmbeddedStores {
  files: FsBlockstore
  db: ClassicLevel<string, Uint8Array>
  /** Where a large file's blocks wait for its commit (staged-import.ts); null: none here. */
  stagingDir: string | null
}

export async function openEmbeddedStores (blocksDir: string, datastoreDir: string, logger?: Logger): Promise<EmbeddedStores> {
  const files = new FsBlockstore(blocksDir)
  // The LevelDB handle is opened here rather than by LevelDatastore, whose open() flattens the
  // error to a string and so hides the one failure worth explaining: the folder is locked.
  // LevelDB maps every table it holds open (1,000 by default): the small blocks read once (the
  // presence pass at start) stayed in the daemon's RSS, 128 MB of a home with a million search
  // records. 74 is the least LevelDB takes (64 tables, ~128 MB of 2 MB tables at most).
  const db = new ClassicLevel<string, Uint8Array>(datastoreDir, { keyEncoding: 'utf8', valueEncoding: 'view', maxOpenFiles: 74 })
  try {
    await mkdir(datastoreDir, { recursive: true })
    await files.open()
    await db.open({ createIfMissing: true, compression: false })
  } catch (err) {
    await db.close().catch(() => {})
    throw new HearthError('STORAGE_UNAVAILABLE', openFailureMessage(err, datastoreDir), {
      backend: 'embedded', blocksDir, datastoreDir
    }, { cause: err })
  }
  guardTornLog(db, { location: datastoreDir })
  return { files, db, stagingDir: await emptyStaging(blocksDir, logger) }
}

/** The staging folder, emptied: the datastore's lock is held, so what it holds is a crashed run's. */
async function emptyStaging (blocksDir: string, logger?: Logger): Promise<string | null> {
  try {
    const swept = await stageSweep(blocksDir)
    if (swept.removed > 0) logger?.info({ removed: swept.removed }, 'removed blocks a previous run staged and never stored')
    return swept.dir
  } catch (err) {
    // large files are then stored after their validation, as they were before staging existed
    logger?.warn({ err }, 'the staging folder of the blocks cannot be used')
    return null
  }
}

/** Helia on this node's own stores (no network), started; loaded on first use. */
export async function startHelia (blockstore: TieredBlockstore, db: ClassicLevel<string, Uint8Array>, datastoreDir: string): Promise<HeliaNode> {
  const [{ createHeliaLight }, { LevelDatastore }] = await Promise.all([import('helia'), import('datastore-level')])
  try {
    // Same classic-level module datastore-level itself builds on; only the declared types differ.
    // The handle is open already (opening it again is a no-op); the embedded storage closes it.
    const datastore: LevelDatastore = new LevelDatastore(db as unknown as ConstructorParameters<typeof LevelDatastore>[0])
    await datastore.open()
    const helia = createHeliaLight({ blockstore, datastore })
    await helia.start()
    return helia
  } catch (err) {
    throw new HearthError('STORAGE_UNAVAILABLE', `embedded IPFS node failed to start: ${errorMessage(err)}`,
      { backend: 'embedded', datastoreDir }, { cause: err })
  }
}

function openFailureMessage (err: unknown, datastoreDir: string): string {
  const cause = (err as { cause?: { code?: string } })?.cause
  if (cause?.code === 'LEVEL_LOCKED') {
    return `embedded IPFS store ${datastoreDir} is in use by another process (is the daemon running?)`
  }
  return `cannot open embedded IPFS store ${datastoreDir}: ${errorMessage(cause ?? err)}`
}
