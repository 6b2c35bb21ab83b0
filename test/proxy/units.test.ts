// The pure parts of the proxy and the token store.
import { test } from 'node:test'
import assert from 'node:assert/strict'
import { readFile, stat, writeFile, mkdir } from 'node:fs/promises'
import { join } from 'node:path'
import { tempDir } from '../support/tmp.js'
import { classifyRoute } from '../../src/proxy/routes.js'
import { upstreamRequestHeaders, downstreamResponseHeaders } from '../../src/proxy/headers.js'
import { FrameSplitter, parseFrame, detectFraming, errorFrame } from '../../src/proxy/stream-frames.js'
import { withExchanges, withoutMessages, chatPayload } from '../../src/proxy/conversation-shape.js'
import { createCredentialStore, jwtExpiryMs, TOKEN_FILE_NAME } from '../../src/proxy/credentials.js'
import { safeFileName, outputFilesOf } from '../../src/proxy/download.js'
import { resolveProxyConfig } from '../../src/proxy/config.js'
import { isHearthError } from '../../src/errors.js'

const jwt = (claims: object): string => `${Buffer.from('{"alg":"HS256"}').toString('base64url')}.${Buffer.from(JSON.stringify(claims)).toString('base64url')}.sig`

test('routes: every upstream operation (docs/protocol.md §4) is recognised, everything else is other', () => {
  assert.deepEqual(classifyRoute('GET', '/conversations'), { kind: 'conversations-list' })
  assert.deepEqual(classifyRoute('POST', '/conversations'), { kind: 'conversation-create' })
  assert.deepEqual(classifyRoute('GET', '/conversations/a%20b'), { kind: 'conversation-get', id: 'a b' })
  assert.deepEqual(classifyRoute('POST', '/conversations/c1/chat'), { kind: 'chat', id: 'c1' })
  assert.deepEqual(classifyRoute('POST', '/conversations/c1/chat/stream'), { kind: 'chat-stream', id: 'c1' })
  assert.deepEqual(classifyRoute('POST', '/conversations/c1/clear'), { kind: 'clear', id: 'c1' })
  assert.deepEqual(classifyRoute('POST', '/images'), { kind: 'images' })
  assert.deepEqual(classifyRoute('GET', '/jobs/j1'), { kind: 'job', id: 'j1' })
  assert.deepEqual(classifyRoute('GET', '/characters/x/images/models'), { kind: 'models', id: 'x' })
  assert.deepEqual(classifyRoute('POST', '/auth/login'), { kind: 'auth' })
  for (const [m, p] of [['GET', '/accounts/me'], ['DELETE', '/conversations/c1'], ['GET', '/conversations/%E0%A4%A'], ['POST', '/speak'], ['GET', '/']]) {
    assert.equal(classifyRoute(m!, p!).kind, 'other', `${m} ${p}`)
  }
})

test('headers: hop-by-hop, the app credentials and Connection-named headers never cross', () => {
  const up = upstreamRequestHeaders({
    host: 'hearth', authorization: 'Bearer app', cookie: 'a=b', connection: 'close, x-secret-hop', 'x-secret-hop': '1',
    'keep-alive': 'timeout=5', 'proxy-authorization': 'x', te: 'trailers', trailer: 'x', 'transfer-encoding': 'chunked',
    upgrade: 'websocket', 'content-type': 'application/json', accept: 'text/event-stream', 'x-request-id': 'r1', 'x-hearth-internal': 'no', 'accept-encoding': 'gzip'
  })
  assert.deepEqual(up, { 'content-type': 'application/json', accept: 'text/event-stream', 'x-request-id': 'r1' })
  const down = downstreamResponseHeaders({ 'set-cookie': ['s=1'], 'content-type': 'application/json', 'content-length': '9', 'transfer-encoding': 'chunked', 'x-ratelimit-remaining': '9' })
  assert.deepEqual(down, { 'content-type': 'application/json', 'x-ratelimit-remaining': '9' })
})

test('frames: split on blank lines (LF or CRLF) across arbitrary chunk boundaries, bytes unchanged', () => {
  const text = 'data: {"a":1}\n\ndata: {"a":2}\r\n\r\n{"b":3}\n\ndata: [DONE]\n\n'
  for (let cut = 1; cut < text.length; cut++) {
    const s = new FrameSplitter()
    const frames = [...s.push(Buffer.from(text.slice(0, cut))), ...s.push(Buffer.from(text.slice(cut)))].map(String)
    assert.deepEqual(frames, ['data: {"a":1}\n\n', 'data: {"a":2}\r\n\r\n', '{"b":3}\n\n', 'data: [DONE]\n\n'])
    assert.equal(s.rest().length, 0)
  }
  assert.deepEqual(parseFrame('data: [DONE]\n\n'), { kind: 'done' })
  assert.deepEqual(parseFrame('{"choices":[]}\n\n'), { kind: 'chunk', chunk: { choices: [] } })
  assert.deepEqual(parseFrame(': keep-alive\n\n'), { kind: 'ignored' })
  assert.deepEqual(parseFrame('data: {not json\n\n'), { kind: 'ignored' })
  assert.equal(parseFrame('event: error\ndata: {"x":1}\n\n').kind, 'error')
  assert.equal(detectFraming('text/event-stream; charset=utf-8'), 'sse')
  assert.equal(detectFraming('application/json', Buffer.from('data: {}')), 'sse')
  assert.equal(detectFraming('application/json', Buffer.from('{"id":1}')), 'bare')
  assert.equal(errorFrame('sse', { e: 1 }), 'event: error\ndata: {"e":1}\n\n')
  assert.equal(errorFrame('bare', { e: 1 }), '{"e":1}\n\n')
})

test('conversation shapes: exchanges merge in the same shape; clear empties; chat payload from data or message', () => {
  const flat = { id: 'c', speakers: [{ id: 'u', type: 'account' }, { id: 'k', type: 'character' }], messages: [{ id: 'm', content: 'x', mimetype: 'text/plain', participant_id: 'u', participant_type: 'account', created: 5 }] }
  const ex = { at: 10, request: { data: 'hi', mimeType: 'text/plain' }, reply: { data: 'yo', mimeType: 'text/plain' } }
  const merged = withExchanges(flat, [ex]) as typeof flat
  assert.equal(merged.messages.length, 3)
  assert.deepEqual(merged.messages[2], { id: 'local-10-reply', content: 'yo', mimetype: 'text/plain', participant_id: 'k', participant_type: 'character', created: 10 })
  assert.equal(flat.messages.length, 1, 'input untouched')
  const wrapped = { success: true, conversation: { id: 'c', speakers: [], messages: [] } }
  const w = withExchanges(wrapped, [ex]) as any
  assert.deepEqual(Object.keys(w.conversation.messages[0]).sort(), ['content', 'created', 'id', 'mimeType', 'participantId', 'participantType'])
  assert.equal(typeof w.conversation.messages[0].created, 'string')
  assert.deepEqual((withoutMessages(flat) as any).messages, [])
  assert.deepEqual(chatPayload({ message: 'm' }), { data: 'm', mimeType: 'text/plain' })
  assert.equal(chatPayload({ nope: 1 }), null)
  assert.equal(withExchanges('not an object', [ex]), 'not an object')
})

test('token store: 0600 file, exp read from the JWT, missing and expired are typed errors', async (t) => {
  const dir = join(await tempDir(t), 'identity')
  const store = createCredentialStore({ identityDir: dir })
  await assert.rejects(store.bearer(), (e) => isHearthError(e, 'UPSTREAM_AUTH_MISSING'))
  const exp = Math.floor(Date.now() / 1000) + 100
  const token = jwt({ exp, sub: 'a' })
  const info = await store.save(token, { email: 'a@b.c' })
  assert.equal(info.expiresAt, exp * 1000)
  assert.equal((await stat(join(dir, TOKEN_FILE_NAME))).mode & 0o777, 0o600)
  assert.equal((await stat(dir)).mode & 0o777, 0o700)
  assert.equal(await store.bearer(), token)
  await assert.rejects(store.bearer(exp * 1000 + 1), (e) => isHearthError(e, 'UPSTREAM_AUTH_EXPIRED'))
  assert.equal((await store.info(exp * 1000 + 1)).expired, true)

  // A fresh store (daemon restart) reads the file; an opaque token has no known expiry.
  const again = createCredentialStore({ identityDir: dir })
  assert.equal((await again.info()).email, 'a@b.c')
  await again.save('opaque-token-123')
  assert.equal((await again.info()).expiresAt, null)
  assert.equal(await again.bearer(Date.now() + 10 ** 12), 'opaque-token-123')
  await again.clear()
  assert.equal((await again.info()).present, false)

  await mkdir(dir, { recursive: true })
  await writeFile(join(dir, TOKEN_FILE_NAME), '{broken')
  assert.equal((await createCredentialStore({ identityDir: dir }).info()).present, false)
  assert.ok(!(await readFile(join(dir, TOKEN_FILE_NAME), 'utf8')).includes('opaque'))

  assert.equal(jwtExpiryMs('a.b'), null)
  assert.equal(jwtExpiryMs(jwt({ sub: 'no exp' })), null)
  assert.equal(jwtExpiryMs(`x.${Buffer.from('not json').toString('base64url')}.y`), null)
  await assert.rejects(store.save('two words'), (e) => isHearthError(e, 'INVALID_ARGUMENT'))
})

test('output file names stay inside the job folder and unique', () => {
  const taken = new Set<string>()
  assert.equal(safeFileName('../../etc/passwd', 0, taken), 'passwd')
  assert.equal(safeFileName('outputs/x/passwd', 1, taken), '1-passwd')
  assert.equal(safeFileName('..', 2, taken), 'output-2')
  assert.equal(safeFileName('manifest.json', 3, taken), 'output-3')
  assert.equal(safeFileName('a b?.png', 4, taken), 'a_b_.png')
  assert.deepEqual(outputFilesOf({ outputFiles: [{ name: 'a.png', url: 'http://x/a.png', size: 3 }, { name: 'no-url' }] }), [{ name: 'a.png', url: 'http://x/a.png', size: 3 }])
  assert.deepEqual(outputFilesOf(null, ['http://cdn/o/b.png?sig=1']), [{ name: '/o/b.png', url: 'http://cdn/o/b.png?sig=1' }])
})

test('config: defaults filled, bad values are CONFIG_INVALID', () => {
  const c = resolveProxyConfig({ baseUrl: 'https://api.example.org/' })
  assert.equal(c.baseUrl, 'https://api.example.org')
  assert.ok(c.timeoutMs > 0 && c.jobDeadlineMs > c.jobPollMs)
  assert.throws(() => resolveProxyConfig({ baseUrl: 'ftp://x' }), (e) => isHearthError(e, 'CONFIG_INVALID'))
  assert.throws(() => resolveProxyConfig({ baseUrl: 'nope' }), (e) => isHearthError(e, 'CONFIG_INVALID'))
  assert.throws(() => resolveProxyConfig({ baseUrl: 'http://x', timeoutMs: -1 }), (e) => isHearthError(e, 'CONFIG_INVALID'))
})
