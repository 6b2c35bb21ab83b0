// The daemon's process-level settings (V8 flags, docs in the README's "Idle memory") live in one
// place, the #! line of bin/hearth.js, and every way of starting the daemon runs that file:
// `hearth daemon` (npm's bin link to it), `npm start` and the systemd unit (`hearth` on its PATH).
import test from 'node:test'
import assert from 'node:assert/strict'
import { randomBytes } from 'node:crypto'
import { existsSync, readFileSync, statSync } from 'node:fs'
import { chmod, mkdir, readdir, stat, writeFile } from 'node:fs/promises'
import module from 'node:module'
import { join } from 'node:path'
import { BIN, REPO_ROOT, runCli, startDaemonProcess } from '../support/daemon.js'
import { tempDir } from '../support/tmp.js'

/** The environment and node flags on bin/hearth.js's `#!/usr/bin/env -S VAR=value … node --flag …` line. */
function launcher (): { env: string[], flags: string[] } {
  const first = readFileSync(BIN, 'utf8').split('\n')[0]!
  const m = /^#!\/usr\/bin\/env -S ((?:[A-Z_]+=[^\s]+ )*)node((?: --[a-z0-9-]+(?:=[^\s]+)?)*)$/.exec(first)
  assert.ok(m !== null, `bin/hearth.js starts with #!/usr/bin/env -S, variables, node and flags: ${first}`)
  return { env: m[1]!.trim().split(/\s+/), flags: m[2]!.trim().split(/\s+/) }
}

test('bin/hearth.js sets the daemon\'s V8 flags and malloc arenas on its #! line; npm start and the systemd unit run that file', () => {
  const { env, flags } = launcher()
  assert.ok(flags.some((f) => /^--max-semi-space-size=\d+$/.test(f)), 'a young generation sized for an idle daemon')
  assert.ok(env.includes('MALLOC_ARENA_MAX=2'), 'set before the process starts, as glibc reads it once')
  assert.ok((statSync(BIN).mode & 0o111) !== 0, 'executable, so the #! line applies')
  const pkg = JSON.parse(readFileSync(join(REPO_ROOT, 'package.json'), 'utf8')) as { scripts: Record<string, string>, bin: Record<string, string> }
  assert.equal(pkg.bin.hearth, 'bin/hearth.js')
  assert.equal(pkg.scripts.start, 'bin/hearth.js daemon', 'executed, not `node bin/hearth.js`, which would drop the flags')
  const unit = readFileSync(join(REPO_ROOT, 'systemd/hearth.service'), 'utf8').split('\n')
  assert.ok(unit.includes('ExecStart=/usr/bin/env hearth daemon'), 'the unit runs the same launcher')
})

test('a daemon started through bin/hearth.js runs with those flags and reports its memory in GET /v1/status and hearth status', { skip: !existsSync(join(REPO_ROOT, 'dist/cli/entry.js')) && 'dist/ is not built (npm ci builds it; or npm run build)' }, async (t) => {
  const d = await startDaemonProcess(t, { viaBin: true })
  const status = await d.request({ path: '/v1/status' })
  assert.equal(status.status, 200)
  const proc = status.json.process as { pid: number, node: string, flags: string[], memory: Record<string, number> }
  assert.equal(proc.pid, d.child.pid)
  assert.deepEqual(proc.flags, launcher().flags)
  if (existsSync(`/proc/${proc.pid}/environ`)) {
    const environ = readFileSync(`/proc/${proc.pid}/environ`, 'utf8').split('\0')
    for (const assignment of launcher().env) assert.ok(environ.includes(assignment), `${assignment} reaches the daemon`)
  }
  assert.equal(proc.node, process.version)
  for (const key of ['rss', 'heapTotal', 'heapUsed', 'external', 'arrayBuffers']) assert.ok(Number.isSafeInteger(proc.memory[key]) && proc.memory[key]! >= 0, key)
  assert.ok(proc.memory.rss! > proc.memory.heapUsed!)
  const cli = await runCli(d.home, ['status', '--verbose'])
  assert.equal(cli.code, 0, cli.stderr)
  assert.match(cli.stdout, /^memory +\d+ MB resident, V8 heap \d+ of \d+ MB \(node v[\d.]+ --max-semi-space-size=\d+\)$/m)
  assert.equal(await d.stop(), 0)
})

const hasCompileCache = typeof (module as { enableCompileCache?: unknown }).enableCompileCache === 'function'

/** Every file under `dir`, recursively. */
async function filesUnder (dir: string): Promise<string[]> {
  const entries = await readdir(dir, { recursive: true, withFileTypes: true }).catch(() => [])
  return entries.filter((e) => e.isFile()).map((e) => join(e.parentPath, e.name))
}

test('on a Node with a compile cache, bin/hearth.js turns it on in the owner\'s cache folder ($XDG_CACHE_HOME/hearth/node-compile-cache, never a folder others can write); a corrupt cache only costs a compile: the next daemon starts and stores a POST', {
  skip: (!hasCompileCache && `node ${process.version} has no module compile cache (22.1+)`) || (!existsSync(join(REPO_ROOT, 'dist/cli/entry.js')) && 'dist/ is not built (npm ci builds it; or npm run build)')
}, async (t) => {
  // NODE_COMPILE_CACHE alone would turn it on without the launcher: the folder comes from XDG_CACHE_HOME
  const tmp = await tempDir(t)
  const cache = join(tmp, 'hearth', 'node-compile-cache')
  // a folder another user could write (compiled code is run as found): left unused
  await mkdir(cache, { recursive: true })
  await chmod(cache, 0o777)
  const shared = await startDaemonProcess(t, { viaBin: true, env: { XDG_CACHE_HOME: tmp } })
  assert.equal(await shared.stop(), 0)
  assert.deepEqual(await filesUnder(cache), [], 'a group- or world-writable cache folder is not used')
  await chmod(cache, 0o700)
  const first = await startDaemonProcess(t, { viaBin: true, home: shared.home.root, env: { XDG_CACHE_HOME: tmp } })
  assert.equal(await first.stop(), 0)
  const written = await filesUnder(cache)
  assert.ok(written.length > 0, 'the modules\' compiled code is kept when the daemon exits')
  // every entry garbage of the same length: the checksum of each no longer matches its code
  for (const file of written) await writeFile(file, randomBytes((await stat(file)).size))
  const second = await startDaemonProcess(t, { viaBin: true, home: first.home.root, env: { XDG_CACHE_HOME: tmp } })
  const posted = await second.request({ method: 'POST', path: '/v1/data/github.profile', body: { login: 'cc', id: 8, created_at: '2020-01-01T00:00:00Z' } })
  assert.equal(posted.status, 201, JSON.stringify(posted.json))
  assert.equal(await second.stop(), 0)
})
