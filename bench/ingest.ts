// End-to-end ingest throughput (validate → encrypt → add/pin in the embedded IPFS node → index),
// side by side with the ceiling (raw node:crypto AES-256 and SHA-256) and with OpenPGP's default
// S2K instead of Hearth's. Run: node --import tsx bench/ingest.ts [--quick]
import '../src/polyfill.js'
import { createCipheriv, createHash, randomBytes } from 'node:crypto'
import { mkdtemp, rm } from 'node:fs/promises'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { homeLayout } from '../src/home.js'
import { silentLogger } from '../src/log.js'
import { openDatabase } from '../src/db/database.js'
import { openFileIndex } from '../src/db/file-index.js'
import { createEmbeddedStorage } from '../src/storage/embedded.js'
import { buildSchemaRegistry, schemaTrustFor } from '../src/daemon/schemas-setup.js'
import { defaultConfig } from '../src/config/resolve.js'
import { createIngestPipeline } from '../src/ingest/pipeline.js'
import { createIdentity } from '../src/identity/identity.js'
import type { S2kChoice } from '../src/protocol/encryption.js'

const quick = process.argv.includes('--quick')
const MB = 1024 * 1024
const logger = silentLogger()

async function withPipeline<T> (s2k: S2kChoice, fn: (submit: (data: Record<string, unknown>) => Promise<unknown>) => Promise<T>): Promise<T> {
  const root = await mkdtemp(join(tmpdir(), 'hearth-bench-ingest-'))
  const home = homeLayout(root)
  const identity = await createIdentity(home, { fresh: true })
  const db = await openDatabase(home.index)
  const index = await openFileIndex({ db })
  const storage = await createEmbeddedStorage({ blocksDir: home.blocks, datastoreDir: home.datastore, logger })
  const config = defaultConfig()
  const schemas = await buildSchemaRegistry({ config, home, db, storage, logger, trust: schemaTrustFor(config, identity.ownerAddress) })
  const pipeline = createIngestPipeline({ dataDir: home.data, index, storage, schemas: schemas.registry, validate: schemas.validate, masterKey: identity.masterKey, logger, encryption: { s2k } })
  try {
    return await fn(async (data) => await pipeline.submit('youtube.history', data))
  } finally {
    await storage.stop()
    await db.close()
    await rm(root, { recursive: true, force: true })
  }
}

function payload (bytes: number): Record<string, unknown> {
  const title = 'x'.repeat(Math.max(1, bytes - 160))
  return { items: [{ header: 'YouTube', title, titleUrl: 'https://www.youtube.com/watch?v=dQw4w9WgXcQ', time: '2026-01-01T00:00:00Z' }] }
}

async function run (s2k: S2kChoice, files: number, bytes: number, concurrency: number): Promise<{ filesPerSec: number, mbPerSec: number, msPerFile: number }> {
  return await withPipeline(s2k, async (submit) => {
    const data = payload(bytes)
    await submit(data) // warm up: schema compile, node start
    let next = 0
    const start = performance.now()
    await Promise.all(Array.from({ length: concurrency }, async () => {
      while (next < files) { next++; await submit(data) }
    }))
    const s = (performance.now() - start) / 1000
    return { filesPerSec: files / s, mbPerSec: files * bytes / MB / s, msPerFile: s * 1000 / files }
  })
}

function ceiling (): { aes256ctr: number, aes256cfb: number, sha256: number } {
  const buf = randomBytes(64 * MB)
  const key = randomBytes(32)
  const iv = randomBytes(16)
  const rate = (fn: () => void): number => { const t = performance.now(); fn(); return 64 / ((performance.now() - t) / 1000) }
  return {
    aes256ctr: rate(() => createCipheriv('aes-256-ctr', key, iv).update(buf)),
    aes256cfb: rate(() => createCipheriv('aes-256-cfb', key, iv).update(buf)),
    sha256: rate(() => createHash('sha256').update(buf).digest())
  }
}

const rows: Array<Record<string, string>> = []
const fmt = (n: number, d = 1): string => n.toFixed(d)
const small = quick ? 200 : 2000
const large = quick ? 3 : 10

const c = ceiling()
rows.push({ case: 'ceiling: node:crypto AES-256-CTR', 'files/s': '-', 'MB/s': fmt(c.aes256ctr, 0), 'ms/file': '-' })
rows.push({ case: 'ceiling: node:crypto AES-256-CFB (OpenPGP mode)', 'files/s': '-', 'MB/s': fmt(c.aes256cfb, 0), 'ms/file': '-' })
rows.push({ case: 'ceiling: node:crypto SHA-256', 'files/s': '-', 'MB/s': fmt(c.sha256, 0), 'ms/file': '-' })
for (const [label, s2k, n, size, conc] of [
  ['1 KB, Hearth S2K, 1 at a time', 'hearth', small, 1024, 1],
  ['1 KB, Hearth S2K, 4 concurrent (daemon default)', 'hearth', small, 1024, 4],
  ['1 KB, OpenPGP default S2K, 4 concurrent', 'openpgp-default', Math.min(small, 100), 1024, 4],
  ['10 MB, Hearth S2K, 1 at a time', 'hearth', large, 10 * MB, 1]
] as const) {
  const r = await run(s2k, n, size, conc)
  rows.push({ case: `ingest ${label} (${n} files)`, 'files/s': fmt(r.filesPerSec), 'MB/s': fmt(r.mbPerSec), 'ms/file': fmt(r.msPerFile, 2) })
}
console.table(rows)
