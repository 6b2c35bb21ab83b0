// The shipped units are valid for systemd, and the daemon serves a socket handed to it by socket
// activation (LISTEN_FDS), exactly as hearth.socket does.
import { test } from 'node:test'
import assert from 'node:assert/strict'
import { spawn, spawnSync } from 'node:child_process'
import { copyFile, mkdir } from 'node:fs/promises'
import { join } from 'node:path'
import { tempDir } from '../support/tmp.js'
import { REPO_ROOT, NODE_ARGS, testEnv } from '../support/daemon.js'
import { daemonRequest } from '../../src/client/daemon-client.js'
import { waitFor } from '../support/data-files.js'

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
  // the first connection starts the daemon; the request waits in the socket's backlog meanwhile
  const res = await daemonRequest(socket, { path: '/health', timeoutMs: 90_000 })
  assert.equal(res.status, 200, out)
  assert.equal(res.json.status, 'ok')
  assert.match(out, /listening on the socket passed by systemd/)
  const posted = await daemonRequest(socket, { method: 'POST', path: '/v1/data/github.profile', body: { login: 'sd', id: 7, created_at: '2020-01-01T00:00:00Z' } })
  assert.equal(posted.status, 201, posted.body.toString())
  process.kill(-child.pid!, 'SIGTERM')
  await exited
})
