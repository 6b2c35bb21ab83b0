// Child process for the file-index crash test: writes records forever (single puts running
// concurrently, batches, state updates and deletes) until it is killed. Prints "progress N" after
// each round so the parent knows writes are under way. Usage: db-writer.ts <dir> <startRound>
import '../../src/polyfill.js'
import { openDatabase } from '../../src/db/database.js'
import { openFileIndex } from '../../src/db/file-index.js'
import { createDurableQueue } from '../../src/db/queue.js'
import { fileRecord } from './db-fixtures.js'

const [dir, startArg] = process.argv.slice(2)
const db = await openDatabase(dir)
const index = await openFileIndex({ db })
const queue = createDurableQueue<{ path: string }>(db, 'crash')

const at = (i: number): string => new Date(Date.UTC(2026, 0, 1) + i * 250).toISOString().replace('.000Z', 'Z')
for (let round = Number(startArg); ; round++) {
  const base = round * 100
  // 40 single puts at once: many small concurrent batches.
  await Promise.all(Array.from({ length: 40 }, async (_, i) => {
    const path = `crash.s${(base + i) % 5}/${base + i}.json`
    await index.put(fileRecord(path, at(base + i)))
    await queue.enqueue(path, { path })
  }))
  // One large batch.
  await index.putMany(Array.from({ length: 60 }, (_, i) => fileRecord(`crash.s${(base + 40 + i) % 5}/${base + 40 + i}.json`, at(base + 40 + i))))
  // Register some, delete some, ack some.
  await Promise.all(Array.from({ length: 20 }, async (_, i) => {
    const path = `crash.s${(base + i) % 5}/${base + i}.json`
    await index.put(fileRecord(path, at(base + i), { state: 'registered', fileId: String(base + i) }))
    await queue.ack(path)
  }))
  await index.deleteMany(Array.from({ length: 10 }, (_, i) => `crash.s${(base + 50 + i) % 5}/${base + 50 + i}.json`))
  process.stdout.write(`progress ${round}\n`)
}
