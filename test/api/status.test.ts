// GET /v1/status answers 200 with every component configured: a chain (bigint block numbers),
// sync, the upstream, the TCP listener; the reply writer has a form for every value it meets.
import { test } from 'node:test'
import assert from 'node:assert/strict'
import { readFile } from 'node:fs/promises'
import { join } from 'node:path'
import { startDaemonProcess } from '../support/daemon.js'
import { startUpstreamSim } from '../support/upstream-sim.js'
import { Router } from '../../src/api/router.js'
import { ok } from '../../src/api/http.js'
import { httpCall, startApi } from '../support/api-server.js'

test('the reply writer writes bigints as decimal strings, at any depth and size', async (t) => {
  const router = new Router()
  router.get('/values', async () => ok({ block: 123n, huge: 2n ** 70n, negative: -5n, nested: [{ id: 9007199254740993n }], at: new Date(0), none: undefined }))
  const { socket } = await startApi(t, router)
  const res = await httpCall({ socketPath: socket }, 'GET', '/values')
  assert.equal(res.status, 200, res.text)
  assert.deepEqual(res.json, { block: '123', huge: '1180591620717411303424', negative: '-5', nested: [{ id: '9007199254740993' }], at: '1970-01-01T00:00:00.000Z' })
})

test('GET /v1/status with a chain, sync, the upstream and the TCP listener configured', async (t) => {
  const sim = await startUpstreamSim()
  t.after(async () => { await sim.stop() })
  const d = await startDaemonProcess(t, {
    env: { HEARTH_SYNC: 'true', HEARTH_SYNC_LISTEN: '/ip4/127.0.0.1/tcp/0', HEARTH_UPSTREAM_URL: sim.baseUrl, HEARTH_TCP_PORT: '0' },
    args: ['--dev-chain', '--set', 'chain.pollIntervalMs=200', '--set', 'api.tcp.enabled=true']
  })
  assert.equal((await d.request({ method: 'POST', path: '/v1/data/instagram.profile', body: { username: 'status' } })).status, 201)
  const res = await d.request({ path: '/v1/status' })
  assert.equal(res.status, 200, res.body.toString())
  const status = res.json
  assert.match(status.chain.network.blockNumber, /^\d+$/, 'the bigint block number is a decimal string')
  assert.equal(status.chain.network.reachable, true)
  for (const part of ['files', 'storage', 'chain', 'sync', 'upstream', 'ingest', 'schemaSources']) assert.ok(status[part] !== undefined, `status has ${part}`)
  assert.equal(status.upstream.configured, true)
  assert.equal(status.files.total, 1)

  const port = Number(/TCP listener on [^:]+:(\d+)/.exec(d.output())![1])
  const token = (await readFile(join(d.home.identity, 'api-token'), 'utf8')).trim()
  const overTcp = await fetch(`http://127.0.0.1:${port}/v1/status`, { headers: { authorization: `Bearer ${token}` } })
  assert.equal(overTcp.status, 200)
  assert.match(((await overTcp.json()) as any).chain.network.blockNumber, /^\d+$/)
  assert.equal(await d.stop(), 0)
})
