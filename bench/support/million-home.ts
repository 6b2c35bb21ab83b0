// A home holding `count` data files that are already stored and indexed, for start-up benches: real
// 1 KB envelope files in the data folder (written in bulk, mtimes set so they match their index
// records) and their records in the real file index (the project's own FileIndex, batched). The
// ciphertext blocks are not written: a start never reads them, and the initial scan finds every
// file unchanged (size and mtime match its record), which is what a restart of a big home sees.
import { mkdirSync, writeFileSync, utimesSync } from 'node:fs'
import { createHash } from 'node:crypto'
import { join } from 'node:path'
import { openDatabase } from '../../src/db/database.js'
import { openFileIndex } from '../../src/db/file-index.js'
import type { FileRecord } from '../../src/db/types.js'
import { homeLayout } from '../../src/home.js'
import { rawBlockCid } from '../../src/storage/raw-blocks.js'

const SCOPES = ['instagram.profile', 'instagram.posts', 'instagram.likes', 'instagram.comments', 'github.profile', 'chatgpt.conversations', 'google.searchHistory', 'instagram.followers', 'instagram.following', 'instagram.conversations']
const BATCH = 5000
const T0 = Date.UTC(2020, 0, 1)

/** Writes the files and index records; `progress` is told the count done every batch. */
export async function buildMillionHome (root: string, count: number, progress: (done: number) => void = () => {}): Promise<void> {
  const home = homeLayout(root)
  for (const scope of SCOPES) mkdirSync(join(home.data, scope), { recursive: true })
  mkdirSync(home.index, { recursive: true })
  const db = await openDatabase(home.index)
  const index = await openFileIndex({ db, durable: false })
  try {
    const filler = 'x'.repeat(900)
    for (let from = 0; from < count; from += BATCH) {
      const records: FileRecord[] = []
      for (let i = from; i < Math.min(count, from + BATCH); i++) {
        const scope = SCOPES[i % SCOPES.length]!
        const collectedAt = new Date(T0 + i * 1000).toISOString()
        const rel = `${scope}/${collectedAt.replace(/:/g, '-')}.json`
        const bytes = Buffer.from(JSON.stringify({ version: '1.0', scope, collectedAt, data: { n: i, note: filler } }))
        const path = join(home.data, rel)
        writeFileSync(path, bytes)
        // whole seconds: the mtime read back is exactly the one recorded
        const mtime = Math.floor((T0 + i * 1000) / 1000)
        utimesSync(path, mtime, mtime)
        records.push({
          path: rel, scope, collectedAt, schemaId: String(1 + (i % SCOPES.length)),
          // a well-formed CID (of the plaintext: nothing is encrypted here, and nothing reads it)
          cid: rawBlockCid(bytes).toString(),
          size: bytes.byteLength, encryptedSize: bytes.byteLength + 300,
          sha256: createHash('sha256').update(bytes).digest('hex'),
          mtimeMs: mtime * 1000, state: 'stored', fileId: null, origin: 'local', updatedAt: T0 + i
        })
      }
      await index.putMany(records)
      progress(Math.min(count, from + BATCH))
    }
  } finally {
    await db.close()
  }
}
