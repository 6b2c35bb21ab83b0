// The 10 MB POST budget (docs/protocol.md §5: ≤ 100 ms to a durable 201) against real daemons,
// side by side in one run with the floors and, with --base DIR (a checkout with a built dist/),
// the old code:
//   floors:  node:crypto AES-256-CFB + SHA-256 over 10 MB (what OpenPGP's SEIPD v1 must do at
//            least); OpenPGP.js encrypting 10 MB whole in this thread
//   rows:    10 MB POST, one at a time (median, best); the slowest /health answer while as many
//            POSTs again run (the main thread's responsiveness); 4 concurrent 10 MB POSTs (files/s) and
//            the daemon's peak RSS after them
//   phases:  the steps of one 10 MB POST run one after another in this process (what the daemon
//            overlaps: the data-file write runs beside encryption and storage; encryption runs
//            on a worker while the main thread stores the pieces)
// Run: node --import tsx bench/large-post.ts [--base DIR] [--rounds N]
import '../src/polyfill.js'
import { createCipheriv, createHash, randomBytes } from 'node:crypto'
import { mkdtemp, readFile, rm } from 'node:fs/promises'
import { tmpdir } from 'node:os'
import { join, resolve } from 'node:path'
import { daemonRequest } from '../src/client/daemon-client.js'
import { startBenchDaemon, type BenchDaemon } from './support/daemon.js'
import { MAX_DATA_DEPTH, parseBoundedJsonBytes } from '../src/protocol/bounded-json.js'
import { buildEnvelope, serializeEnvelope } from '../src/protocol/envelope.js'
import { encryptEnvelopeBytes } from '../src/protocol/encryption.js'
import { createEmbeddedStorage } from '../src/storage/embedded.js'
import { writeNewFile } from '../src/ingest/atomic-write.js'
import { encryptAndStore } from '../src/ingest/encrypt-store.js'
import { createEncryptionWorkers, inThreadEncryptor, workerEncryptor } from '../src/ingest/encryptor.js'
import { openDatabase } from '../src/db/database.js'
import { openFileIndex } from '../src/db/file-index.js'

const args = process.argv.slice(2)
const opt = (name: string): string | null => { const i = args.indexOf(name); return i >= 0 ? args[i + 1] ?? null : null }
const base = opt('--base')
const rounds = Number(opt('--rounds') ?? 7)
const SCOPE = 'instagram.profile'
const MB = 1024 * 1024
const body10mb = Buffer.from(JSON.stringify({ username: 'big', bio: 'z'.repeat(10 * MB - 40) }))

function median (xs: number[]): number {
  const s = [...xs].sort((a, b) => a - b)
  return s[Math.floor(s.length / 2)]!
}

async function timed<T> (fn: () => Promise<T> | T): Promise<[number, T]> {
  const started = performance.now()
  const value = await fn()
  return [performance.now() - started, value]
}

// ── floors ──────────────────────────────────────────────────────────────────────────────────

function floorAesSha (): number {
  const raw = randomBytes(10 * MB)
  return median(Array.from({ length: 5 }, () => {
    const started = performance.now()
    const c = createCipheriv('aes-256-cfb', randomBytes(32), randomBytes(16))
    createHash('sha256').update(Buffer.concat([c.update(raw), c.final()])).digest()
    return performance.now() - started
  }))
}

async function floorOpenpgp (): Promise<number> {
  const raw = new Uint8Array(randomBytes(10 * MB))
  const password = randomBytes(32).toString('hex')
  const times: number[] = []
  for (let i = 0; i < 5; i++) times.push((await timed(async () => await encryptEnvelopeBytes(raw, password)))[0])
  return median(times)
}

// ── one daemon ──────────────────────────────────────────────────────────────────────────────

interface Result { postMedian: number; postBest: number; healthMax: number; healthCount: number; concurrentPerSec: number; peakRssMb: number }

async function post (d: BenchDaemon): Promise<number> {
  const [ms, r] = await timed(async () => await daemonRequest(d.socketPath, { method: 'POST', path: `/v1/data/${SCOPE}`, headers: { 'content-type': 'application/json' }, body: body10mb }))
  if (r.status !== 201) throw new Error(`POST answered ${r.status}: ${Buffer.from(r.body).toString().slice(0, 300)}`)
  return ms
}

async function runVariant (name: string, checkout?: string): Promise<Result> {
  const d = await startBenchDaemon({ name: `large-${name}`, ...(checkout !== undefined ? { checkout } : {}), env: { HEARTH_UI: 'false' } })
  try {
    for (let i = 0; i < 3; i++) await post(d) // warm-up: schema resolution, JIT, heap growth, the worker's start
    // the POSTs alone first: a client polling /health meanwhile costs the main thread time too
    const posts: number[] = []
    for (let i = 0; i < rounds; i++) posts.push(await post(d))
    const health: number[] = []
    for (let i = 0; i < rounds; i++) {
      let done = false
      const p = post(d).finally(() => { done = true })
      while (!done) {
        const [ms] = await timed(async () => await daemonRequest(d.socketPath, { path: '/health' }))
        if (!done) health.push(ms)
      }
      await p
    }
    const concurrent = 4
    const [ms] = await timed(async () => await Promise.all(Array.from({ length: concurrent * 2 }, async () => await post(d))))
    const peak = Number(/VmHWM:\s+(\d+)/.exec(await readFile(`/proc/${d.pid}/status`, 'utf8'))?.[1] ?? 0) / 1024
    return {
      postMedian: median(posts),
      postBest: Math.min(...posts),
      healthMax: health.length > 0 ? Math.max(...health) : NaN,
      healthCount: health.length,
      concurrentPerSec: concurrent * 2 / (ms / 1000),
      peakRssMb: peak
    }
  } finally {
    await d.stop()
  }
}

// ── the phases of one POST, one after another, in this process ──────────────────────────────

async function phases (): Promise<Array<Record<string, string>>> {
  const root = await mkdtemp(join(tmpdir(), 'hearth-bench-large-phases-'))
  const storage = await createEmbeddedStorage({ blocksDir: join(root, 'blocks'), datastoreDir: join(root, 'datastore') })
  const db = await openDatabase(join(root, 'index'))
  const index = await openFileIndex({ db })
  const workers = createEncryptionWorkers({ size: 1, maxQueued: 4, maxFileBytes: 32 * MB })
  await workers.start()
  const password = randomBytes(32).toString('hex')
  const t: Record<string, number[]> = {}
  const add = (k: string, ms: number): void => { (t[k] ??= []).push(ms) }
  try {
    for (let i = 0; i < 6; i++) {
      const [parseMs, data] = await timed(() => parseBoundedJsonBytes(body10mb, { maxDepth: MAX_DATA_DEPTH, subject: 'request body' }) as Record<string, unknown>)
      const collectedAt = new Date(Date.UTC(2020, 0, 1) + i * 1000).toISOString()
      const [envMs, bytes] = await timed(() => serializeEnvelope(buildEnvelope({ definitionUrl: 'ipfs://bafkreibench', scope: SCOPE, data, collectedAt })))
      const [inThreadMs] = await timed(async () => await encryptEnvelopeBytes(bytes, password))
      const [storeWholeMs] = await timed(async () => await encryptAndStore({ storage, encryptor: inThreadEncryptor() }, bytes, password))
      const [workerMs] = await timed(async () => await encryptAndStore({ storage, encryptor: workerEncryptor(workers) }, bytes, password))
      const [fileMs] = await timed(async () => await writeNewFile(join(root, `${i}.json`), bytes))
      const [indexMs] = await timed(async () => await index.put({ path: `${SCOPE}/${i}.json`, scope: SCOPE, collectedAt, schemaId: '1', cid: 'bafy', size: bytes.byteLength, encryptedSize: bytes.byteLength + 300, sha256: '', mtimeMs: 0, state: 'stored', origin: 'local', updatedAt: Date.now() }))
      if (i === 0) continue // warm-up
      add('bounded JSON parse of the body', parseMs)
      add('envelope build + serialise', envMs)
      add('OpenPGP encrypt, whole, main thread (old path, before the store)', inThreadMs)
      add('encrypt streamed + import + block writes + fsyncs + pin, main thread', storeWholeMs)
      add('  the same on the encryption worker (the daemon\'s path)', workerMs)
      add('data file write + fsync (beside the store)', fileMs)
      add('index record (synced LevelDB write)', indexMs)
    }
  } finally {
    await workers.stop()
    await storage.stop()
    await db.close()
    await rm(root, { recursive: true, force: true })
  }
  return Object.entries(t).map(([phase, ms]) => ({ phase, 'ms (median)': median(ms).toFixed(1) }))
}

// ── the run ─────────────────────────────────────────────────────────────────────────────────

console.error('floors …')
const floors = { aesSha: floorAesSha(), openpgp: await floorOpenpgp() }
const variants: Array<[string, string | undefined]> = [['current', undefined]]
if (base !== null) variants.unshift(['base', resolve(base)])
const results = new Map<string, Result>()
for (const [name, checkout] of variants) {
  console.error(`${name} …`)
  results.set(name, await runVariant(name, checkout))
}
const f = (n: number, d = 1): string => Number.isFinite(n) ? n.toFixed(d) : '–'
const cols = (key: keyof Result, d = 1): Record<string, string> => Object.fromEntries([...results].map(([n, r]) => [n, f(r[key], d)]))
console.table([
  { what: `10 MB POST to 201, median of ${rounds} (ms)`, budget: '≤ 100', floor: `AES-CFB+SHA-256 ${f(floors.aesSha)} · openpgp whole ${f(floors.openpgp)}`, ...cols('postMedian') },
  { what: '10 MB POST, best (ms)', budget: '', floor: '', ...cols('postBest') },
  { what: 'slowest /health during those POSTs (ms)', budget: '', floor: '', ...cols('healthMax') },
  { what: '/health answers during those POSTs', budget: '', floor: '', ...cols('healthCount', 0) },
  { what: '10 MB POSTs, 4 concurrent (files/s)', budget: '', floor: '', ...cols('concurrentPerSec', 2) },
  { what: 'daemon peak RSS after them (MB)', budget: '', floor: '', ...cols('peakRssMb', 0) }
])
console.error('phases …')
console.table(await phases())
