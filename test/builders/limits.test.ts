// The builder listener's per-key rate limit and the consent labels a request is shown with.
import { test } from 'node:test'
import assert from 'node:assert/strict'
import { isHearthError } from '../../src/errors.js'
import { createRateLimiter } from '../../src/builders/rate-limit.js'
import { consentFor } from '../../src/connectors/consent.js'
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
