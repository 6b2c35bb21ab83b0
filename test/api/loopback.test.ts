// api.tcp.host is judged by what it resolves to: only loopback addresses may be bound.
import { test } from 'node:test'
import assert from 'node:assert/strict'
import { Router } from '../../src/api/router.js'
import { isLoopbackAddress, resolveLoopback } from '../../src/api/loopback.js'
import { isHearthError } from '../../src/errors.js'
import { startApi } from '../support/api-server.js'
import { startDaemonProcess } from '../support/daemon.js'
import { tempDir } from '../support/tmp.js'
import { homeLayout } from '../../src/home.js'
import { stat } from 'node:fs/promises'

test('loopback addresses', () => {
  for (const a of ['127.0.0.1', '127.8.9.10', '::1', '::ffff:127.0.0.1']) assert.ok(isLoopbackAddress(a), a)
  for (const a of ['0.0.0.0', '::', '10.0.0.1', '128.0.0.1', '::ffff:10.0.0.1', 'fe80::1']) assert.ok(!isLoopbackAddress(a), a)
})

test('a host is resolved, then every address it resolves to must be loopback', async () => {
  assert.equal(await resolveLoopback('127.0.0.1', 'api.tcp.host'), '127.0.0.1')
  assert.equal(await resolveLoopback('::1', 'api.tcp.host'), '::1')
  assert.equal(await resolveLoopback('localhost', 'api.tcp.host'), '127.0.0.1')
  const refused = async (host: string, pattern: RegExp, lookup?: (h: string) => Promise<Array<{ address: string }>>): Promise<void> => {
    await assert.rejects(resolveLoopback(host, 'api.tcp.host', lookup), (err) => {
      assert.ok(isHearthError(err, 'CONFIG_INVALID'), `${host}: ${String(err)}`)
      assert.match(err.message, pattern, host)
      assert.match(err.message, /api\.tcp\.host/)
      return true
    })
  }
  await refused('0', /resolves to 0\.0\.0\.0/)                         // a real name for every interface
  await refused('0.0.0.0', /resolves to 0\.0\.0\.0/)
  await refused('127.0.0.1.', /does not resolve/)
  await refused('no-such-host.invalid', /does not resolve/)
  await refused('', /not a host name/)
  await refused('a b', /not a host name/)
  await refused('myhost', /resolves to 127\.0\.0\.1, 0\.0\.0\.0/, async () => [{ address: '127.0.0.1' }, { address: '0.0.0.0' }])
})

test('listenTcp refuses a non-loopback host as CONFIG_INVALID before binding', async (t) => {
  const { api } = await startApi(t, new Router())
  await assert.rejects(api.listenTcp('0', 0, 'tok'), (err) => isHearthError(err, 'CONFIG_INVALID'))
  await assert.rejects(api.listenTcp('127.0.0.1.', 0, 'tok'), (err) => isHearthError(err, 'CONFIG_INVALID'))
  assert.ok((await api.listenTcp('localhost', 0, 'tok')).port > 0)
})

test('the daemon refuses a TCP host that is not loopback before anything starts', async (t) => {
  for (const host of ['0', '127.0.0.1.']) {
    const root = await tempDir(t, 'hearth-home-')
    await assert.rejects(startDaemonProcess(t, { home: root, args: ['--set', 'api.tcp.enabled=true', '--set', `api.tcp.host="${host}"`] }), (err: Error) => {
      assert.match(err.message, /CONFIG_INVALID/, err.message)
      assert.match(err.message, /api\.tcp\.host/)
      assert.doesNotMatch(err.message, /INTERNAL/)
      return true
    })
    await assert.rejects(stat(homeLayout(root).identity), 'no identity was created')
  }
})
