// The sync engine's knobs (fetch window, receives at once) over real libp2p on loopback (TCP +
// pnet + Noise + Yamux), between two in-process devices built from the real components
// (test/support/sync-device.ts: file index, embedded IPFS storage, OpenPGP, and a receive hook of
// its own: decrypt, parse, write with fsync, index). The budgets themselves are measured between
// two real daemons by bench/sync.ts.
//   sets:     1,000 small files (1 KB of data each) and 10 × 10 MB files
//   variants: default (64 fetches in flight, fetched files received in batches of up to 64 that
//             share their syncs) vs the same window with batches of 16, 4 and 1, and
//             stop-and-wait (one fetch, one file received at a time)
//   idle:     a second round when nothing changed: time, messages and bytes on the wire
//   linear:   the default variant on a quarter of the small set, to compare ms per file
// Prints time, ms per file, ciphertext MB/s, and where the time went.
// Run: node --import tsx bench/sync-engine.ts [--quick]
import '../src/polyfill.js'
import { randomBytes } from 'node:crypto'
import { mkdtemp, rm } from 'node:fs/promises'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { instant, startDevice, testOwner, waitFor, type TestDevice } from '../test/support/sync-device.js'

const quick = process.argv.includes('--quick')
const root = await mkdtemp(join(tmpdir(), 'hearth-bench-sync-'))
const owner = await testOwner()

interface Row { set: string; variant: string; files: number; seconds: number; msPerFile: number; mbPerSec: number; receive: string; storeAdd: string; serveGet: string; idle: string }
const rows: Row[] = []

async function fillSource (name: string, files: number, dataBytes: number): Promise<{ device: TestDevice; cipherBytes: number }> {
  const device = await startDevice({ dir: join(root, name), owner })
  let cipherBytes = 0
  const started = performance.now()
  for (let i = 0; i < files; i++) {
    // base64 of random bytes: incompressible, and JSON-safe
    const blob = randomBytes(Math.max(1, Math.floor(dataBytes * 3 / 4))).toString('base64')
    const r = await device.writeLocal('instagram.profile', { username: `u${i}`, blob }, instant(i))
    cipherBytes += r.encryptedSize ?? 0
  }
  console.error(`  source ${name}: ${files} files written in ${((performance.now() - started) / 1000).toFixed(1)} s`)
  return { device, cipherBytes }
}

function share (ms: number, seconds: number): string {
  return `${Math.round(100 * ms / 1000 / seconds)}%`
}

interface Variant { name: string; window: { requests: number }; batch: number }
const VARIANTS: Variant[] = [
  { name: 'default (64 / batch 64)', window: { requests: 64 }, batch: 64 },
  { name: 'window 64 / batch 16', window: { requests: 64 }, batch: 16 },
  { name: 'window 64 / batch 4', window: { requests: 64 }, batch: 4 },
  { name: 'window 64 / batch 1', window: { requests: 64 }, batch: 1 },
  { name: 'stop-and-wait', window: { requests: 1 }, batch: 1 }
]

async function syncInto (set: string, source: { device: TestDevice; cipherBytes: number }, files: number, v: Variant): Promise<void> {
  const variant = v.name
  const target = await startDevice({ dir: join(root, `${set}-${variant.replace(/[^a-z0-9]+/gi, '-')}`), owner, engine: { window: v.window, batch: { files: v.batch } } })
  const getMsBefore = source.device.storageMs.get
  try {
    const started = performance.now()
    await target.engine.addPeer(source.device.addrs()[0]!)
    await waitFor(`${set} ${variant}`, async () => (await target.index.count()) === files, 30 * 60_000)
    const seconds = (performance.now() - started) / 1000
    // Let the reverse pull (source reading the target's 'received' entries) finish, then measure
    // a round where nothing changed.
    await waitFor('quiet', async () => (await target.engine.peers()).every((p) => !p.syncing) &&
      (await source.device.engine.peers()).some((p) => p.peerId === target.node.peerId && !p.syncing && p.pendingIn === 0), 60_000)
    const before = { t: target.engine.stats(), s: source.device.engine.stats() }
    const idleStart = performance.now()
    const [round] = await target.engine.syncNow()
    const idleMs = performance.now() - idleStart
    const after = { t: target.engine.stats(), s: source.device.engine.stats() }
    const messages = (after.t.messagesSent - before.t.messagesSent) + (after.t.messagesReceived - before.t.messagesReceived)
    const bytes = (after.t.bytesSent - before.t.bytesSent) + (after.t.bytesReceived - before.t.bytesReceived)
    const fetched = round?.totals.fetched ?? -1
    rows.push({
      set,
      variant,
      files,
      seconds: Number(seconds.toFixed(2)),
      msPerFile: Number((seconds * 1000 / files).toFixed(1)),
      mbPerSec: Number((source.cipherBytes / 1e6 / seconds).toFixed(1)),
      receive: share(target.receiveMs, seconds),
      storeAdd: share(target.storageMs.add, seconds),
      serveGet: share(source.device.storageMs.get - getMsBefore, seconds),
      idle: `${idleMs.toFixed(1)} ms, ${messages} msgs, ${bytes} B, ${fetched} fetched`
    })
  } finally {
    await target.stop()
  }
}

try {
  const smallCount = quick ? 200 : 1000
  const bigCount = quick ? 3 : 10
  console.error('preparing sources...')
  const small = await fillSource('small-src', smallCount, 1024)
  const big = await fillSource('big-src', bigCount, 10 * 1024 * 1024)
  // One unreported run per set first, so no variant pays for a cold page cache or JIT.
  for (const [set, source, count] of [[`${smallCount} x 1 KB`, small, smallCount], [`${bigCount} x 10 MB`, big, bigCount]] as const) {
    console.error(`warming up (${set})...`)
    await syncInto(set, source, count, { ...VARIANTS[0]!, name: 'warm-up' })
    rows.pop()
    for (const v of VARIANTS) {
      console.error(`syncing ${set} (${v.name})...`)
      await syncInto(set, source, count, v)
    }
  }
  // Linear in N: the default variant on a quarter of the small set, per-file cost side by side.
  const quarter = await fillSource('quarter-src', smallCount / 4, 1024)
  await syncInto(`${smallCount / 4} x 1 KB`, quarter, smallCount / 4, VARIANTS[0]!)
  await quarter.device.stop()
  await small.device.stop()
  await big.device.stop()
  console.table(rows)
  console.log('seconds: from addPeer on a running empty device until it holds every file (connect, list, fetch,')
  console.log('store, receive). receive / storeAdd / serveGet: share of that wall time spent in the receive hook')
  console.log('(decrypt, parse, fsync write, index), in storage.add on the receiver and storage.get on the sender.')
  console.log('idle: a second round when nothing changed.')
} finally {
  await rm(root, { recursive: true, force: true })
}
