// Add throughput of the storage backends, side by side in one run: embedded (in-process Helia,
// blocks on disk) versus kubo (a real Kubo daemon over its RPC API, on loopback,
// started here with a fresh repo). Inputs are random bytes, i.e. what ciphertext looks like.
// First, the two ways a journal checkpoint can store single raw blocks of a given size, on fresh
// folders in one run: into the LevelDB beside their pins (one synced batch, then a full compaction,
// which rewrites every value once as LevelDB's own compactions will) or as block files (written on
// the file-writer thread, made durable by one syncfs, pins in an unsynced batch): wall time and
// CPU per block (this process, every thread; the `sync -f` child is not counted). The size where
// the files win is the bound of the LevelDB tier (src/storage/small-blocks.ts).
//
//   node --import tsx bench/storage.ts [--small N] [--large N] [--concurrency a,b] [--tiers-only]
import '../src/polyfill.js'
import { randomBytes } from 'node:crypto'
import { mkdtemp, rm } from 'node:fs/promises'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { parseArgs } from 'node:util'
import { ClassicLevel } from 'classic-level'
import { createEmbeddedStorage } from '../src/storage/embedded.js'
import { createFileWriter } from '../src/storage/file-writer.js'
import { createFileSyncer } from '../src/storage/deferred-sync.js'
import { PinRecords, blockFilePath, rawBlockCid } from '../src/storage/raw-blocks.js'
import { SMALL_BLOCK_MAX_BYTES } from '../src/storage/small-blocks.js'
import { createKuboStorage } from '../src/storage/kubo.js'
import type { StorageBackend } from '../src/storage/types.js'
import { startIpfsDaemon } from '../test/support/ipfs-daemon.js'

const { values } = parseArgs({
  options: {
    small: { type: 'string', default: '1000' },
    large: { type: 'string', default: '8' },
    concurrency: { type: 'string', default: '1,8' },
    'tiers-only': { type: 'boolean', default: false }
  }
})
const SMALL_COUNT = Number(values.small)
const LARGE_COUNT = Number(values.large)
const CONCURRENCY = values.concurrency.split(',').map(Number)

interface Row { backend: string; size: string; concurrency: number; files: number; seconds: number; filesPerSec: number; mbPerSec: number; readMbPerSec: number }

async function measure (backend: StorageBackend, label: string, inputs: Uint8Array[], concurrency: number): Promise<Row> {
  const cids = new Array<string>(inputs.length)
  let next = 0
  const started = process.hrtime.bigint()
  await Promise.all(Array.from({ length: concurrency }, async () => {
    while (next < inputs.length) { const i = next++; cids[i] = await backend.add(inputs[i]) }
  }))
  const seconds = Number(process.hrtime.bigint() - started) / 1e9
  const bytes = inputs.reduce((n, b) => n + b.length, 0)
  const readStarted = process.hrtime.bigint()
  for (const cid of cids) await backend.get(cid)
  const readSeconds = Number(process.hrtime.bigint() - readStarted) / 1e9
  return {
    backend: backend.kind,
    size: label,
    concurrency,
    files: inputs.length,
    seconds: round(seconds),
    filesPerSec: round(inputs.length / seconds),
    mbPerSec: round(bytes / 1e6 / seconds),
    readMbPerSec: round(bytes / 1e6 / readSeconds)
  }
}

function round (n: number): number { return Math.round(n * 100) / 100 }

const cpuNow = (): number => { const u = process.cpuUsage(); return (u.user + u.system) / 1000 }

interface TierRow { size: string; blocks: number; 'LevelDB ms/block': number; 'LevelDB CPU ms/block': number; 'files ms/block': number; 'files CPU ms/block': number }

/** Stores `count` fresh blocks of `size` bytes in checkpoints of 64, both ways, on fresh folders under `dir`. */
async function compareTiers (dir: string, size: number, count: number): Promise<TierRow> {
  const GROUP = 64
  const groups = (): Uint8Array[][] => Array.from({ length: Math.ceil(count / GROUP) }, () => Array.from({ length: GROUP }, () => randomBytes(size)))
  // LevelDB: each checkpoint is one synced batch of blocks and pins (what the embedded store does)
  const level = new ClassicLevel<string, Uint8Array>(join(dir, `level-${size}`), { keyEncoding: 'utf8', valueEncoding: 'view' })
  await level.open({ compression: false })
  const inLevel = new PinRecords(level)
  const levelInputs = groups()
  let cpu = cpuNow()
  let started = performance.now()
  for (const group of levelInputs) await Promise.all(group.map(async (b) => { const cid = rawBlockCid(b); await inLevel.add(cid, [cid], { bytes: b, sync: true }) }))
  await level.compactRange('\x00', '\xff')
  const levelMs = performance.now() - started
  const levelCpu = cpuNow() - cpu
  await level.close()
  // files: each checkpoint writes its blocks on the writer thread, one syncfs, the pins unsynced
  const blocksDir = join(dir, `files-${size}`)
  const pinDb = new ClassicLevel<string, Uint8Array>(join(dir, `pins-${size}`), { keyEncoding: 'utf8', valueEncoding: 'view' })
  await pinDb.open({ compression: false })
  const pins = new PinRecords(pinDb)
  const writer = createFileWriter()
  const syncer = createFileSyncer()
  const fileInputs = groups()
  cpu = cpuNow()
  started = performance.now()
  for (const group of fileInputs) {
    const blocks = group.map((bytes) => { const cid = rawBlockCid(bytes); return { cid, bytes, path: blockFilePath(blocksDir, cid) } })
    await writer.writeBlocks(blocks)
    await Promise.all(blocks.map(async (b) => { await pins.add(b.cid) }))
    await syncer(blocks.map((b) => b.path))
  }
  const filesMs = performance.now() - started
  const filesCpu = cpuNow() - cpu
  await writer.close()
  syncer.close()
  await pinDb.close()
  const blocks = levelInputs.length * GROUP
  return {
    size: size >= 1024 ? `${size / 1024} KiB` : `${size} B`,
    blocks,
    'LevelDB ms/block': round(levelMs / blocks),
    'LevelDB CPU ms/block': round(levelCpu / blocks),
    'files ms/block': round(filesMs / blocks),
    'files CPU ms/block': round(filesCpu / blocks)
  }
}

const cleanups: Array<() => Promise<void> | void> = []
const context = { after: (fn: () => Promise<void> | void) => { cleanups.push(fn) } }
try {
  const dir = await mkdtemp(join(tmpdir(), 'hearth-bench-storage-'))
  cleanups.push(async () => { await rm(dir, { recursive: true, force: true }) })
  const tierRows: TierRow[] = []
  for (const [size, count] of [[1024, 2048], [4096, 1024], [16_384, 1024], [SMALL_BLOCK_MAX_BYTES, 512], [65_536, 512], [262_144, 256]] as const) {
    tierRows.push(await compareTiers(dir, size, count))
  }
  console.log(`single raw blocks stored by a checkpoint of 64: in LevelDB with their pins (synced batch + a full compaction) vs block files (writer thread + syncfs); the LevelDB tier holds blocks up to ${SMALL_BLOCK_MAX_BYTES} bytes`)
  console.table(tierRows)
  if (!values['tiers-only']) {
    const daemon = await startIpfsDaemon(context as never)
    const backends: StorageBackend[] = [
      await createEmbeddedStorage({ blocksDir: join(dir, 'blocks'), datastoreDir: join(dir, 'datastore') }),
      createKuboStorage({ url: daemon.apiUrl, timeoutMs: 120_000 })
    ]
    for (const b of backends) cleanups.push(async () => { await b.stop() })

    const rows: Row[] = []
    for (const concurrency of CONCURRENCY) {
      for (const backend of backends) {
        // Fresh random inputs per run: a backend never finds a block it already has.
        rows.push(await measure(backend, '1 KB', Array.from({ length: SMALL_COUNT }, () => randomBytes(1024)), concurrency))
        rows.push(await measure(backend, '10 MB', Array.from({ length: LARGE_COUNT }, () => randomBytes(10 * 1024 * 1024)), concurrency))
      }
    }
    console.log(`storage add throughput (random bytes; ${SMALL_COUNT} × 1 KB, ${LARGE_COUNT} × 10 MB per row; read = get of the same files, sequential)`)
    console.table(rows)
  }
} finally {
  for (const fn of cleanups.reverse()) await fn()
}
