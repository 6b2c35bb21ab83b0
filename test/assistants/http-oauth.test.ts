// Remote assistants on `mcp.listen`: the official SDK's Client over Streamable HTTP runs the whole
// MCP authorization flow against the daemon (protected-resource and authorization-server metadata,
// dynamic registration, PKCE, the owner's approval as the consent, the code, tokens), then reads
// only what was granted; tokens are stored hashed, refresh tokens rotate, and a revoked
// connection's next call fails mid-session.
import { test } from 'node:test'
import assert from 'node:assert/strict'
import { readdir, readFile } from 'node:fs/promises'
import { join } from 'node:path'
import { Client } from '@modelcontextprotocol/sdk/client/index.js'
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js'
import { UnauthorizedError, type OAuthClientProvider } from '@modelcontextprotocol/sdk/client/auth.js'
import type { OAuthClientInformationMixed, OAuthTokens } from '@modelcontextprotocol/sdk/shared/auth.js'
import type { DaemonProcess } from '../support/daemon.js'
import { daemonWithHistory, textOf } from '../support/assistants.js'

const REDIRECT = 'http://127.0.0.1:9/callback'

/** An OAuth client whose "browser" follows the authorization page and has the owner approve on the socket. */
class TestProvider implements OAuthClientProvider {
  info: OAuthClientInformationMixed | undefined
  saved: OAuthTokens | undefined
  verifier = ''
  code: string | null = null
  authorizations = 0
  approve = true
  constructor (private readonly d: DaemonProcess, private readonly scopes: string[]) {}
  get redirectUrl (): string { return REDIRECT }
  get clientMetadata () {
    return { client_name: 'Remote Assistant', redirect_uris: [REDIRECT], grant_types: ['authorization_code', 'refresh_token'], response_types: ['code'], token_endpoint_auth_method: 'none' }
  }
  state (): string { return 'state-42' }
  clientInformation (): OAuthClientInformationMixed | undefined { return this.info }
  saveClientInformation (info: OAuthClientInformationMixed): void { this.info = info }
  tokens (): OAuthTokens | undefined { return this.saved }
  saveTokens (tokens: OAuthTokens): void { this.saved = tokens }
  saveCodeVerifier (v: string): void { this.verifier = v }
  codeVerifier (): string { return this.verifier }
  async redirectToAuthorization (url: URL): Promise<void> {
    this.authorizations++
    assert.equal(url.searchParams.get('code_challenge_method'), 'S256')
    const started = await fetch(url, { redirect: 'manual' })
    assert.equal(started.status, 303, await started.text())
    const waitUrl = new URL(started.headers.get('location')!, url)
    const waiting = await fetch(waitUrl, { redirect: 'manual' })
    assert.equal(waiting.status, 200)
    const page = await waiting.text()
    assert.match(page, /Waiting for the owner's approval/)
    if (!this.approve) return
    const requestId = /data-request="(areq_\w+)"/.exec(page)![1]!
    const approved = await this.d.request({ method: 'POST', path: `/v1/assistants/requests/${requestId}/approve`, body: { scopes: this.scopes } })
    assert.equal(approved.status, 200, JSON.stringify(approved.json))
    const done = await fetch(waitUrl, { redirect: 'manual' })
    assert.equal(done.status, 302)
    const back = new URL(done.headers.get('location')!)
    assert.equal(back.origin + back.pathname, REDIRECT)
    assert.equal(back.searchParams.get('state'), 'state-42')
    this.code = back.searchParams.get('code')
  }
}

function mcpUrl (d: DaemonProcess): URL {
  const m = /^mcp {7}(http:\/\/\S+)$/m.exec(d.output())
  assert.ok(m !== null, d.output())
  return new URL(m[1]!)
}

async function form (url: URL | string, fields: Record<string, string>): Promise<{ status: number; body: any }> {
  const res = await fetch(url, { method: 'POST', headers: { 'content-type': 'application/x-www-form-urlencoded' }, body: new URLSearchParams(fields).toString() })
  return { status: res.status, body: await res.json() }
}

async function filesContain (dir: string, needle: string): Promise<boolean> {
  for (const name of await readdir(dir, { recursive: true })) {
    const bytes = await readFile(join(dir, name)).catch(() => null)
    if (bytes !== null && bytes.includes(needle)) return true
  }
  return false
}

test('Streamable HTTP with OAuth 2.1: the owner\'s approval is the consent, grant-bound reads, rotation, revocation mid-session', { timeout: 240_000 }, async (t) => {
  const d = await daemonWithHistory(t, ['--set', 'mcp.listen="127.0.0.1:0"'])
  const url = mcpUrl(d)
  const base = url.origin

  // no token: 401 naming the protected-resource metadata, which names the authorization server
  const bare = await fetch(url, { method: 'POST', headers: { 'content-type': 'application/json', accept: 'application/json, text/event-stream' }, body: '{}' })
  assert.equal(bare.status, 401)
  assert.match(bare.headers.get('www-authenticate') ?? '', new RegExp(`resource_metadata="${base}/.well-known/oauth-protected-resource/mcp"`))
  const prm = await (await fetch(`${base}/.well-known/oauth-protected-resource/mcp`)).json() as { resource: string; authorization_servers: string[] }
  assert.deepEqual([prm.resource, prm.authorization_servers], [`${base}/mcp`, [base]])
  const asm = await (await fetch(`${base}/.well-known/oauth-authorization-server`)).json() as { code_challenge_methods_supported: string[] }
  assert.deepEqual(asm.code_challenge_methods_supported, ['S256'])

  const provider = new TestProvider(d, ['chatgpt.conversations'])
  const first = new StreamableHTTPClientTransport(url, { authProvider: provider })
  await assert.rejects(new Client({ name: 'remote', version: '1' }).connect(first), UnauthorizedError)
  assert.ok(provider.code !== null)
  await first.finishAuth(provider.code)
  const client = new Client({ name: 'remote', version: '1' })
  await client.connect(new StreamableHTTPClientTransport(url, { authProvider: provider }))
  t.after(async () => { await client.close() })

  const scopes = textOf(await client.callTool({ name: 'list_scopes', arguments: {} }))
  assert.match(scopes, /Your ChatGPT conversations/)
  const read = await client.callTool({ name: 'read_records', arguments: { scope: 'chatgpt.conversations' } })
  assert.equal(read.isError, false, textOf(read))
  assert.match(textOf(read), /UNTRUSTED-DATA/)
  const outside = await client.callTool({ name: 'read_records', arguments: { scope: 'instagram.profile' } })
  assert.match(textOf(outside), /^SCOPE_NOT_GRANTED/)
  const resources = await client.listResources()
  assert.deepEqual(resources.resources.map((r) => r.name), ['chatgpt.conversations'])
  assert.match(JSON.stringify((await client.readResource({ uri: resources.resources[0]!.uri })).contents[0]), /UNTRUSTED-DATA/)

  // the tokens are stored as their hashes only
  const access = provider.saved!.access_token
  assert.equal(await filesContain(d.home.index, access), false)

  // a hostile body on a valid token: a JSON-RPC error, not a crash
  const bad = await fetch(url, { method: 'POST', headers: { authorization: `Bearer ${access}`, 'content-type': 'application/json', accept: 'application/json, text/event-stream' }, body: '{"jsonrpc": "2.0", "method": ' })
  assert.equal(bad.status, 400)
  assert.equal(((await bad.json()) as { error: { code: number } }).error.code, -32700)
  const huge = await fetch(url, { method: 'POST', headers: { authorization: `Bearer ${access}`, 'content-type': 'application/json' }, body: JSON.stringify({ jsonrpc: '2.0', id: 1, method: 'x', params: { pad: 'x'.repeat(200_000) } }) })
  assert.equal(huge.status, 413)

  // refresh tokens rotate: the old one is spent
  const clientId = provider.info!.client_id
  const refreshed = await form(`${base}/token`, { grant_type: 'refresh_token', refresh_token: provider.saved!.refresh_token!, client_id: clientId })
  assert.equal(refreshed.status, 200, JSON.stringify(refreshed.body))
  assert.notEqual(refreshed.body.access_token, access)
  const again = await form(`${base}/token`, { grant_type: 'refresh_token', refresh_token: provider.saved!.refresh_token!, client_id: clientId })
  assert.deepEqual([again.status, again.body.error], [400, 'invalid_grant'])
  provider.saveTokens({ ...provider.saved!, ...refreshed.body })

  // PKCE: a code answered at once (the client is approved already) is useless with another verifier
  const challenge = 'E9Melhoa2OwvFrEMTJguCHaoeK1t8URWbuGJSstw-cM'
  const quick = await fetch(`${base}/authorize?response_type=code&client_id=${clientId}&redirect_uri=${encodeURIComponent(REDIRECT)}&code_challenge=${challenge}&code_challenge_method=S256&state=s`, { redirect: 'manual' })
  assert.equal(quick.status, 302)
  const code = new URL(quick.headers.get('location')!).searchParams.get('code')!
  const wrong = await form(`${base}/token`, { grant_type: 'authorization_code', code, code_verifier: 'a'.repeat(43), client_id: clientId, redirect_uri: REDIRECT })
  assert.deepEqual([wrong.status, wrong.body.error], [400, 'invalid_grant'])
  const plain = await fetch(`${base}/authorize?response_type=code&client_id=${clientId}&redirect_uri=${encodeURIComponent(REDIRECT)}&code_challenge=${challenge}&code_challenge_method=plain`, { redirect: 'manual' })
  assert.equal(new URL(plain.headers.get('location')!).searchParams.get('error'), 'invalid_request')

  // the access log has the connection's calls
  const connection = (await d.request({ path: '/v1/assistants' })).json.connections.find((c: { kind: string }) => c.kind === 'http')
  assert.equal(connection.name, 'Remote Assistant')
  assert.deepEqual(connection.scopes, ['chatgpt.conversations'])
  const rows = (await d.request({ path: `/v1/access-logs?connection=${connection.id as string}` })).json.entries as Array<{ action: string; status: number }>
  assert.deepEqual(rows.map((e) => `${e.action} ${e.status}`), ['scopes 200', 'read 200', 'denied 403', 'read 200'])

  // revoked while connected: the next call fails, and no new approval is made for it
  provider.approve = false
  const revoked = await d.request({ method: 'POST', path: `/v1/assistants/${connection.id as string}/revoke` })
  assert.equal(revoked.json.status, 'revoked')
  await assert.rejects(client.callTool({ name: 'read_records', arguments: { scope: 'chatgpt.conversations' } }))
  assert.equal((await d.request({ path: `/v1/access-logs?connection=${connection.id as string}` })).json.entries.length, 4)
  const refusedRefresh = await form(`${base}/token`, { grant_type: 'refresh_token', refresh_token: refreshed.body.refresh_token, client_id: clientId })
  assert.equal(refusedRefresh.body.error, 'invalid_grant')
})
