// The shipped units are valid for systemd, and the daemon serves a socket handed to it by socket
// activation (LISTEN_FDS), exactly as hearth.socket does.
import { test } from 'node:test'
import assert from 'node:assert/strict'
import { spawn, spawnSync } from 'node:child_process'
import { existsSync } from 'node:fs'
import { copyFile, mkdir, readFile, symlink } from 'node:fs/promises'
import { homedir } from 'node:os'
import { join } from 'node:path'
import { tempDir } from '../support/tmp.js'
import { REPO_ROOT, NODE_ARGS, testEnv } from '../support/daemon.js'
import { daemonRequest } from '../../src/client/daemon-client.js'
import { waitFor } from '../support/data-files.js'
import { defaultHomeRoot } from '../../src/home.js'

const have = (cmd: string): boolean => spawnSync('sh', ['-c', `command -v ${cmd}`]).status === 0

test('systemd-analyze verifies the service and socket units', { skip: !have('systemd-analyze') && 'systemd-analyze is not installed (.ci/run installs the systemd package)' }, async (t) => {
  const dir = await tempDir(t)
  for (const unit of ['hearth.service', 'hearth.socket']) await copyFile(join(REPO_ROOT, 'systemd', unit), join(dir, unit))
  const r = spawnSync('systemd-analyze', ['verify', join(dir, 'hearth.service'), join(dir, 'hearth.socket')], { encoding: 'utf8' })
  assert.equal(r.status, 0, r.stderr + r.stdout)
  assert.ok(!/hearth\.(service|socket):\d+:/.test(r.stderr), `no unit warnings:\n${r.stderr}`)
})

test('socket activation: the daemon serves the socket passed through LISTEN_FDS', { skip: !have('systemd-socket-activate') && 'systemd-socket-activate is not installed (.ci/run installs the systemd package)' }, async (t) => {
  const home = await tempDir(t, 'hearth-home-')
  const socket = join(home, 'run', 'hearth.sock')
  await mkdir(join(home, 'run'), { recursive: true, mode: 0o700 })
  const env = { ...testEnv(), HEARTH_HOME: home }
  const child = spawn('systemd-socket-activate', [
    '-l', socket,
    ...Object.entries(env).map(([k, v]) => `-E${k}=${v}`),
    process.execPath, ...NODE_ARGS, 'daemon'
  ], { cwd: REPO_ROOT, env, stdio: ['ignore', 'pipe', 'pipe'], detached: true })
  let out = ''
  child.stdout!.on('data', (c: Buffer) => { out += c.toString() })
  child.stderr!.on('data', (c: Buffer) => { out += c.toString() })
  const exited = new Promise((resolve) => child.once('exit', resolve))
  t.after(async () => {
    try { process.kill(-child.pid!, 'SIGKILL') } catch {}
    await exited
  })
  await waitFor('activation socket', async () => out.includes('Listening on'), 20_000)
  // the first connection starts the daemon; the request waits in the socket's backlog until the
  // listener is up, which answers /health at once (its parts may still be starting)
  const res = await daemonRequest(socket, { path: '/health', timeoutMs: 90_000 })
  assert.equal(res.status, 200, out)
  assert.ok(['ok', 'starting'].includes(res.json.status), res.json.status)
  assert.match(out, /listening on the socket passed by systemd/)
  // a request for the rest waits at the starting gate until the parts are up
  const posted = await daemonRequest(socket, { method: 'POST', path: '/v1/data/github.profile', body: { login: 'sd', id: 7, created_at: '2020-01-01T00:00:00Z' } })
  assert.equal(posted.status, 201, posted.body.toString())
  process.kill(-child.pid!, 'SIGTERM')
  await exited
})

const UNIT = join(REPO_ROOT, 'systemd', 'hearth.service')

async function unitLines (): Promise<string[]> {
  return (await readFile(UNIT, 'utf8')).split('\n').filter((l) => !l.startsWith('#'))
}

test('the user unit: no network-online.target, an optional ReadWritePaths, HEARTH_HOME set once and used by the start steps', async () => {
  const lines = await unitLines()
  assert.ok(!lines.some((l) => l.includes('network-online.target')), 'a user manager has no network-online.target')
  const rw = lines.filter((l) => l.startsWith('ReadWritePaths='))
  assert.deepEqual(rw, ['ReadWritePaths=-%h/.hearth'], 'optional (-), so a missing home does not fail the start')
  assert.deepEqual(lines.filter((l) => l.startsWith('Environment=HEARTH_HOME=')), ['Environment=HEARTH_HOME=%h/.hearth'])
  assert.ok(lines.includes('ExecStartPre=+/bin/mkdir -p -m 0700 ${HEARTH_HOME}'), 'the home is created outside the sandbox, wherever HEARTH_HOME points')
  assert.ok(lines.includes('ExecStart=/usr/bin/env hearth daemon'))
  // an empty override means "unset", never the current folder
  assert.equal(defaultHomeRoot({ HEARTH_HOME: '' }), join(homedir(), '.hearth'))
  assert.equal(defaultHomeRoot({ HEARTH_HOME: '/srv/h' }), '/srv/h')
})

test('ExecStart finds hearth under the unit\'s PATH: a global install with a user prefix, and a checkout linked into ~/.local/bin', { skip: !existsSync(join(REPO_ROOT, 'dist/cli/entry.js')) && 'dist/ is not built (npm ci builds it; or npm run build)' }, async (t) => {
  const pathLine = (await unitLines()).find((l) => l.startsWith('Environment=PATH='))
  assert.ok(pathLine !== undefined)
  const version = JSON.parse(await readFile(join(REPO_ROOT, 'package.json'), 'utf8')).version as string
  for (const binDir of ['.npm-global/bin', '.local/bin']) {
    const home = await tempDir(t)
    await mkdir(join(home, binDir), { recursive: true })
    await symlink(join(REPO_ROOT, 'bin', 'hearth.js'), join(home, binDir, 'hearth'))
    const PATH: string = pathLine.slice('Environment=PATH='.length).replaceAll('%h', home)
    // what the user manager runs: a clean environment with the unit's variables
    const r: { status: number | null, stdout: string, stderr: string } = spawnSync('/usr/bin/env', ['-i', `HOME=${home}`, `PATH=${PATH}`, `HEARTH_HOME=${join(home, '.hearth')}`, '/usr/bin/env', 'hearth', '--version'], { encoding: 'utf8' })
    assert.equal(r.status, 0, r.stderr)
    assert.equal(r.stdout, `hearth ${version}\n`, binDir)
  }
})

test('systemd-analyze security rates the user unit 2.0 or better (it was 7.5)', { skip: !have('systemd-analyze') && 'systemd-analyze is not installed (.ci/run installs the systemd package)' }, async (t) => {
  const dir = await tempDir(t)
  await copyFile(UNIT, join(dir, 'hearth.service'))
  const r = spawnSync('systemd-analyze', ['security', '--offline=true', join(dir, 'hearth.service')], { encoding: 'utf8' })
  const score = /Overall exposure level for hearth\.service: (\d+\.\d)/.exec(r.stdout + r.stderr)
  assert.ok(score !== null, r.stdout + r.stderr)
  t.diagnostic(`systemd-analyze security: ${score[1]}`)
  assert.ok(Number(score[1]) <= 2.0, `exposure ${score[1]}`)
})
