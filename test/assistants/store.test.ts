// Connections and their requests on a real LevelDB: remembered per client, approval with the
// owner's choice, more scopes, narrowing only within the grant, revocation denying what waits,
// decided once, the bound on pending requests, and the OAuth tokens stored hashed and rotating.
import { test } from 'node:test'
import assert from 'node:assert/strict'
import { openDatabase } from '../../src/db/database.js'
import { isHearthError } from '../../src/errors.js'
import { MAX_PENDING_REQUESTS, openConnectionStore } from '../../src/assistants/store.js'
import { OAuthFailure, openOAuthStore } from '../../src/assistants/oauth-store.js'
import { tempDir } from '../support/tmp.js'

test('connections: remembered per client, approved, extended, narrowed within the grant, revoked', async (t) => {
  const db = await openDatabase(await tempDir(t))
  t.after(async () => { await db.close() })
  const store = openConnectionStore(db)
  const first = await store.connect('stdio', 'Claude', { name: 'Claude', clientId: null, scopes: [] })
  assert.equal(first.connection.status, 'pending')
  const again = await store.connect('stdio', 'Claude', { name: 'Claude', clientId: null, scopes: [] })
  assert.deepEqual([again.connection.id, again.request?.id], [first.connection.id, first.request!.id])
  await assert.rejects(store.decide(first.request!.id, 'approved'), (e: unknown) => isHearthError(e, 'INVALID_ARGUMENT'))
  const { connection } = await store.decide(first.request!.id, 'approved', ['chatgpt.*', 'spotify.plays'])
  assert.deepEqual([connection.status, connection.scopes], ['active', ['chatgpt.*', 'spotify.plays']])
  await assert.rejects(store.decide(first.request!.id, 'denied'), (e: unknown) => isHearthError(e, 'CONFLICT'))

  await assert.rejects(store.askMore(connection.id, ['chatgpt.conversations'], null), (e: unknown) => isHearthError(e, 'CONFLICT'))
  const more = await store.askMore(connection.id, ['chatgpt.conversations', 'instagram.profile'], 'names')
  assert.deepEqual(more.scopes, ['instagram.profile'])
  assert.equal((await store.pendingRequestOf(connection.id))?.id, more.id)
  const extended = await store.decide(more.id, 'approved')
  assert.deepEqual(extended.connection.scopes, ['chatgpt.*', 'spotify.plays', 'instagram.profile'])

  await assert.rejects(store.narrow(connection.id, ['*']), (e: unknown) => isHearthError(e, 'INVALID_ARGUMENT'))
  assert.deepEqual((await store.narrow(connection.id, ['chatgpt.conversations'])).scopes, ['chatgpt.conversations'])

  const waiting = await store.askMore(connection.id, ['youtube.*'], null)
  const revoked = await store.revoke(connection.id)
  assert.equal(revoked.status, 'revoked')
  assert.equal((await store.getRequest(waiting.id))?.status, 'denied')
  assert.deepEqual(await store.listRequests({ status: 'pending' }), [])
  // a revoked connection is never reused: the client asks anew
  const fresh = await store.connect('stdio', 'Claude', { name: 'Claude', clientId: null, scopes: [] })
  assert.notEqual(fresh.connection.id, connection.id)
  assert.equal(fresh.connection.status, 'pending')
})

test('connections: at most MAX_PENDING_REQUESTS wait at once, whoever asks', async (t) => {
  const db = await openDatabase(await tempDir(t))
  t.after(async () => { await db.close() })
  const store = openConnectionStore(db)
  for (let i = 0; i < MAX_PENDING_REQUESTS; i++) await store.connect('stdio', `client ${i}`, { name: `client ${i}`, clientId: null, scopes: [] })
  await assert.rejects(store.connect('stdio', 'one more', { name: 'one more', clientId: null, scopes: [] }), (e: unknown) => isHearthError(e, 'ACCESS_REQUEST_LIMIT'))
  const listed = await store.listRequests({ status: 'pending', limit: 1000 })
  assert.equal(listed.length, MAX_PENDING_REQUESTS)
  assert.ok(listed.every((r, i) => i === 0 || r.id < listed[i - 1]!.id), 'newest first')
  await store.decide(listed[0]!.id, 'denied')
  assert.equal((await store.connect('stdio', 'one more', { name: 'one more', clientId: null, scopes: [] })).connection.status, 'pending')
})

test('OAuth store: tokens kept only as hashes, refresh rotation, revocation by connection', async (t) => {
  const dir = await tempDir(t)
  const db = await openDatabase(dir)
  t.after(async () => { await db.close() })
  const oauth = openOAuthStore(db, { accessTokenSeconds: 60 })
  const client = await oauth.register({ clientName: 'c', redirectUris: ['https://a.example/cb'] })
  const verifier = 'dBjftJeZ4CVP-mB92K27uhbUJU1p1r_wW1gFWFOEjXk'
  const code = oauth.code({ clientId: client.clientId, redirectUri: 'https://a.example/cb', codeChallenge: 'E9Melhoa2OwvFrEMTJguCHaoeK1t8URWbuGJSstw-cM', connectionId: 'asst_1' })
  await assert.rejects(oauth.exchangeCode(code, { clientId: 'other', redirectUri: null, verifier }), OAuthFailure)
  await assert.rejects(oauth.exchangeCode(code, { clientId: client.clientId, redirectUri: null, verifier }), OAuthFailure, 'one attempt per code')
  const code2 = oauth.code({ clientId: client.clientId, redirectUri: 'https://a.example/cb', codeChallenge: 'E9Melhoa2OwvFrEMTJguCHaoeK1t8URWbuGJSstw-cM', connectionId: 'asst_1' })
  const { tokens } = await oauth.exchangeCode(code2, { clientId: client.clientId, redirectUri: 'https://a.example/cb', verifier })
  assert.equal(await oauth.accessConnection(tokens.access_token), 'asst_1')
  const stored = await db.sublevel<unknown>(['assistants', 'oauth-tokens']).keys().all()
  assert.equal(stored.length, 2)
  assert.ok(stored.every((k) => /^[0-9a-f]{64}$/.test(k) && k !== tokens.access_token && k !== tokens.refresh_token))
  const rotated = await oauth.refresh(tokens.refresh_token, client.clientId)
  await assert.rejects(oauth.refresh(tokens.refresh_token, client.clientId), OAuthFailure)
  await oauth.revokeConnection('asst_1')
  assert.equal(await oauth.accessConnection(rotated.tokens.access_token), null)
  assert.equal(await oauth.accessConnection(tokens.access_token), null)
  await assert.rejects(oauth.refresh(rotated.tokens.refresh_token, client.clientId), OAuthFailure)
})
