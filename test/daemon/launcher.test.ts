// The daemon's process-level settings (V8 flags, docs in the README's "Idle memory") live in one
// place, the #! line of bin/hearth.js, and every way of starting the daemon runs that file:
// `hearth daemon` (npm's bin link to it), `npm start` and the systemd unit (`hearth` on its PATH).
import test from 'node:test'
import assert from 'node:assert/strict'
import { existsSync, readFileSync, statSync } from 'node:fs'
import { join } from 'node:path'
import { BIN, REPO_ROOT, startDaemonProcess } from '../support/daemon.js'

/** The node flags on bin/hearth.js's `#!/usr/bin/env -S node …` line. */
function launcherFlags (): string[] {
  const first = readFileSync(BIN, 'utf8').split('\n')[0]!
  const m = /^#!\/usr\/bin\/env -S node((?: --[a-z0-9-]+(?:=[^\s]+)?)*)$/.exec(first)
  assert.ok(m !== null, `bin/hearth.js starts with #!/usr/bin/env -S node and flags: ${first}`)
  return m[1]!.trim().split(/\s+/)
}

test('bin/hearth.js sets the daemon\'s V8 flags on its #! line; npm start and the systemd unit run that file', () => {
  const flags = launcherFlags()
  assert.ok(flags.some((f) => /^--max-semi-space-size=\d+$/.test(f)), 'a young generation sized for an idle daemon')
  assert.ok((statSync(BIN).mode & 0o111) !== 0, 'executable, so the #! line applies')
  const pkg = JSON.parse(readFileSync(join(REPO_ROOT, 'package.json'), 'utf8')) as { scripts: Record<string, string>, bin: Record<string, string> }
  assert.equal(pkg.bin.hearth, 'bin/hearth.js')
  assert.equal(pkg.scripts.start, 'bin/hearth.js daemon', 'executed, not `node bin/hearth.js`, which would drop the flags')
  const unit = readFileSync(join(REPO_ROOT, 'systemd/hearth.service'), 'utf8').split('\n')
  assert.ok(unit.includes('ExecStart=/usr/bin/env hearth daemon'), 'the unit runs the same launcher')
})

test('a daemon started through bin/hearth.js runs with those flags and reports its memory in GET /v1/status', { skip: !existsSync(join(REPO_ROOT, 'dist/cli/entry.js')) && 'dist/ is not built (npm ci builds it; or npm run build)' }, async (t) => {
  const d = await startDaemonProcess(t, { viaBin: true })
  const status = await d.request({ path: '/v1/status' })
  assert.equal(status.status, 200)
  const proc = status.json.process as { pid: number, node: string, flags: string[], memory: Record<string, number> }
  assert.equal(proc.pid, d.child.pid)
  assert.deepEqual(proc.flags, launcherFlags())
  assert.equal(proc.node, process.version)
  for (const key of ['rss', 'heapTotal', 'heapUsed', 'external', 'arrayBuffers']) assert.ok(Number.isSafeInteger(proc.memory[key]) && proc.memory[key]! >= 0, key)
  assert.ok(proc.memory.rss! > proc.memory.heapUsed!)
  assert.equal(await d.stop(), 0)
})
