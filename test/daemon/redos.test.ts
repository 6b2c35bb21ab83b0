// Hostile schemas and bodies must not freeze the daemon: /health keeps answering while they are
// refused (issue 12, item 2).
import { test } from 'node:test'
import assert from 'node:assert/strict'
import { readFile } from 'node:fs/promises'
import { startDaemonProcess } from '../support/daemon.js'
import { dropFile, envelopeFor, statusOf, waitFor } from '../support/data-files.js'

test('ReDoS pattern, a 50,000-property schema and a million-key body: refused, and /health answers promptly throughout', async (t) => {
  const d = await startDaemonProcess(t)
  const request = async (what: string, req: Parameters<typeof d.request>[0]): Promise<Awaited<ReturnType<typeof d.request>>> => {
    try { return await d.request(req) } catch (err) { throw new Error(`${what}: ${String(err)}\n${d.output().slice(-2000)}`) }
  }
  let worst = 0
  let polling = true
  const poller = (async () => {
    while (polling) {
      const started = Date.now()
      const res = await request('health', { path: '/health' })
      assert.equal(res.status, 200)
      worst = Math.max(worst, Date.now() - started)
      await new Promise((r) => setTimeout(r, 25))
    }
  })()

  const evil = { name: 'Evil', version: '1.0.0', scope: 'evil.profile', dialect: 'json', schema: { type: 'object', properties: { name: { type: 'string', pattern: '^(a+)+$' } } } }
  const added = await request('add schema', { method: 'POST', path: '/v1/schemas', body: evil })
  assert.equal(added.status, 201, added.body.toString())
  const redos = await request('redos', { method: 'POST', path: '/v1/data/evil.profile', body: { name: 'a'.repeat(35) + '!' } })
  assert.equal(redos.status, 400)
  assert.equal(redos.json.error.errorCode, 'SCHEMA_VALIDATION_FAILED')
  // the same data dropped as a file is rejected too, not a frozen ingest
  await dropFile(d.home.data, 'evil.profile', 'x.json', JSON.stringify(envelopeFor('evil.profile', { name: 'a'.repeat(40) + '!' }, '2026-01-01T00:00:00Z')))
  await waitFor('file rejected', async () => (await statusOf(d)).rejected.some((r: any) => r.path === 'evil.profile/x.json' && r.errorCode === 'SCHEMA_VALIDATION_FAILED'))

  const properties: Record<string, unknown> = {}
  for (let i = 0; i < 50_000; i++) properties[`p${i}`] = { type: 'string' }
  const wide = await request('wide schema', { method: 'POST', path: '/v1/schemas', body: { ...evil, scope: 'evil.wide', schema: { type: 'object', properties } } })
  assert.equal(wide.status, 400)
  assert.equal(wide.json.error.errorCode, 'INVALID_SCHEMA_DEFINITION')
  assert.match(wide.json.error.message, /more than 5000 JSON values/)

  polling = false
  await poller
  // generous for a loaded 2-core CI machine: before RE2 the first request alone held the event
  // loop for minutes. The precise numbers are in bench/schemas.ts.
  assert.ok(worst < 10_000, `/health took ${worst} ms at worst`)

  // a million keys: refused by the value count while the body is scanned, before JSON.parse
  // (which alone cost 1.1–1.4 s of CPU on the event loop), and /health answers meanwhile
  const body = `{${Array.from({ length: 1_000_000 }, (_, i) => `"k${i}":0`).join(',')}}`
  let worstDuring = 0
  let sending = true
  const duringPoller = (async () => {
    while (sending) {
      const started = Date.now()
      assert.equal((await request('health', { path: '/health' })).status, 200)
      worstDuring = Math.max(worstDuring, Date.now() - started)
      await new Promise((r) => setTimeout(r, 10))
    }
  })()
  const keys = await request('million keys', { method: 'POST', path: '/v1/data/instagram.profile', body, headers: { 'content-type': 'application/json' }, timeoutMs: 240_000 })
  sending = false
  await duringPoller
  assert.equal(keys.status, 400)
  assert.equal(keys.json.error.errorCode, 'JSON_TOO_MANY_VALUES')
  assert.equal(keys.json.error.details.path, '$.k499999')
  t.diagnostic(`/health at worst: ${worst} ms during the hostile schemas, ${worstDuring} ms during the million-key body`)
  assert.ok(worstDuring < 10_000, `/health took ${worstDuring} ms at worst during the million-key body`)
  const peakMb = Number(/VmHWM:\s+(\d+)/.exec(await readFile(`/proc/${d.child.pid}/status`, 'utf8'))?.[1]) / 1024
  assert.ok(peakMb < 600, `daemon peak RSS ${peakMb} MB`)
  assert.equal((await request('health', { path: '/health' })).status, 200)
})
