import { test } from 'node:test'
import assert from 'node:assert/strict'
import { spawn } from 'node:child_process'
import { fileURLToPath } from 'node:url'
import { openDatabase } from '../../src/db/database.js'
import { openFileIndex } from '../../src/db/file-index.js'
import { createDurableQueue } from '../../src/db/queue.js'
import { isCompleteRecord } from '../support/db-fixtures.js'
import { tempDir } from '../support/tmp.js'

const writer = fileURLToPath(new URL('../support/db-writer.ts', import.meta.url))

/** Runs the writer until it reported `rounds` rounds, then SIGKILLs it mid-write. */
async function writeThenKill (t: { after: (fn: () => void) => void }, dir: string, startRound: number, rounds: number): Promise<number> {
  const child = spawn(process.execPath, ['--import', 'tsx', writer, dir, String(startRound)], { stdio: ['ignore', 'pipe', 'pipe'] })
  t.after(() => { if (child.exitCode === null && child.signalCode === null) child.kill('SIGKILL') })
  let stderr = ''
  child.stderr.on('data', (d: Buffer) => { stderr += d.toString() })
  let last = -1
  await new Promise<void>((resolve, reject) => {
    child.stdout.on('data', (d: Buffer) => {
      for (const m of d.toString().matchAll(/progress (\d+)/g)) last = Number(m[1])
      if (last >= startRound + rounds - 1) {
        // A round takes ~250 ms: kill it at a random point of the next one.
        setTimeout(() => { child.kill('SIGKILL') }, Math.floor(Math.random() * 250))
        resolve()
      }
    })
    child.on('exit', (code, signal) => { if (signal !== 'SIGKILL') reject(new Error(`writer exited ${code}: ${stderr}`)) })
  })
  await new Promise<void>((resolve) => { if (child.exitCode !== null || child.signalCode !== null) resolve(); else child.on('exit', () => { resolve() }) })
  assert.equal(child.signalCode, 'SIGKILL')
  return last + 1
}

test('SIGKILL in the middle of writes leaves a consistent index and queue', async (t) => {
  const dir = await tempDir(t)
  let nextRound = 0
  for (let attempt = 0; attempt < 3; attempt++) {
    nextRound = await writeThenKill(t, dir, nextRound, 3) + 1

    const db = await openDatabase(dir)
    try {
      const index = await openFileIndex({ db })
      const check = await index.verify()
      assert.equal(check.ok, true, check.problems.join('\n'))
      assert.ok(check.records > 0)
      assert.deepEqual(await index.countsByState(), check.counts)
      // No partial record: every stored record is whole.
      let after: string | undefined
      let seen = 0
      for (;;) {
        const page = await index.all({ after, limit: 500 })
        if (page.length === 0) break
        for (const r of page) assert.ok(isCompleteRecord(r), JSON.stringify(r))
        seen += page.length
        after = page[page.length - 1].path
      }
      assert.equal(seen, check.records)
      // The change log names every live record exactly once.
      const changes = await index.changesSince(0, 1_000_000)
      assert.equal(changes.filter((c) => !c.deleted).length, check.records)
      assert.equal(changes.filter((c) => c.deleted).length, check.tombstones)
      const seqs = changes.map((c) => c.seq)
      assert.ok(seqs.every((s, i) => i === 0 || s > seqs[i - 1]))
      // The queue's size counter matches its entries.
      const queue = createDurableQueue<{ path: string }>(db, 'crash')
      const due = await queue.due(1_000_000, Date.now() + 1)
      assert.equal(due.length, await queue.size())
    } finally {
      await db.close()
    }
  }
})
