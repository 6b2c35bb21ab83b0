// Runs every test under test/ with node:test. Node 20's runner does not discover .ts files on
// its own, so the list is explicit. Extra arguments narrow the run to files whose path contains them.
// A full run type-checks src/, test/, bench/ and scripts/ first (tsx runs without checking types).
import { readdirSync, statSync } from 'node:fs'
import { join } from 'node:path'
import { spawnSync } from 'node:child_process'

function walk (dir) {
  return readdirSync(dir).flatMap((name) => {
    const p = join(dir, name)
    return statSync(p).isDirectory() ? walk(p) : (p.endsWith('.test.ts') ? [p] : [])
  })
}

const filters = process.argv.slice(2)
const files = walk('test').sort().filter((f) => filters.length === 0 || filters.some((x) => f.includes(x)))
if (files.length === 0) { console.error('no test files matched'); process.exit(1) }
if (filters.length === 0) {
  const tsc = spawnSync(process.execPath, ['node_modules/typescript/bin/tsc', '-p', 'tsconfig.check.json'], { stdio: 'inherit' })
  if (tsc.status !== 0) { console.error('type check failed'); process.exit(tsc.status ?? 1) }
}
const concurrency = process.env.HEARTH_TEST_CONCURRENCY ?? '2'
const r = spawnSync(process.execPath, [
  '--import', 'tsx', '--import', './src/polyfill.ts',
  '--test', `--test-concurrency=${concurrency}`, '--test-timeout=300000',
  ...files
], { stdio: 'inherit' })
process.exit(r.status ?? 1)
