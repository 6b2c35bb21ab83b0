// Add throughput of the storage backends, side by side in one run: embedded (in-process Helia,
// blocks on disk) versus kubo (a real js-ipfs 0.66 daemon over its RPC API, offline, on loopback,
// started here with a fresh repo). Inputs are random bytes, i.e. what ciphertext looks like.
//
//   node --import tsx bench/storage.ts [--small N] [--large N] [--concurrency a,b]
import '../src/polyfill.js'
import { randomBytes } from 'node:crypto'
import { mkdtemp, rm } from 'node:fs/promises'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { parseArgs } from 'node:util'
import { createEmbeddedStorage } from '../src/storage/embedded.js'
import { createKuboStorage } from '../src/storage/kubo.js'
import type { StorageBackend } from '../src/storage/types.js'
import { startIpfsDaemon } from '../test/support/ipfs-daemon.js'

const { values } = parseArgs({
  options: {
    small: { type: 'string', default: '1000' },
    large: { type: 'string', default: '8' },
    concurrency: { type: 'string', default: '1,8' }
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

const cleanups: Array<() => Promise<void> | void> = []
const context = { after: (fn: () => Promise<void> | void) => { cleanups.push(fn) } }
try {
  const dir = await mkdtemp(join(tmpdir(), 'hearth-bench-storage-'))
  cleanups.push(async () => { await rm(dir, { recursive: true, force: true }) })
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
} finally {
  for (const fn of cleanups.reverse()) await fn()
}
