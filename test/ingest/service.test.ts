// The ingest service on its own: a real index and data folder, an in-memory storage backend, the
// event hub. Files found by the initial scan, the watcher or the polling rescan are stored once
// and announced; storage outages are retried; stop leaves nothing running.
import { test, type TestContext } from 'node:test'
import assert from 'node:assert/strict'
import { mkdir, rename, writeFile } from 'node:fs/promises'
import { join } from 'node:path'
import type { FileIndex } from '../../src/db/file-index.js'
import { createIngestService, type IngestService } from '../../src/ingest/service.js'
import { createHearthEvents } from '../../src/lifecycle/events.js'
import { silentLogger, type Logger } from '../../src/log.js'
import type { HearthDatabase } from '../../src/db/database.js'
import { capturingLogger } from '../support/api-server.js'
import type { MemoryStorage } from '../support/memory-storage.js'
import { dropFile, waitFor } from '../support/data-files.js'
import { SCOPE, envelope, ingestWorkspace, schemaLookup } from '../support/ingest-fixtures.js'

/** `announced`: the events of each version, in order (`version.data` with the username of its data). */
interface Rig { ingest: IngestService; index: FileIndex; storage: MemoryStorage; dataDir: string; stored: string[]; indexed: string[]; announced: string[] }

async function rig (t: TestContext, settings: { usePolling: boolean }, logger: Logger = silentLogger(), backgroundAfter?: Promise<void>): Promise<Rig & { db: HearthDatabase }> {
  const { dataDir, db, index, storage, validate } = await ingestWorkspace(t, 'hearth-ingest-service-')
  const events = createHearthEvents(silentLogger())
  const stored: string[] = []
  const indexed: string[] = []
  events.on('file.stored', (r) => { stored.push(r.path) })
  const announced: string[] = []
  events.on('file.indexed', (r) => { indexed.push(r.path); announced.push(`file.indexed ${r.path}`) })
  events.on('version.data', ({ record, data }) => { announced.push(`version.data ${record.path} ${(data as { username: string }).username}`) })
  const ingest = createIngestService({
    pipeline: {
      dataDir,
      index,
      storage,
      schemas: schemaLookup,
      validate,
      masterKey: new Uint8Array(65).fill(7)
    },
    index,
    settings: { concurrency: 2, stabilityMs: 50, usePolling: settings.usePolling, pollIntervalMs: 100, retryWaitingMs: 60_000 },
    events,
    logger,
    ...(backgroundAfter !== undefined ? { backgroundAfter } : {})
  })
  t.after(async () => { await ingest.stop() })
  return { ingest, db, index, storage, dataDir, stored, indexed, announced }
}

for (const usePolling of [false, true]) {
  test(`files from the initial scan and later drops are stored once and announced (${usePolling ? 'polling' : 'watching'})`, async (t) => {
    const r = await rig(t, { usePolling })
    const before = await dropFile(r.dataDir, SCOPE, '2026-01-01T00-00-00Z.json', envelope('early', '2026-01-01T00:00:00Z'))
    assert.deepEqual(await r.ingest.status(), { queued: 0, running: 0, waitingForStorage: 0, waitingForWriter: 0, scan: { seen: 0, queued: 0, done: false } })
    await r.ingest.start()
    const scan = await r.ingest.scanned
    assert.equal(scan.done, true)
    assert.equal(scan.seen, 1)
    assert.equal((await r.index.get(before))?.state, 'stored')

    const later = await dropFile(r.dataDir, SCOPE, '2026-01-02T00-00-00Z.json', envelope('later', '2026-01-02T00:00:00Z'))
    await waitFor('the dropped file stored', async () => (await r.index.get(later))?.state === 'stored')
    assert.deepEqual(r.stored, [before, later])
    assert.deepEqual(r.indexed, [before, later])
    assert.deepEqual(r.announced, [`version.data ${before} early`, `file.indexed ${before}`, `version.data ${later} later`, `file.indexed ${later}`], 'each version\'s data just before its file.indexed')
    assert.deepEqual((await r.ingest.status()).scan, { seen: 1, queued: 1, done: true })
  })
}

test('a folder of files prepared elsewhere and moved into the data folder with one rename: each file stored and announced once', async (t) => {
  const r = await rig(t, { usePolling: false })
  await r.ingest.start()
  await r.ingest.scanned
  const staging = join(r.dataDir, '..', 'staging', SCOPE)
  await mkdir(staging, { recursive: true })
  const names = Array.from({ length: 300 }, (_, i) => `2026-02-01T00-${String(Math.floor(i / 60)).padStart(2, '0')}-${String(i % 60).padStart(2, '0')}Z.json`)
  for (const [i, name] of names.entries()) await writeFile(join(staging, name), envelope(`moved${i}`, name.replace(/T(\d\d)-(\d\d)-(\d\d)Z\.json$/, 'T$1:$2:$3Z')))
  await rename(staging, join(r.dataDir, SCOPE))
  await waitFor('every moved file stored', async () => r.stored.length >= names.length, 30_000)
  await new Promise((resolve) => setTimeout(resolve, 300)) // a second handing-on would show by now
  assert.deepEqual([...r.stored].sort(), names.map((n) => `${SCOPE}/${n}`).sort(), 'each file once')
  assert.equal(r.indexed.length, names.length)
  assert.equal(await r.index.count(), names.length)
  assert.equal(r.storage.blobs.size, names.length, 'each encrypted once')
})

test('files the watcher hands on together are ingested as one batch: one lookup of their records, not one per file', async (t) => {
  const r = await rig(t, { usePolling: false })
  // the real index, its lookups counted (the batch reads its files' records in one getMany)
  const lookups: string[][] = []
  const getMany = r.index.getMany.bind(r.index)
  r.index.getMany = async (paths) => { lookups.push([...paths]); return await getMany(paths) }
  await r.ingest.start()
  await r.ingest.scanned
  const staging = join(r.dataDir, '..', 'staging', SCOPE)
  await mkdir(staging, { recursive: true })
  const names = Array.from({ length: 10 }, (_, i) => `2026-03-01T00-00-${String(i).padStart(2, '0')}Z.json`)
  for (const [i, name] of names.entries()) await writeFile(join(staging, name), envelope(`together${i}`, `2026-03-01T00:00:${String(i).padStart(2, '0')}Z`))
  // moved in whole: its files are due at once and handed on in one go
  await rename(staging, join(r.dataDir, SCOPE))
  await waitFor('every moved file stored', async () => r.stored.length >= names.length, 30_000)
  const ours = lookups.filter((paths) => paths.some((p) => p.startsWith(`${SCOPE}/`)))
  assert.deepEqual(ours.map((paths) => [...paths].sort()), [names.map((n) => `${SCOPE}/${n}`).sort()], 'one lookup for the ten files')
})

test('a file that cannot be stored waits for storage and is stored once it is back', async (t) => {
  const r = await rig(t, { usePolling: false })
  await r.ingest.start()
  await r.ingest.scanned
  r.storage.down = true
  const path = await dropFile(r.dataDir, SCOPE, '2026-01-03T00-00-00Z.json', envelope('down', '2026-01-03T00:00:00Z'))
  await waitFor('the file waiting for storage', async () => (await r.ingest.status()).waitingForStorage === 1)
  assert.deepEqual(r.stored, [])
  r.storage.down = false
  await waitFor('the file stored after the outage', async () => (await r.index.get(path))?.state === 'stored', 10_000)
  assert.deepEqual(r.stored, [path])
})

test('a stopped service ingests nothing more', async (t) => {
  const r = await rig(t, { usePolling: true })
  await r.ingest.start()
  await r.ingest.scanned
  await r.ingest.stop()
  await r.ingest.stop() // idempotent
  await dropFile(r.dataDir, SCOPE, '2026-01-04T00-00-00Z.json', envelope('after', '2026-01-04T00:00:00Z'))
  r.ingest.push(`${SCOPE}/2026-01-04T00-00-00Z.json`)
  await new Promise((resolve) => setTimeout(resolve, 400))
  assert.deepEqual(r.stored, [])
  assert.equal(await r.index.count(), 0)
})

// The daemon stops its parts in reverse: the index closes right after ingest. A scan still
// running then once went on, logged "initial scan finished" and swept against the closed index
// ("initial scan failed: Database is not open").
test('stopped during its initial scan: the scan ends with the stop, unfinished, and touches nothing after it', async (t) => {
  const { logger, log } = capturingLogger()
  const r = await rig(t, { usePolling: false }, logger)
  const names = Array.from({ length: 400 }, (_, i) => `2026-03-01T00-${String(Math.floor(i / 60)).padStart(2, '0')}-${String(i % 60).padStart(2, '0')}Z.json`)
  for (const [i, name] of names.entries()) await dropFile(r.dataDir, SCOPE, name, envelope(`scan${i}`, name.replace(/T(\d\d)-(\d\d)-(\d\d)Z\.json$/, 'T$1:$2:$3Z')))
  await r.ingest.start()
  await r.ingest.stop()
  const scan = await r.ingest.scanned
  assert.equal(scan.done, false, 'a stopped scan is not a finished one')
  assert.ok(scan.seen < names.length, `stopped midway (${scan.seen} of ${names.length} seen)`)
  await r.db.close()
  await new Promise((resolve) => setTimeout(resolve, 300))
  const messages = log.lines.map((l) => String(l.msg))
  assert.ok(!messages.includes('initial scan finished'), messages.join(' | '))
  assert.deepEqual(log.lines.filter((l) => l.level >= 50).map((l) => `${l.msg}: ${l.err?.message}`), [], 'no error logged')
  const stored = r.stored.length
  await new Promise((resolve) => setTimeout(resolve, 200))
  assert.equal(r.stored.length, stored, 'nothing stored after the stop')
})

test('with a gate (the daemon: every part up), the initial scan begins once it opens, and never for a service stopped before', async (t) => {
  let open = (): void => {}
  const gate = new Promise<void>((resolve) => { open = resolve })
  const r = await rig(t, { usePolling: false }, silentLogger(), gate)
  const before = await dropFile(r.dataDir, SCOPE, '2026-01-05T00-00-00Z.json', envelope('gated', '2026-01-05T00:00:00Z'))
  await r.ingest.start()
  await new Promise((resolve) => setTimeout(resolve, 300))
  assert.equal(await r.index.get(before), null, 'not scanned while the gate is shut')
  assert.deepEqual((await r.ingest.status()).scan, { seen: 0, queued: 0, done: false })
  open()
  assert.equal((await r.ingest.scanned).seen, 1)
  assert.equal((await r.index.get(before))?.state, 'stored')

  let openLate = (): void => {}
  const late = await rig(t, { usePolling: false }, silentLogger(), new Promise<void>((resolve) => { openLate = resolve }))
  const file = await dropFile(late.dataDir, SCOPE, '2026-01-06T00-00-00Z.json', envelope('late', '2026-01-06T00:00:00Z'))
  await late.ingest.start()
  await late.ingest.stop()
  openLate()
  await new Promise((resolve) => setTimeout(resolve, 300))
  assert.equal(await late.index.get(file), null, 'a stopped service does not begin its scan')
})
