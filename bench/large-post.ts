// The 10 MB POST budget (docs/protocol.md §5: ≤ 100 ms to a durable 201) against real daemons,
// side by side in one run with the floors and, with --base DIR (a checkout with a built dist/),
// the old code:
//   floors:  node:crypto AES-256-CFB + SHA-256 over 10 MB (what OpenPGP's SEIPD v1 must do at
//            least); OpenPGP.js and Hearth's own writer encrypting 10 MB whole in this thread
//   rows:    (the variants' daemons run at once, their rounds in turn, so a changing load weighs
//            on each alike) 10 MB POST, one at a time (median, best); the slowest /health answer while as many
//            POSTs again run (the main thread's responsiveness); a 10 MB body not in JSON.stringify's
//            form (indented: the envelope is serialised again, not built around the body); a 10 MB
//            body sent at 8 MiB/s, slower than a worker waits for (from its last byte to the 201);
//            a 10 MB body without a length (chunked transfer encoding);
//            4 concurrent 10 MB POSTs (files/s) and the daemon's peak RSS after them
//   phases:  the steps of one 10 MB POST run one after another in this process (what the daemon
//            overlaps: encryption starts on a worker while the main thread parses and validates;
//            the data-file write runs beside storing the pieces)
//            and, in this thread, what search does with the version: its rows extracted from the
//            parsed data, and written into a fresh FTS5 index in one transaction
// Run: node --import tsx bench/large-post.ts [--base DIR] [--rounds N] [--other-paths] [--records]
//   (--other-paths: only the rows of the body not in canonical form, the slow body and the chunked one;
//   --records: every body is 10 MB of ~40,000 instagram.posts records with a caption each, which
//   search indexes in full, instead of one 10 MB string of which it indexes 16 K characters)
import '../src/polyfill.js'
import { createCipheriv, createHash, randomBytes } from 'node:crypto'
import { mkdtemp, readFile, rm } from 'node:fs/promises'
import { request } from 'node:http'
import { tmpdir } from 'node:os'
import { join, resolve } from 'node:path'
import { daemonRequest } from '../src/client/daemon-client.js'
import { REPO, startBenchDaemon, type BenchDaemon } from './support/daemon.js'
import { ensureBuilt } from './support/dist-daemon.js'
import { cpuMs } from './support/cpu-time.js'
import { MAX_DATA_DEPTH, parseBoundedJsonBytes } from '../src/protocol/bounded-json.js'
import { buildEnvelope, serializeEnvelope } from '../src/protocol/envelope.js'
import * as openpgp from 'openpgp'
import { encryptEnvelopeBytes } from '../src/protocol/encryption.js'
import { writeMessagePieces } from '../src/protocol/openpgp-writer.js'
import { serializeEnvelopeWithData, withEnvelopeRoom } from '../src/protocol/envelope.js'
import { createEmbeddedStorage } from '../src/storage/embedded.js'
import { writeNewFile } from '../src/ingest/atomic-write.js'
import { encryptAndStore } from '../src/ingest/encrypt-store.js'
import { createEncryptionWorkers, inThreadEncryptor, workerEncryptor } from '../src/ingest/encryptor.js'
import { openDatabase } from '../src/db/database.js'
import { openFileIndex } from '../src/db/file-index.js'
import { extractRows, instantMs } from '../src/search/extract.js'
import { SearchStore } from '../src/search/store.js'

const args = process.argv.slice(2)
const opt = (name: string): string | null => { const i = args.indexOf(name); return i >= 0 ? args[i + 1] ?? null : null }
const base = opt('--base')
const rounds = Number(opt('--rounds') ?? 7)
const otherPathsOnly = args.includes('--other-paths')
const records = args.includes('--records')
const SCOPE = records ? 'instagram.posts' : 'instagram.profile'
const MB = 1024 * 1024
const WORDS = ['sunset', 'coffee', 'mountain', 'friends', 'weekend', 'beach', 'city', 'dinner', 'concert', 'garden', 'river', 'snow', 'train', 'market', 'birthday', 'museum']
/** ~10 MB of posts, each a caption of ~30 words (varied: a real index's posting lists) and one photo. */
function postsData (): unknown {
  const posts: unknown[] = []
  for (let i = 0, bytes = 0; bytes < 10 * MB - 300; i++) {
    const caption = Array.from({ length: 30 }, (_, w) => `${WORDS[(i * 7 + w * 3) % WORDS.length]!}${(i * 31 + w) % 997}`).join(' ')
    const post = { createdAt: new Date(Date.UTC(2020, 0, 1) + i * 60_000).toISOString(), caption, media: [{ uri: `media/posts/${i}.jpg`, kind: 'photo' }] }
    bytes += JSON.stringify(post).length + 1
    posts.push(post)
  }
  return { posts }
}
const bodyData = records ? postsData() : { username: 'big', bio: 'z'.repeat(10 * MB - 40) }
const body10mb = Buffer.from(JSON.stringify(bodyData))
/** The same data indented (a newline and a space before each member, a space after each colon): valid JSON, but not the form the envelope is built around. */
const spaced10mb = Buffer.from(JSON.stringify(bodyData, null, 1))
/** The slow client's pace: a 256 KiB chunk every 31.25 ms, 8 MiB/s (a worker waits for 16 MiB/s). */
const SLOW_CHUNK = 256 * 1024
const SLOW_EVERY_MS = 31.25

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

/** 10 MB encrypted whole in this thread by OpenPGP.js (with Hearth's settings) and by Hearth's writer. */
async function floorWriters (): Promise<{ openpgp: number, hearth: number }> {
  const raw = new Uint8Array(randomBytes(10 * MB))
  const password = randomBytes(32).toString('hex')
  const config: openpgp.PartialConfig = { s2kType: openpgp.enums.s2k.iterated, s2kIterationCountByte: 0, aeadProtect: false, preferredSymmetricAlgorithm: openpgp.enums.symmetric.aes256, preferredCompressionAlgorithm: openpgp.enums.compression.uncompressed }
  const ours: number[] = []
  const theirs: number[] = []
  for (let i = 0; i < 5; i++) {
    theirs.push((await timed(async () => await openpgp.encrypt({ message: await openpgp.createMessage({ binary: raw }), passwords: [password], format: 'binary', config })))[0])
    ours.push((await timed(async () => await encryptEnvelopeBytes(raw, password)))[0])
  }
  return { openpgp: median(theirs), hearth: median(ours) }
}

// ── one daemon ──────────────────────────────────────────────────────────────────────────────

interface Result { postMedian: number; postBest: number; postWorst: number; postCpu: number; spacedMedian: number; spacedCpu: number; slowTailMedian: number; slowCpu: number; chunkedMedian: number; chunkedCpu: number; healthMax: number; healthCount: number; concurrentPerSec: number; peakRssMb: number; jobsCancelled: number }

async function post (d: BenchDaemon, body = body10mb): Promise<number> {
  const [ms, r] = await timed(async () => await daemonRequest(d.socketPath, { method: 'POST', path: `/v1/data/${SCOPE}`, headers: { 'content-type': 'application/json' }, body }))
  if (r.status !== 201) throw new Error(`POST answered ${r.status}: ${Buffer.from(r.body).toString().slice(0, 300)}`)
  return ms
}

/**
 * A 10 MB POST whose body is written in 256 KiB chunks: `paced`, at 8 MiB/s with its length
 * declared, ms from its last byte written to the 201; else at once without a length (chunked
 * transfer encoding), ms from the first byte to the 201.
 */
async function streamedPost (d: BenchDaemon, paced: boolean): Promise<number> {
  return await new Promise((resolve, reject) => {
    let from = 0
    const headers = { 'content-type': 'application/json', ...(paced ? { 'content-length': body10mb.byteLength } : {}) }
    const req = request({ socketPath: d.socketPath, method: 'POST', path: `/v1/data/${SCOPE}`, headers }, (res) => {
      const chunks: Buffer[] = []
      res.on('data', (c: Buffer) => chunks.push(c))
      res.on('end', () => {
        if (res.statusCode !== 201) reject(new Error(`streamed POST answered ${res.statusCode}: ${Buffer.concat(chunks).toString().slice(0, 300)}`))
        else resolve(performance.now() - from)
      })
    })
    req.on('error', reject)
    const started = from = performance.now()
    const send = (at: number): void => {
      const end = Math.min(at + SLOW_CHUNK, body10mb.byteLength)
      req.write(body10mb.subarray(at, end))
      if (end === body10mb.byteLength) { if (paced) from = performance.now(); req.end(); return }
      if (!paced) { send(end); return }
      setTimeout(() => { send(end) }, Math.max(0, started + (end / SLOW_CHUNK) * SLOW_EVERY_MS - performance.now()))
    }
    send(0)
  })
}

/** How long one POST to 201 takes with a client polling /health meanwhile, and those /health times. */
async function postWithHealth (d: BenchDaemon, health: number[]): Promise<void> {
  let done = false
  const p = post(d).finally(() => { done = true })
  while (!done) {
    const [ms] = await timed(async () => await daemonRequest(d.socketPath, { path: '/health' }))
    if (!done) health.push(ms)
  }
  await p
}

/**
 * Every variant's daemon runs at once and the rounds alternate between them (A B, B A, …), so a
 * load that changes during the run (the machine is shared) weighs on each variant alike.
 */
async function runVariants (variants: Array<[string, string]>): Promise<Map<string, Result>> {
  const daemons: BenchDaemon[] = []
  try {
    for (const [name, checkout] of variants) daemons.push(await startBenchDaemon({ name: `large-${name}`, checkout, env: { HEARTH_UI: 'false' } }))
    for (let i = 0; i < 3; i++) for (const d of daemons) await post(d) // warm-up: schema resolution, JIT, heap growth, the worker's start
    const inTurn = (round: number): number[] => (round % 2 === 0 ? daemons.map((_, i) => i) : daemons.map((_, i) => daemons.length - 1 - i))
    // the POSTs alone first: a client polling /health meanwhile costs the main thread time too
    const posts: number[][] = daemons.map(() => [])
    const health: number[][] = daemons.map(() => [])
    /** Each daemon's CPU over the POSTs alone (all threads), its work after the last 201 included. */
    const postCpu: number[] = daemons.map(() => NaN)
    if (!otherPathsOnly) {
      const before = await Promise.all(daemons.map(async (d) => await cpuMs(d.pid)))
      for (let r = 0; r < rounds; r++) for (const i of inTurn(r)) posts[i]!.push(await post(daemons[i]!))
      await new Promise((resolve) => setTimeout(resolve, 500)) // the last POSTs' indexing
      for (const [i, d] of daemons.entries()) postCpu[i] = (await cpuMs(d.pid) - before[i]!) / rounds
      for (let r = 0; r < rounds; r++) for (const i of inTurn(r)) await postWithHealth(daemons[i]!, health[i]!)
    }
    /** `fn`'s result for each round and each daemon, with the daemon's CPU ms per round (all threads). */
    const measured = async (fn: (d: BenchDaemon) => Promise<number>): Promise<{ ms: number[][]; cpu: number[] }> => {
      const out = { ms: daemons.map((): number[] => []), cpu: daemons.map(() => 0) }
      for (let r = 0; r < rounds; r++) {
        for (const i of inTurn(r)) {
          const before = await cpuMs(daemons[i]!.pid)
          out.ms[i]!.push(await fn(daemons[i]!))
          await new Promise((resolve) => setTimeout(resolve, 50)) // the job's end after the 201
          out.cpu[i]! += (await cpuMs(daemons[i]!.pid) - before) / rounds
        }
      }
      return out
    }
    const spaced = await measured(async (d) => await post(d, spaced10mb))
    const slow = await measured(async (d) => await streamedPost(d, true))
    const chunked = await measured(async (d) => await streamedPost(d, false))
    const concurrent = 4
    const concurrentMs: number[] = daemons.map(() => NaN)
    if (!otherPathsOnly) {
      concurrentMs.fill(0)
      for (let r = 0; r < 2; r++) {
        for (const i of inTurn(r)) concurrentMs[i]! += (await timed(async () => await Promise.all(Array.from({ length: concurrent }, async () => await post(daemons[i]!)))))[0]
      }
    }
    const results = new Map<string, Result>()
    for (const [i, d] of daemons.entries()) {
      const peak = Number(/VmHWM:\s+(\d+)/.exec(await readFile(`/proc/${d.pid}/status`, 'utf8'))?.[1] ?? 0) / 1024
      const workers = JSON.parse(Buffer.from((await daemonRequest(d.socketPath, { path: '/v1/status' })).body).toString()).encryptionWorkers as { cancelled?: number }
      results.set(variants[i]![0], {
        postMedian: posts[i]!.length > 0 ? median(posts[i]!) : NaN,
        postBest: Math.min(...posts[i]!),
        postWorst: Math.max(...posts[i]!),
        postCpu: postCpu[i]!,
        spacedMedian: median(spaced.ms[i]!),
        spacedCpu: spaced.cpu[i]!,
        slowTailMedian: median(slow.ms[i]!),
        slowCpu: slow.cpu[i]!,
        chunkedMedian: median(chunked.ms[i]!),
        chunkedCpu: chunked.cpu[i]!,
        healthMax: health[i]!.length > 0 ? Math.max(...health[i]!) : NaN,
        healthCount: health[i]!.length,
        concurrentPerSec: concurrent * 2 / (concurrentMs[i]! / 1000),
        peakRssMb: peak,
        jobsCancelled: workers.cancelled ?? NaN
      })
    }
    return results
  } finally {
    for (const d of daemons) await d.stop()
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
      const env = buildEnvelope({ definitionUrl: 'ipfs://bafkreibench', scope: SCOPE, data, collectedAt })
      const [envMs, bytes] = await timed(() => serializeEnvelope(env))
      const room = withEnvelopeRoom(body10mb.byteLength)
      body10mb.copy(room)
      const [inPlaceMs] = await timed(() => serializeEnvelopeWithData(env, room))
      const [inThreadMs] = await timed(async () => await encryptEnvelopeBytes(bytes, password))
      const pieces = [...writeMessagePieces(bytes, password, { pieceBytes: 262_144 })].map((p) => ({ bytes: p, sha256: createHash('sha256').update(p).digest() }))
      const [storeMs] = await timed(async () => await storage.addStream!((async function * () { yield * pieces })()))
      const [storeWholeMs] = await timed(async () => await encryptAndStore({ storage, encryptor: inThreadEncryptor() }, bytes, password))
      const [workerMs] = await timed(async () => await encryptAndStore({ storage, encryptor: workerEncryptor(workers) }, bytes, password))
      const [fileMs] = await timed(async () => await writeNewFile(join(root, `${i}.json`), bytes))
      const [indexMs] = await timed(async () => await index.put({ path: `${SCOPE}/${i}.json`, scope: SCOPE, collectedAt, schemaId: '1', cid: 'bafy', size: bytes.byteLength, encryptedSize: bytes.byteLength + 300, sha256: '', mtimeMs: 0, state: 'stored', origin: 'local', updatedAt: Date.now() }))
      const spec = { ...(records ? { fields: ['caption'], time: ['createdAt'] } : { fields: ['username', 'bio'] }), versions: 'latest' as const }
      const [extractMs, extracted] = await timed(() => extractRows(data, spec))
      const search = new SearchStore(join(root, `search-${i}`))
      const [ftsMs] = await timed(() => {
        search.begin()
        const id = search.beginVersion({ path: `${SCOPE}/${i}.json`, scope: SCOPE, collectedAt, sha256: '' })
        search.addRows(id, extracted.rows, (row) => (row.at !== null ? instantMs(row.at) : null))
        search.finishVersion(id, 'ab', null)
        search.commit()
      })
      search.close()
      if (i === 0) continue // warm-up
      add('UTF-8 decode + bounded JSON parse of the body', parseMs)
      add('envelope serialised again (a body not in canonical form)', envMs)
      add('envelope built around a canonical body where it was read (no copy)', inPlaceMs)
      add('encrypt whole, main thread (Hearth\'s writer)', inThreadMs)
      add('store encrypted, hashed pieces: import + 41 block writes + one sync + pin', storeMs)
      add('encrypt streamed + store, all on the main thread', storeWholeMs)
      add('  the same with encryption and hashing on the worker (the daemon\'s path)', workerMs)
      add('data file write + fsync (beside the store)', fileMs)
      add('index record (synced LevelDB write)', indexMs)
      add(`search: ${extracted.rows.length} rows extracted from the parsed data`, extractMs)
      add(`search: those rows written into FTS5, one transaction (${(extracted.rows.reduce((n, r) => n + r.text.length, 0) / MB).toFixed(1)} M characters)`, ftsMs)
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
const floors = otherPathsOnly ? { aesSha: NaN, openpgp: NaN, hearth: NaN } : { aesSha: floorAesSha(), ...await floorWriters() }
// both compiled (dist/), as bench/limits.ts runs them: a daemon under tsx is slower than its build
const variants: Array<[string, string]> = [['current', REPO]]
if (base !== null) variants.unshift(['base', resolve(base)])
for (const [, checkout] of variants) ensureBuilt(checkout)
console.error(`${variants.map(([name]) => name).join(' and ')}, in turn …`)
const results = await runVariants(variants)
const f = (n: number, d = 1): string => Number.isFinite(n) ? n.toFixed(d) : '–'
const cols = (key: keyof Result, d = 1): Record<string, string> => Object.fromEntries([...results].map(([n, r]) => [n, f(r[key], d)]))
console.table([
  { what: `10 MB POST to 201, median of ${rounds} (ms)`, budget: '≤ 100', floor: `AES-CFB+SHA-256 ${f(floors.aesSha)} · OpenPGP.js whole ${f(floors.openpgp)} · Hearth writer whole ${f(floors.hearth)}`, ...cols('postMedian') },
  { what: '  daemon CPU per such POST, all threads (ms)', budget: '', floor: '', ...cols('postCpu', 0) },
  { what: '10 MB POST, best (ms)', budget: '', floor: '', ...cols('postBest') },
  { what: '10 MB POST, slowest (ms)', budget: '', floor: '', ...cols('postWorst') },
  { what: 'slowest /health during those POSTs (ms)', budget: '', floor: '', ...cols('healthMax') },
  { what: '/health answers during those POSTs', budget: '', floor: '', ...cols('healthCount', 0) },
  { what: `10 MB POST, body not in canonical form (indented), median of ${rounds} (ms)`, budget: '', floor: '', ...cols('spacedMedian') },
  { what: '  daemon CPU per such POST, all threads (ms)', budget: '', floor: '', ...cols('spacedCpu', 0) },
  { what: `10 MB POST sent at 8 MiB/s: last byte to 201, median of ${rounds} (ms)`, budget: '', floor: '', ...cols('slowTailMedian') },
  { what: '  daemon CPU per such POST, all threads (ms)', budget: '', floor: '', ...cols('slowCpu', 0) },
  { what: `10 MB POST without a length (chunked), median of ${rounds} (ms)`, budget: '', floor: '', ...cols('chunkedMedian') },
  { what: '  daemon CPU per such POST, all threads (ms)', budget: '', floor: '', ...cols('chunkedCpu', 0) },
  { what: '10 MB POSTs, 4 concurrent (files/s)', budget: '', floor: '', ...cols('concurrentPerSec', 2) },
  { what: 'daemon peak RSS after them (MB)', budget: '', floor: '', ...cols('peakRssMb', 0) },
  { what: 'encryption jobs cancelled (early ones not used)', budget: '', floor: '', ...cols('jobsCancelled', 0) }
])
if (!otherPathsOnly) {
  console.error('phases …')
  console.table(await phases())
}
