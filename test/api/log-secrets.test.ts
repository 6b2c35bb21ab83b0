// The daemon's log holds no credential a refused request carried (issue 24, item 6): the API
// token in a TCP request's query, a one-time login link refused by the dashboard, a cookie.
import { test } from 'node:test'
import assert from 'node:assert/strict'
import { readFile } from 'node:fs/promises'
import { join } from 'node:path'
import { startDaemonProcess } from '../support/daemon.js'
import { tempDir } from '../support/tmp.js'
import { httpCall } from '../support/api-server.js'

test('refused requests are logged with their credentials redacted: ?token= on the TCP listener, a login link, a cookie', async (t) => {
  const dir = await tempDir(t)
  const logFile = join(dir, 'daemon.log')
  const d = await startDaemonProcess(t, { stderrFile: logFile, env: { HEARTH_TCP_PORT: '0' }, args: ['--set', 'api.tcp.enabled=true'] })
  const tcpPort = Number(/TCP listener on 127\.0\.0\.1:(\d+)/.exec(d.output())?.[1])
  const token = (await readFile(join(d.home.identity, 'api-token'), 'utf8')).trim()
  const tcp = { host: '127.0.0.1', port: tcpPort }
  assert.equal((await httpCall(tcp, 'GET', `/health?token=${token}`)).status, 401)
  assert.equal((await httpCall(tcp, 'GET', `/v1/status?access_token=${token}`, { headers: { cookie: `hearth=${token}` } })).status, 401)
  // a live one-time login link, refused for its Host header: its token must not be logged
  const link = await d.request({ method: 'POST', path: '/v1/ui/login-link' })
  assert.equal(link.status, 201, JSON.stringify(link.json))
  const url = new URL(link.json.url as string)
  const loginToken = url.searchParams.get('token')!
  const rebound = await httpCall({ host: '127.0.0.1', port: Number(url.port) }, 'GET', `${url.pathname}${url.search}`, { headers: { host: 'evil.example' } })
  assert.equal(rebound.status, 403)
  assert.equal(await d.stop(), 0)
  const log = await readFile(logFile, 'utf8')
  assert.match(log, /request refused/, 'the refusals are logged')
  assert.match(log, /\/health\?token=\[redacted\]/, 'with the path and the name of what was hidden')
  assert.ok(!log.includes(token), 'the API token is not in the log')
  assert.ok(!log.includes(loginToken), 'the login link\'s token is not in the log')
})
