// The builder listener's budgets and its access log under attack (issue 24, items 3–5): unknown
// keys count against their address, junk from an address does not lock out the registered
// builders behind it, every request that reaches the listener is logged, and what an
// unauthenticated caller can make Hearth store is bounded.
import { test } from 'node:test'
import assert from 'node:assert/strict'
import { startBuilderDaemon, countStored } from '../support/builder-daemon.js'
import { httpCall } from '../support/api-server.js'

const LIMIT_5 = ['--set', 'builders.rateLimitPerMinute=5']

test('fresh unregistered keys from one address count against that address: 429 after its budget, and bounded log and replay entries', async (t) => {
  const rig = await startBuilderDaemon(t, { args: LIMIT_5 })
  const statuses: number[] = []
  for (let i = 0; i < 30; i++) statuses.push((await rig.stranger().request({ path: '/v1/data' })).status)
  assert.deepEqual(statuses.slice(0, 5), [403, 403, 403, 403, 403], 'BUILDER_NOT_REGISTERED within the address budget')
  // then RATE_LIMITED (a token comes back every 12 s: a slow machine may see one more 403)
  const notRegistered = statuses.filter((s) => s === 403).length
  const limitedCount = statuses.filter((s) => s === 429).length
  assert.equal(notRegistered + limitedCount, 30, statuses.join(' '))
  assert.ok(limitedCount >= 20, `RATE_LIMITED past the budget: ${statuses.join(' ')}`)
  const log = await rig.accessLog()
  assert.equal(log.filter((e) => e.errorCode === 'BUILDER_NOT_REGISTERED').length, notRegistered)
  const limited = log.filter((e) => e.errorCode === 'RATE_LIMITED')
  assert.equal(limited.length, 1, 'the refusals past the budget are folded into one entry')
  assert.equal(limited[0]!.repeats, limitedCount - 1, 'which counts the others')
  assert.equal(limited[0]!.ip, '127.0.0.1')
  assert.equal(await rig.daemon.stop(), 0)
  assert.equal(await countStored(rig.daemon.home.index, ['builders', 'replay']), 0, 'no replay entry for a signer that is not registered')
})

test('junk from one address does not use up the budget of a registered builder behind it', async (t) => {
  const rig = await startBuilderDaemon(t, { args: LIMIT_5 })
  const builder = await rig.registered()
  const junk: number[] = []
  for (let i = 0; i < 8; i++) junk.push((await builder.send('GET', '/v1/data', undefined, null)).status)
  assert.deepEqual(junk.slice(0, 5), [401, 401, 401, 401, 401])
  assert.ok(junk.slice(5).includes(429), `the address is over its budget: ${junk.join(' ')}`)
  // the registered builder is judged by its own budget: five requests, then its own 429
  const asked = await builder.request({ method: 'POST', path: '/v1/access-requests', body: { scopes: ['instagram.profile'] } })
  assert.equal(asked.status, 201, JSON.stringify(asked.json))
  let served = 1
  let over: Awaited<ReturnType<typeof builder.request>> | null = null
  while (over === null && served < 10) {
    const r = await builder.request({ path: `/v1/access-requests/${String(asked.json.id)}` })
    if (r.status === 200) served++
    else over = r
  }
  assert.ok(served >= 5, `its own five requests were served (${served})`)
  assert.equal(over?.status, 429)
  assert.equal(over?.json.error.errorCode, 'RATE_LIMITED')
  // another registered builder on the same address still has its own
  const other = await rig.registered()
  assert.equal((await other.request({ method: 'POST', path: '/v1/access-requests', body: { scopes: ['spotify.*'] } })).status, 201)
  assert.equal(await rig.daemon.stop(), 0)
})

test('every request that reaches the builder listener is in the access log: dot-segment paths and owner routes probed by a builder too', async (t) => {
  const rig = await startBuilderDaemon(t)
  const builder = await rig.registered()
  const before = (await rig.accessLog()).length
  const probes: Array<{ path: string; method?: string; signed: boolean; status: number; code: string }> = [
    { path: '/v1/data/..%2f..%2fidentity%2fidentity.json', signed: true, status: 400, code: 'INVALID_PATH' },
    { path: '/v1/data/../identity', signed: false, status: 400, code: 'INVALID_PATH' },
    { path: '/v1/config', signed: true, status: 404, code: 'NOT_FOUND' },
    { path: '/v1/grants', signed: true, status: 404, code: 'NOT_FOUND' },
    { path: '/health', signed: true, status: 404, code: 'NOT_FOUND' },
    { path: '/api/v0/conversations', signed: true, status: 404, code: 'NOT_FOUND' },
    { path: '/v1/data/instagram.profile', method: 'DELETE', signed: true, status: 405, code: 'METHOD_NOT_ALLOWED' },
    { path: '/v1/data', signed: false, status: 401, code: 'SIGNATURE_MISSING' }
  ]
  for (const p of probes) {
    const method = p.method ?? 'GET'
    // unsigned probes go out as written (fetch would resolve a `..` before sending it)
    const r = p.signed ? await builder.request({ method, path: p.path }) : await httpCall({ host: '127.0.0.1', port: rig.endpoint.port }, method, p.path)
    assert.equal(r.status, p.status, `${p.path}: ${JSON.stringify(r.json)}`)
    assert.equal(r.json?.error?.errorCode, p.code)
  }
  const log = (await rig.accessLog()).slice(before)
  assert.deepEqual(log.map((e) => e.errorCode), probes.map((p) => p.code), 'one entry per request, in order')
  assert.ok(log.every((e) => e.action === 'denied' && e.ip === '127.0.0.1'))
  // an authenticated probe names its builder; a refusal before authentication names none
  assert.equal(log[2]!.builder, builder.address)
  assert.equal(log[0]!.builder, null)
  assert.equal(await rig.daemon.stop(), 0)
})
