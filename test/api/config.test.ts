import { test } from 'node:test'
import assert from 'node:assert/strict'
import { readFile, stat } from 'node:fs/promises'
import { homeLayout } from '../../src/home.js'
import { runCli, startDaemonProcess } from '../support/daemon.js'
import { tempDir } from '../support/tmp.js'

test('a bad configuration value stops the daemon before anything starts, naming its source', async (t) => {
  const root = await tempDir(t, 'hearth-home-')
  const d = await startDaemonProcess(t, { home: root, env: { HEARTH_TCP_PORT: '99999' }, readyLine: 'never' }).catch((err: Error) => err)
  assert.ok(d instanceof Error)
  assert.match(d.message, /CONFIG_INVALID: invalid configuration: api\.tcp\.port must be <= 65535 \(got 99999 from env HEARTH_TCP_PORT\)/)
  await assert.rejects(stat(homeLayout(root).identity), { code: 'ENOENT' }, 'no identity was created')
})

test('GET /v1/config shows each value\'s source; PATCH persists validated edits and applies live keys at once', async (t) => {
  const d = await startDaemonProcess(t, { env: { HEARTH_MAX_BODY_BYTES: '65536', HEARTH_LOG_LEVEL: '' }, args: ['--set', 'ingest.concurrency=2'] })
  const shown = await d.request({ path: '/v1/config' })
  assert.equal(shown.status, 200)
  assert.equal(shown.json.config.api.maxBodyBytes, 65536)
  assert.equal(shown.json.sources['api.maxBodyBytes'], 'env HEARTH_MAX_BODY_BYTES')
  assert.equal(shown.json.sources['ingest.concurrency'], '--set')
  assert.equal(shown.json.sources['storage.backend'], 'default')
  assert.equal(shown.json.schema.properties.api.properties.tcp.properties.port.maximum, 65535)

  const bad = await d.request({ method: 'PATCH', path: '/v1/config', body: { set: { 'api.tcp.port': 70000 } } })
  assert.equal(bad.status, 400)
  assert.equal(bad.json.error.errorCode, 'CONFIG_INVALID')
  await assert.rejects(readFile(d.home.config), { code: 'ENOENT' }, 'nothing written for a refused edit')
  const junk = await d.request({ method: 'PATCH', path: '/v1/config', body: { sett: {} } })
  assert.equal(junk.json.error.errorCode, 'INVALID_BODY')

  const edit = await d.request({ method: 'PATCH', path: '/v1/config', body: { set: { logLevel: 'error', 'sync.intervalMs': 120000 } } })
  assert.equal(edit.status, 200, JSON.stringify(edit.json))
  assert.deepEqual(edit.json.applied, ['logLevel'])
  assert.deepEqual(edit.json.restartRequired, ['sync.intervalMs'])
  assert.deepEqual(JSON.parse(await readFile(d.home.config, 'utf8')), { logLevel: 'error', sync: { intervalMs: 120000 } })
  const after = await d.request({ path: '/v1/config' })
  assert.equal(after.json.config.logLevel, 'error')
  assert.equal(after.json.sources.logLevel, 'file')

  // the CLI reads and writes the same file
  const shownCli = await runCli(d.home, ['config'])
  assert.equal(shownCli.code, 0)
  assert.match(shownCli.stdout, /sync\.intervalMs\s+120000\s+\(file\)/)
  const set = await runCli(d.home, ['config', 'set', 'upstream.baseUrl=http://127.0.0.1:9'])
  assert.equal(set.code, 0, set.stderr)
  assert.match(set.stdout, /restart the daemon to apply upstream\.baseUrl/)
  const refused = await runCli(d.home, ['config', 'set', 'upstream.baseUrl=42'])
  assert.equal(refused.code, 1)
  assert.match(refused.stderr, /CONFIG_INVALID.*upstream\.baseUrl must be string,null/)
  const flags = await runCli(d.home, ['config', '--set', 'ingest.concurrency=3'])
  assert.match(flags.stderr, /--set values are not saved/)
  assert.equal(JSON.parse(await readFile(d.home.config, 'utf8')).ingest, undefined)
  assert.equal(await d.stop(), 0)
})
