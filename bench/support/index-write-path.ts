// The index write of an ingested small file, alone (bench/index.ts --write-path): a new path's
// record written by putDerived with its ~2.2 KB journal entry (the data file's and the
// ciphertext's bytes) in the same synced, group-committed batch, `clients` at once, and the
// journal's checkpoint dropping the entries; the code of a checkout given by its folder, so an
// older one runs side by side. Prints one JSON line: per record, the main thread's CPU, the
// whole process's (LevelDB's threads too) and the wall time, in µs.
import { mkdtemp, readFile, rm } from 'node:fs/promises'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { randomBytes } from 'node:crypto'

/** CPU time of the calling thread so far (ms; ticks of 10 ms). */
async function threadCpuMs (): Promise<number> {
  const f = (await readFile('/proc/thread-self/stat', 'utf8')).split(') ')[1]!.split(' ')
  return (Number(f[11]) + Number(f[12])) * 10
}

export async function writePathChild (checkout: string, clients: number, count: number): Promise<void> {
  await import(join(checkout, 'src/polyfill.ts'))
  const { openDatabase } = await import(join(checkout, 'src/db/database.ts'))
  const { openFileIndex } = await import(join(checkout, 'src/db/file-index.ts'))
  const { createIngestJournal } = await import(join(checkout, 'src/ingest/journal.ts'))
  const dir = await mkdtemp(join(tmpdir(), 'hearth-bench-index-write-'))
  const db = await openDatabase(join(dir, 'index'))
  const index = await openFileIndex({ db })
  const quiet = { warn () {}, info () {}, error () {}, debug () {} }
  const journal = createIngestJournal({ db, dataDir: dir, storage: { writeDeferred: async () => {} }, index, syncFiles: async () => {}, logger: quiet })
  const data = randomBytes(1024)
  const ciphertext = randomBytes(1180)
  const T0 = Date.UTC(2026, 0, 1)
  const one = async (i: number): Promise<void> => {
    const collectedAt = new Date(T0 + i).toISOString()
    const path = `instagram.profile/${collectedAt.replaceAll(':', '-')}.json`
    const cid = `bafkrei${i.toString(36).padStart(52, 'a')}`
    const base = { path, scope: 'instagram.profile', collectedAt, schemaId: '1', cid, size: 1024, encryptedSize: 1180, sha256: 'ab'.repeat(32), mtimeMs: T0 + i, state: 'stored', origin: 'local' }
    const pending = journal.entry({ path, data, ciphertext, cid, files: [join(dir, path)] })
    await index.putDerived(path, (current: { origin?: string } | null) => ({ record: { ...base, origin: current?.origin ?? 'local', updatedAt: Date.now() } }), { also: pending.ops })
    pending.committed()
  }
  const run = async (from: number, n: number): Promise<void> => {
    let next = from
    await Promise.all(Array.from({ length: clients }, async () => { while (next < from + n) await one(next++) }))
  }
  await run(0, Math.min(2000, count)) // warm: JIT, the first tables
  const main = await threadCpuMs()
  const cpu = process.cpuUsage()
  const wall = performance.now()
  await run(1_000_000, count)
  await journal.checkpoint()
  const used = process.cpuUsage(cpu)
  const out = { mainUs: (await threadCpuMs() - main) * 1000 / count, cpuUs: (used.user + used.system) / count, wallUs: (performance.now() - wall) * 1000 / count }
  await journal.close()
  await db.close()
  await rm(dir, { recursive: true, force: true })
  console.log(JSON.stringify(out))
}
