// The dashboard's login links and sessions, the Host/Origin guard, and `hearth ui`'s opener (pure).
import { test } from 'node:test'
import assert from 'node:assert/strict'
import { createSessionStore } from '../../src/ui/sessions.js'
import { allowedHosts, checkRequestOrigin } from '../../src/ui/request-guard.js'
import { parseListen as parseAnyListen } from '../../src/api/listen.js'

const parseListen = (value: string): { host: string; port: number } => parseAnyListen(value, 'ui.listen')
import { sessionCookie } from '../../src/ui/listener.js'
import { opener } from '../../src/cli/commands/ui.js'

test('a login link works once and only before it expires; sessions end when idle, when old, or on logout', () => {
  let now = 1_000_000
  const store = createSessionStore({ linkTtlMs: 60_000, idleMs: 10_000, maxAgeMs: 50_000, now: () => now })
  const link = store.createLink()
  assert.match(link.token, /^[A-Za-z0-9_-]{43}$/)
  const session = store.redeem(link.token)
  assert.ok(session !== null)
  assert.equal(store.redeem(link.token), null, 'used once')
  assert.equal(store.touch(session.id), true)
  assert.equal(store.touch(session.id.slice(0, -1) + (session.id.endsWith('A') ? 'B' : 'A')), false)
  assert.equal(store.touch('short'), false)

  const late = store.createLink()
  now += 60_001
  assert.equal(store.redeem(late.token), null, 'expired')
  assert.equal(store.touch(session.id), false, 'idle longer than idleMs')

  const s2 = store.redeem(store.createLink().token)!
  for (let i = 0; i < 5; i++) { now += 9_000; assert.equal(store.touch(s2.id), true) }
  now += 9_000
  assert.equal(store.touch(s2.id), false, 'older than maxAgeMs however busy')

  const s3 = store.redeem(store.createLink().token)!
  store.end(s3.id)
  assert.equal(store.touch(s3.id), false)
})

test('outstanding links and sessions are bounded: the oldest go first', () => {
  const store = createSessionStore({ maxLinks: 2, maxSessions: 2 })
  const [a, b, c] = [store.createLink(), store.createLink(), store.createLink()]
  assert.equal(store.redeem(a.token), null)
  const sb = store.redeem(b.token)!
  const sc = store.redeem(c.token)!
  const sd = store.redeem(store.createLink().token)!
  assert.equal(store.touch(sb.id), false)
  assert.equal(store.touch(sc.id), true)
  assert.equal(store.touch(sd.id), true)
  assert.deepEqual(store.status(), { sessions: 2, pendingLinks: 0 })
})

test('Host must name the listener on loopback; Origin, when present or needed, must be the dashboard', () => {
  const hosts = allowedHosts('127.0.0.1', 8470)
  const check = (method: string, host: string | undefined, origin?: string): string | null => checkRequestOrigin({ method, host, origin }, hosts)?.code ?? null
  assert.equal(check('GET', '127.0.0.1:8470'), null)
  assert.equal(check('GET', 'LOCALHOST:8470'), null)
  assert.equal(check('GET', '[::1]:8470'), null)
  for (const host of [undefined, '', '127.0.0.1', '127.0.0.1:8471', 'evil.example:8470', '127.0.0.1.nip.io:8470', '0.0.0.0:8470']) {
    assert.equal(check('GET', host), 'HOST_NOT_ALLOWED', String(host))
  }
  assert.equal(check('POST', '127.0.0.1:8470'), 'ORIGIN_NOT_ALLOWED', 'a state change needs an Origin')
  assert.equal(check('DELETE', '127.0.0.1:8470', 'http://127.0.0.1:8470'), null)
  assert.equal(check('POST', '127.0.0.1:8470', 'http://localhost:8470'), null)
  for (const origin of ['null', 'http://evil.example', 'https://127.0.0.1:8470', 'http://127.0.0.1:8471', 'http://127.0.0.1:8470.evil.example']) {
    assert.equal(check('POST', '127.0.0.1:8470', origin), 'ORIGIN_NOT_ALLOWED', origin)
    assert.equal(check('GET', '127.0.0.1:8470', origin), 'ORIGIN_NOT_ALLOWED', origin)
  }
  assert.ok(allowedHosts('::1', 9000).has('[::1]:9000'))
  assert.ok(allowedHosts('127.0.0.2', 80).has('127.0.0.2'))
})

test('ui.listen is host:port; the cookie is found among others; the opener needs a desktop', () => {
  assert.deepEqual(parseListen('127.0.0.1:8470'), { host: '127.0.0.1', port: 8470 })
  assert.deepEqual(parseListen('[::1]:0'), { host: '::1', port: 0 })
  assert.deepEqual(parseListen('localhost:9'), { host: 'localhost', port: 9 })
  for (const bad of ['127.0.0.1', ':8470', '127.0.0.1:70000', '::1:8470', 'a b:1']) assert.throws(() => parseListen(bad), { code: 'CONFIG_INVALID' }, bad)
  assert.equal(sessionCookie('a=1; hearth_session_8470=xyz; b=2', 'hearth_session_8470'), 'xyz')
  assert.equal(sessionCookie('hearth_session_8471=xyz', 'hearth_session_8470'), null)
  assert.equal(sessionCookie(undefined, 'hearth_session_8470'), null)
  assert.equal(opener({}, 'linux'), null)
  assert.equal(opener({ DISPLAY: ':0' }, 'linux'), 'xdg-open')
  assert.equal(opener({ WAYLAND_DISPLAY: 'wayland-0' }, 'linux'), 'xdg-open')
  assert.equal(opener({}, 'darwin'), 'open')
})
