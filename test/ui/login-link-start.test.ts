// `hearth ui` right after a start (issue 24, item 9): the login-link route is served before the
// dashboard listens, so until it does it answers DAEMON_STARTING (and the CLI waits), never "the
// dashboard is off"; a dashboard whose port is taken says which setting to change.
import { test } from 'node:test'
import assert from 'node:assert/strict'
import { createServer } from 'node:net'
import { daemonRequest } from '../../src/client/daemon-client.js'
import { startDaemonProcess, runCli } from '../support/daemon.js'

test('a login link asked for as soon as /health answers is DAEMON_STARTING until the dashboard listens, then a link; the CLI waits for it', async (t) => {
  const d = await startDaemonProcess(t, { untilHealth: true })
  const answers: Array<{ status: number; code: string | undefined }> = []
  for (;;) {
    const r = await daemonRequest(d.home.socket, { method: 'POST', path: '/v1/ui/login-link', retryWhileStarting: false })
    answers.push({ status: r.status, code: r.json?.error?.errorCode })
    if (r.status === 201) {
      assert.match(r.json.url, /^http:\/\/127\.0\.0\.1:\d+\/login\?token=/)
      break
    }
    assert.equal(r.status, 503, `only DAEMON_STARTING before the link: ${JSON.stringify(r.json)}`)
    assert.equal(r.json.error.errorCode, 'DAEMON_STARTING')
    assert.equal(r.headers['retry-after'], '1')
    await new Promise((resolve) => setTimeout(resolve, 10))
  }
  assert.ok(answers.every((a) => a.status !== 409), JSON.stringify(answers))
  assert.equal(await d.stop(), 0)

  // the CLI started right after /health: it waits for the dashboard and prints the link
  const again = await startDaemonProcess(t, { home: d.home.root, untilHealth: true })
  const cli = await runCli(again.home, ['ui', '--no-open', '--json'])
  assert.equal(cli.code, 0, cli.stderr)
  assert.match(JSON.parse(cli.stdout).url, /\/login\?token=/)
  assert.equal(await again.stop(), 0)
})

test('a dashboard whose port is taken names ui.listen and HEARTH_UI_LISTEN, at start and when a login link is asked for', async (t) => {
  const taken = createServer()
  await new Promise<void>((resolve) => taken.listen(0, '127.0.0.1', resolve))
  t.after(() => { taken.close() })
  const port = (taken.address() as { port: number }).port
  const d = await startDaemonProcess(t, { env: { HEARTH_UI_LISTEN: `127.0.0.1:${port}` } })
  assert.match(d.output(), new RegExp(`dashboard not started: .*127\\.0\\.0\\.1:${port}.*ui\\.listen.*HEARTH_UI_LISTEN`))
  const r = await d.request({ method: 'POST', path: '/v1/ui/login-link' })
  assert.equal(r.status, 409)
  assert.equal(r.json.error.errorCode, 'CONFLICT')
  assert.match(r.json.error.message, /port .* is taken.*ui\.listen.*HEARTH_UI_LISTEN/)
  assert.equal(await d.stop(), 0)
})
