// better-sqlite3 12's Database and Statement objects abort Node ≥ 24.19 when a garbage
// collection outside an entered environment finalises one (RemoveEnvironmentCleanupHook asserts
// `(env) != nullptr` in ~Statement). The search store keeps every object it makes for the process's
// life; this runs a process that opens and closes stores hundreds of times, lets the runtime
// collect as it likes, and ends normally: it must exit 0 on every Node the project supports. And no
// other code loads better-sqlite3 (what it made there would not be kept).
import { test } from 'node:test'
import assert from 'node:assert/strict'
import { spawn } from 'node:child_process'
import { readFileSync } from 'node:fs'
import { join, relative } from 'node:path'
import { fileURLToPath } from 'node:url'
import { REPO_ROOT } from '../support/daemon.js'
import { codeFiles } from '../support/code-files.js'
import { tempDir } from '../support/tmp.js'

const churn = fileURLToPath(new URL('../support/search-store-churn.ts', import.meta.url))

test('a process that opens, queries and closes search stores hundreds of times, and fails to open a damaged one as often, collecting as it goes, exits 0', { timeout: 240_000 }, async (t) => {
  const dir = await tempDir(t)
  const rounds = 200
  const child = spawn(process.execPath, ['--import', 'tsx', churn, dir, String(rounds)], { stdio: ['ignore', 'pipe', 'pipe'] })
  let out = ''
  let err = ''
  child.stdout.setEncoding('utf8').on('data', (s: string) => { out += s })
  child.stderr.setEncoding('utf8').on('data', (s: string) => { err += s })
  const [code, signal] = await new Promise<[number | null, NodeJS.Signals | null]>((resolve) => child.on('close', (c, s) => resolve([c, s])))
  assert.equal(signal, null, `the process died of ${signal}: ${err.slice(0, 2000)}`)
  assert.equal(code, 0, `exit ${code}: ${err.slice(0, 2000)}`)
  assert.match(out, new RegExp(`churned ${rounds}, refused ${rounds}`))
})

test('better-sqlite3 is loaded by the search store alone (and the child above), which keeps what it makes: anywhere else a collected statement could abort Node 24', () => {
  const loaders = ['src', 'plugins', 'bench', 'test', 'scripts'].flatMap((d) => codeFiles(join(REPO_ROOT, d)))
    .filter((f) => /(?:from|import\(|require\()\s*['"]better-sqlite3['"]/.test(readFileSync(f, 'utf8')))
    .map((f) => relative(REPO_ROOT, f))
  assert.deepEqual(loaders, ['src/search/store.ts', 'test/support/search-store-churn.ts'])
})
