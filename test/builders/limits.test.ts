// The builder listener's per-key rate limit and the consent labels a request is shown with.
import { test } from 'node:test'
import assert from 'node:assert/strict'
import { isHearthError } from '../../src/errors.js'
import { addressBudgetKey, createRateLimiter } from '../../src/builders/rate-limit.js'
import { createRefusalFold } from '../../src/builders/refusal-fold.js'
import { openAccessLog } from '../../src/builders/access-log.js'
import { openDatabase } from '../../src/db/database.js'
import { tempDir } from '../support/tmp.js'
import { consentFor } from '../../src/builders/consent.js'
import type { ConnectorMetadata } from '../../src/connectors/types.js'

test('the rate limit allows a burst of perMinute, refills over the minute, and keeps keys apart', () => {
  const limiter = createRateLimiter(60)
  const t0 = 1_000_000
  for (let i = 0; i < 60; i++) limiter.take('a', t0)
  assert.throws(() => { limiter.take('a', t0) }, (e: unknown) => isHearthError(e, 'RATE_LIMITED') && (e.details?.retryAfterMs as number) > 0 && e.status === 429)
  limiter.take('b', t0)
  assert.throws(() => { limiter.take('a', t0 + 500) })
  limiter.take('a', t0 + 1_000) // one token back after a second
  assert.throws(() => { limiter.take('a', t0 + 1_000) })
  for (let i = 0; i < 60; i++) limiter.take('a', t0 + 62_000)
  // check never takes a token
  limiter.check('c', t0)
  for (let i = 0; i < 100; i++) limiter.check('b', t0)
  for (let i = 0; i < 59; i++) limiter.take('b', t0)
  assert.throws(() => { limiter.check('b', t0) }, (e: unknown) => isHearthError(e, 'RATE_LIMITED'))
})

test('the rate limiter forgets idle keys when the table grows', () => {
  const limiter = createRateLimiter(10)
  for (let i = 0; i < 10_000; i++) limiter.take(`k${i}`, 0)
  limiter.take('late', 120_000)
  assert.ok(limiter.size < 100)
})

test('an address budget key: IPv4 as it is, IPv4-mapped as IPv4, IPv6 by its /64 however it is written', () => {
  assert.equal(addressBudgetKey('127.0.0.1'), 'ip:127.0.0.1')
  assert.equal(addressBudgetKey('::ffff:10.0.0.7'), 'ip:10.0.0.7')
  assert.equal(addressBudgetKey(null), 'ip:?')
  const k = addressBudgetKey('2001:db8:1:2::1')
  assert.equal(k, 'ip:2001:db8:1:2::/64')
  for (const same of ['2001:db8:1:2:ffff:1:2:3', '2001:0db8:0001:0002::9', '2001:DB8:1:2::fe%eth0']) assert.equal(addressBudgetKey(same), k, same)
  assert.notEqual(addressBudgetKey('2001:db8:1:3::1'), k)
  assert.equal(addressBudgetKey('::1'), 'ip:0:0:0:0::/64')
})

test('refusals past a budget fold into one entry a minute per key and code, counting the rest', async (t) => {
  const db = await openDatabase(await tempDir(t))
  t.after(async () => { await db.close() })
  const log = openAccessLog(db)
  const fold = createRefusalFold(log)
  const entry = { builder: null, grantId: null, scope: null, action: 'denied' as const, status: 429, errorCode: 'RATE_LIMITED', bytes: 0, ip: '127.0.0.1', userAgent: null }
  const t0 = Date.now()
  await Promise.all(Array.from({ length: 20 }, async (_, i) => { await fold.note('ip:127.0.0.1', entry, t0 + i) }))
  await fold.note('ip:127.0.0.2', { ...entry, ip: '127.0.0.2' }, t0)
  await fold.note('ip:127.0.0.1', { ...entry, status: 400, errorCode: 'INVALID_PATH' }, t0)
  let { entries } = await log.query()
  assert.deepEqual(entries.map((e) => [e.ip, e.errorCode, e.repeats ?? 0]), [['127.0.0.1', 'RATE_LIMITED', 19], ['127.0.0.2', 'RATE_LIMITED', 0], ['127.0.0.1', 'INVALID_PATH', 0]])
  // a minute later the next refusal opens a new entry
  await fold.note('ip:127.0.0.1', entry, t0 + 60_001)
  entries = (await log.query()).entries
  assert.equal(entries.length, 4)
})

test('consent labels come from the connectors\' metadata, for exact scopes, source.* and *', () => {
  const connectors: ConnectorMetadata[] = [
    { connectorId: 'instagram', displayName: 'Instagram', version: '1', scopes: [{ scope: 'instagram.profile', label: 'Your Instagram profile', description: 'Bio and counts' }, { scope: 'instagram.posts', label: 'Your posts', description: 'Captions' }] },
    { connectorId: 'spotify', displayName: 'Spotify', version: '1', scopes: [{ scope: 'spotify.savedTracks', label: 'Saved tracks', description: 'Liked songs' }] }
  ]
  const [exact, source, all, unknown] = consentFor(['instagram.profile', 'instagram.*', '*', 'reddit.comments'], connectors)
  assert.deepEqual(exact, { pattern: 'instagram.profile', label: 'Your Instagram profile', description: 'Bio and counts', connectors: ['instagram'] })
  assert.equal(source?.label, 'All of your Instagram data')
  assert.match(source?.description ?? '', /Your Instagram profile; Your posts/)
  assert.deepEqual(all?.connectors, ['instagram', 'spotify'])
  assert.deepEqual(unknown?.connectors, [])
  assert.match(unknown?.description ?? '', /No installed connector/)
})
