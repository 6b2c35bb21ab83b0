// The builder flow on a real daemon, a real anvil chain and real signatures: a test builder with
// its own viem wallet registers, asks for two scopes, the owner approves one scope pattern, the
// builder reads what is covered and is refused the rest, each bad request with its own code;
// revocation is enforced at once and on chain; the access log shows everything in order; and a
// restarted daemon with no local record honours a grant from the chain alone.
import { test } from 'node:test'
import assert from 'node:assert/strict'
import type { Hex } from 'viem'
import { privateKeyToAccount, generatePrivateKey } from 'viem/accounts'
import { homeLayout } from '../../src/home.js'
import { createIdentity } from '../../src/identity/identity.js'
import { loadOrCreateTxKey } from '../../src/identity/tx-key.js'
import { openDatabase } from '../../src/db/database.js'
import { createPermissionsChain } from '../../src/chain/permissions.js'
import { grantJson } from '../../src/builders/grant.js'
import { permissionTypedData } from '../../src/builders/typed-data.js'
import type { DevChain } from '../../src/chain/index.js'
import { startDaemonProcess, runCli, type DaemonProcess } from '../support/daemon.js'
import { startTestChain, testChainClient } from '../support/anvil.js'
import { chainArgs } from '../support/chain-daemon.js'
import { waitFor } from '../support/data-files.js'
import { tempDir } from '../support/tmp.js'
import { testBuilder, type BuilderResponse } from '../support/builder-client.js'
import { endpointOf, LISTEN, OWNER_KEY } from '../support/builder-daemon.js'


function refused (r: BuilderResponse, status: number, code: string): void {
  assert.equal(r.status, status, `${code}: ${JSON.stringify(r.json)}`)
  assert.equal(r.json?.error?.errorCode, code, JSON.stringify(r.json))
  assert.equal(r.json?.error?.code, status)
  assert.equal(r.json?.data, undefined, 'nothing served')
  assert.equal(r.headers.get('access-control-allow-origin'), '*')
}

async function homeWithOwner (t: Parameters<typeof tempDir>[0], chain: DevChain | null): Promise<string> {
  const root = await tempDir(t, 'hearth-home-')
  const home = homeLayout(root)
  await createIdentity(home, { privateKey: OWNER_KEY })
  const tx = await loadOrCreateTxKey(home)
  if (chain !== null) {
    await chain.rpc('anvil_setBalance', [tx.address, '0x56BC75E2D63100000'])
    await chain.rpc('anvil_setBalance', [privateKeyToAccount(OWNER_KEY).address, '0x56BC75E2D63100000'])
  }
  return root
}

test('builders on chain: request, consent, approve one pattern, signed reads, every refusal with its code, revoke, access log, chain-only grant after restart', async (t) => {
  const chain = await startTestChain(t)
  const client = testChainClient(chain)
  const perms = createPermissionsChain(client)!
  const root = await homeWithOwner(t, chain)
  let d = await startDaemonProcess(t, { home: root, args: [...chainArgs(chain, 100), ...LISTEN] })
  let endpoint = endpointOf(d)
  const builder = testBuilder(chain.accounts[5] as Hex, endpoint)
  const other = testBuilder(chain.accounts[6] as Hex, endpoint)

  // owner data in two scopes
  assert.equal((await d.request({ method: 'POST', path: '/v1/data/instagram.profile', body: { username: 'alice', bio: 'x'.repeat(900) } })).status, 201)
  assert.equal((await d.request({ method: 'POST', path: '/v1/data/spotify.savedTracks', body: { tracks: [{ track: 'Song', artist: 'Band' }] } })).status, 201)

  // the builder registers (on chain, as a grantee)
  const reg = await runCli(d.home, ['builders', 'register', builder.address, '--public-key', 'builder-pk', '--app-url', 'https://app.example'])
  assert.equal(reg.code, 0, reg.stderr)
  assert.match(reg.stdout, /grantee 1 on chain/)
  assert.equal(await perms.granteeId(builder.address), 1n)
  assert.equal((await runCli(d.home, ['builders', 'register', other.address, '--public-key', 'other-pk'])).code, 0)

  // it asks for two scopes
  const asked = await builder.request({ method: 'POST', path: '/v1/access-requests', body: { scopes: ['instagram.profile', 'spotify.savedTracks'], purpose: 'recommendations' } })
  assert.equal(asked.status, 201, JSON.stringify(asked.json))
  const requestId = asked.json.id as string
  assert.equal((await builder.request({ path: `/v1/access-requests/${requestId}` })).json.status, 'pending')

  // the owner sees it with the connectors' consent labels and approves one scope pattern
  const listed = await runCli(d.home, ['requests'])
  assert.match(listed.stdout, new RegExp(requestId))
  assert.match(listed.stdout, /instagram\.profile: Your Instagram profile/)
  assert.match(listed.stdout, /spotify\.savedTracks: /)
  assert.match(listed.stdout, /purpose: recommendations/)
  const approved = await runCli(d.home, ['requests', 'approve', requestId, '--scope', 'instagram.*', '--json'])
  assert.equal(approved.code, 0, approved.stderr)
  const grantId = JSON.parse(approved.stdout).grant.grantId as string
  assert.equal((await runCli(d.home, ['requests', 'approve', requestId])).code, 1, 'decided once')
  const status = await builder.request({ path: `/v1/access-requests/${requestId}` })
  assert.equal(status.json.status, 'approved')
  assert.equal(status.json.grantId, grantId)
  assert.deepEqual(status.json.grantScopes, ['instagram.*'])

  // covered reads work; the uncovered scope is refused
  const read = await builder.request({ path: '/v1/data/instagram.profile', grantId })
  assert.equal(read.status, 200, JSON.stringify(read.json))
  assert.equal(read.json.data.username, 'alice')
  assert.equal(read.headers.get('access-control-allow-origin'), '*')
  const list = await builder.request({ path: '/v1/data', grantId })
  assert.deepEqual(list.json.scopes.map((s: { scope: string }) => s.scope), ['instagram.profile'])
  const versions = await builder.request({ path: '/v1/data/instagram.profile/versions', grantId })
  assert.equal(versions.status, 200)
  assert.equal(versions.json.versions[0].path, undefined)
  // without grantId, the builder's active grants apply
  assert.equal((await builder.request({ path: '/v1/data/instagram.profile' })).status, 200)
  refused(await builder.request({ path: '/v1/data/spotify.savedTracks', grantId }), 403, 'SCOPE_NOT_GRANTED')

  // the grant reaches the chain: the owner is the grantor, the grant JSON as signed
  const onChain = await waitFor('grant relayed', async () => {
    const g = (await d.request({ path: `/v1/grants/${grantId}` })).json
    return g.chain === 'on-chain' ? g : null
  }, 60_000)
  const permission = await perms.permission(BigInt(onChain.permissionId))
  assert.equal(permission?.grantor, privateKeyToAccount(OWNER_KEY).address)
  assert.equal(permission?.grant, onChain.grant)
  assert.deepEqual(JSON.parse(permission!.grant).scopes, ['instagram.*'])
  assert.equal(JSON.parse(permission!.grant).builder, builder.address)
  // the permission id works as grantId too
  assert.equal((await builder.request({ path: '/v1/data/instagram.profile', grantId: onChain.permissionId })).status, 200)

  // every bad request, each with its own code
  const now = Math.floor(Date.now() / 1000)
  const path = '/v1/data/instagram.profile'
  refused(await builder.request({ path, header: null }), 401, 'SIGNATURE_MISSING')
  refused(await builder.request({ path, header: 'Web3Signed not-a-token' }), 401, 'SIGNATURE_MALFORMED')
  refused(await builder.request({ path, grantId, sign: { key: privateKeyToAccount(generatePrivateKey()) } }), 401, 'SIGNATURE_INVALID')
  refused(await builder.request({ path, grantId, sign: { aud: 'https://someone-else.example' } }), 401, 'SIGNATURE_WRONG_AUDIENCE')
  refused(await builder.request({ path, grantId, sign: { method: 'POST' } }), 401, 'SIGNATURE_WRONG_METHOD')
  refused(await builder.request({ path, grantId, sign: { uri: '/v1/data/spotify.savedTracks' } }), 401, 'SIGNATURE_WRONG_URI')
  refused(await builder.request({ path: `${path}?at=2030-01-01T00:00:00Z`, grantId, sign: { uri: path } }), 401, 'SIGNATURE_WRONG_URI')
  const bodyHeader = await builder.header({ method: 'POST', path: '/v1/access-requests', body: { scopes: ['instagram.profile'] } })
  refused(await builder.send('POST', '/v1/access-requests', JSON.stringify({ scopes: ['*'] }), bodyHeader), 401, 'SIGNATURE_WRONG_BODY')
  refused(await builder.request({ path, grantId, sign: { iat: now - 700, exp: now - 100 } }), 401, 'SIGNATURE_EXPIRED')
  refused(await builder.request({ path, grantId, sign: { iat: now + 300, exp: now + 400 } }), 401, 'SIGNATURE_NOT_YET_VALID')
  refused(await builder.request({ path, grantId, sign: { iat: now, exp: now + 900 } }), 401, 'SIGNATURE_WINDOW_TOO_LONG')
  const once = await builder.header({ path, grantId })
  assert.equal((await builder.send('GET', path, undefined, once)).status, 200)
  refused(await builder.send('GET', path, undefined, once), 401, 'SIGNATURE_REPLAYED')
  const stranger = testBuilder(generatePrivateKey(), endpoint)
  refused(await stranger.request({ path, grantId }), 403, 'BUILDER_NOT_REGISTERED')
  // a permission on chain that another owner signed for this builder
  const otherOwner = privateKeyToAccount(chain.accounts[7] as Hex)
  const foreignGrant = grantJson({ user: otherOwner.address, builder: builder.address, scopes: ['*'], expiresAt: 0, nonce: 0 })
  const foreignInput = { nonce: 0n, granteeId: 1n, grant: foreignGrant, fileIds: [] as bigint[] }
  const foreign = await perms.addPermission(foreignInput, await otherOwner.signTypedData(permissionTypedData({ chainId: chain.chainId, verifyingContract: perms.permissions }, foreignInput)))
  refused(await builder.request({ path, grantId: foreign.permissionId.toString() }), 403, 'GRANT_WRONG_OWNER')
  refused(await other.request({ path, grantId }), 403, 'GRANT_WRONG_BUILDER')
  refused(await builder.request({ path, grantId: 'grant_0000000000000000000' }), 403, 'GRANT_NOT_FOUND')
  // an expired grant
  const shortReq = await builder.request({ method: 'POST', path: '/v1/access-requests', body: { scopes: ['instagram.profile'] } })
  const short = await d.request({ method: 'POST', path: `/v1/access-requests/${String(shortReq.json.id)}/approve`, body: { expiresAt: Math.floor(Date.now() / 1000) + 2 } })
  assert.equal(short.status, 200, JSON.stringify(short.json))
  await new Promise((resolve) => setTimeout(resolve, 3_100))
  refused(await builder.request({ path, grantId: short.json.grant.grantId }), 403, 'GRANT_EXPIRED')
  // a file of an uncovered scope named by fileId
  const spotifyFileId = await waitFor('spotify file registered', async () => {
    const v = (await d.request({ path: '/v1/data/spotify.savedTracks/versions' })).json.versions[0]
    return v?.fileId ?? null
  }, 60_000)
  refused(await builder.request({ path: `${path}?fileId=${String(spotifyFileId)}`, grantId }), 403, 'FILE_NOT_IN_SCOPE')
  refused(await builder.request({ path: '/v1/grants', grantId }), 404, 'NOT_FOUND')
  refused(await builder.request({ method: 'DELETE', path, grantId }), 405, 'METHOD_NOT_ALLOWED')
  // CORS preflight
  const preflight = await fetch(`http://127.0.0.1:${endpoint.port}${path}`, { method: 'OPTIONS', headers: { origin: 'https://app.example', 'access-control-request-method': 'GET' } })
  assert.equal(preflight.status, 204)
  assert.match(preflight.headers.get('access-control-allow-headers') ?? '', /authorization/)

  // a second grant, relayed, kept for the restart below
  const keepReq = await builder.request({ method: 'POST', path: '/v1/access-requests', body: { scopes: ['instagram.profile'] } })
  const keep = (await d.request({ method: 'POST', path: `/v1/access-requests/${String(keepReq.json.id)}/approve` })).json.grant
  const keepOnChain = await waitFor('second grant relayed', async () => {
    const g = (await d.request({ path: `/v1/grants/${String(keep.grantId)}` })).json
    return g.chain === 'on-chain' ? g : null
  }, 60_000)

  // revocation: enforced at once, then on chain
  const revoked = await runCli(d.home, ['grants', 'revoke', grantId])
  assert.equal(revoked.code, 0, revoked.stderr)
  refused(await builder.request({ path, grantId }), 403, 'GRANT_REVOKED')
  await waitFor('revoked on chain', async () => ((await perms.permission(BigInt(onChain.permissionId)))?.endBlock ?? 0n) > 0n ? true : null, 60_000)
  await waitFor('revocation recorded', async () => (await d.request({ path: `/v1/grants/${grantId}` })).json.chain === 'revoked-on-chain' ? true : null, 60_000)
  const grants = await runCli(d.home, ['grants'])
  assert.match(grants.stdout, new RegExp(`${grantId}\\s+revoked .*reads \\d+ .*revoked-on-chain`))

  // the access log: each read and each denial, in order
  const log = (await d.request({ path: `/v1/access-logs?builder=${builder.address}&limit=1000` })).json.entries as Array<Record<string, any>>
  const codes = log.map((e) => e.errorCode ?? `ok:${String(e.action)}`)
  const expectedOrder = ['ok:request-access', 'ok:read', 'ok:list', 'ok:versions', 'ok:read', 'SCOPE_NOT_GRANTED', 'ok:read', 'SIGNATURE_WRONG_AUDIENCE', 'SIGNATURE_WRONG_METHOD', 'SIGNATURE_REPLAYED', 'GRANT_WRONG_OWNER', 'GRANT_EXPIRED', 'FILE_NOT_IN_SCOPE', 'GRANT_REVOKED']
  let at = 0
  for (const want of expectedOrder) {
    const found = codes.indexOf(want, at)
    assert.ok(found >= 0, `${want} after position ${at} in ${codes.join(' ')}`)
    at = found + 1
  }
  assert.ok(log.every((e, i) => i === 0 || e.logId > log[i - 1]!.logId))
  const readEntry = log.find((e) => e.action === 'read' && e.status === 200)!
  assert.equal(readEntry.scope, 'instagram.profile')
  assert.ok(readEntry.bytes > 900)
  assert.equal(readEntry.ip, '127.0.0.1')
  const cli = await runCli(d.home, ['access-log', '--builder', builder.address, '--scope', 'spotify.savedTracks'])
  assert.match(cli.stdout, /SCOPE_NOT_GRANTED/)
  assert.doesNotMatch(cli.stdout, /instagram\.profile/)
  const denials = (await d.request({ path: '/v1/access-logs?order=desc&limit=1000' })).json.entries as Array<Record<string, any>>
  assert.ok(denials.some((e) => e.errorCode === 'SIGNATURE_MISSING' && e.builder === null))
  assert.ok(denials.some((e) => e.errorCode === 'BUILDER_NOT_REGISTERED'))

  // a restarted daemon with no local record of the grant honours it from the chain
  assert.equal(await d.stop(), 0)
  const db = await openDatabase(homeLayout(root).index)
  for (const name of ['grants', 'grants-by-permission', 'grants-by-builder']) await db.sublevel(['builders', name]).clear()
  await db.close()
  d = await startDaemonProcess(t, { home: root, args: [...chainArgs(chain, 100), ...LISTEN] })
  endpoint = endpointOf(d)
  const again = testBuilder(chain.accounts[5] as Hex, endpoint)
  assert.equal((await d.request({ path: '/v1/grants' })).json.grants.length, 0)
  const fromChain = await again.request({ path, grantId: keepOnChain.permissionId })
  assert.equal(fromChain.status, 200, JSON.stringify(fromChain.json))
  refused(await again.request({ path, grantId: onChain.permissionId }), 403, 'GRANT_REVOKED')
  refused(await again.request({ path: '/v1/data/spotify.savedTracks', grantId: keepOnChain.permissionId }), 403, 'SCOPE_NOT_GRANTED')
  assert.equal(await d.stop(), 0)
})

test('offline: with no chain, request → approve → read works with the local registry, and the grant reaches the chain once one is configured', async (t) => {
  const root = await homeWithOwner(t, null)
  let d = await startDaemonProcess(t, { home: root, args: LISTEN })
  const builderKey = generatePrivateKey()
  const builder = testBuilder(builderKey, endpointOf(d))
  assert.equal((await d.request({ method: 'POST', path: '/v1/data/instagram.profile', body: { username: 'bob' } })).status, 201)
  const reg = await runCli(d.home, ['builders', 'register', builder.address, '--public-key', 'pk'])
  assert.equal(reg.code, 0, reg.stderr)
  assert.match(reg.stdout, /local registry/)
  const asked = await builder.request({ method: 'POST', path: '/v1/access-requests', body: { scopes: ['instagram.profile'] } })
  assert.equal(asked.status, 201)
  const approved = await d.request({ method: 'POST', path: `/v1/access-requests/${String(asked.json.id)}/approve` })
  assert.equal(approved.status, 200, JSON.stringify(approved.json))
  const grantId = approved.json.grant.grantId as string
  assert.equal(approved.json.grant.chain, 'local')
  const read = await builder.request({ path: '/v1/data/instagram.profile', grantId })
  assert.equal(read.status, 200)
  assert.equal(read.json.data.username, 'bob')
  assert.equal(await d.stop(), 0)

  // a chain is configured: the builder is registered on it and the grant relayed
  const chain = await startTestChain(t)
  const tx = await loadOrCreateTxKey(homeLayout(root))
  await chain.rpc('anvil_setBalance', [tx.address, '0x56BC75E2D63100000'])
  d = await startDaemonProcess(t, { home: root, args: [...chainArgs(chain, 100), ...LISTEN] })
  const g = await waitFor('local grant relayed', async () => {
    const r = (await d.request({ path: `/v1/grants/${grantId}` })).json
    return r.chain === 'on-chain' ? r : null
  }, 60_000)
  const perms = createPermissionsChain(testChainClient(chain))!
  assert.equal(await perms.granteeId(builder.address), 1n)
  const p = await perms.permission(BigInt(g.permissionId))
  assert.equal(p?.grantor, privateKeyToAccount(OWNER_KEY).address)
  assert.equal(p?.grant, g.grant)
  assert.equal(g.reads, 1)
  const again = testBuilder(builderKey, endpointOf(d))
  assert.equal((await again.request({ path: '/v1/data/instagram.profile', grantId: g.permissionId })).status, 200)

  // revoked on chain by another device of the owner: honoured here too, without waiting on the chain per read
  await chain.rpc('anvil_setBalance', [privateKeyToAccount(OWNER_KEY).address, '0x56BC75E2D63100000'])
  await perms.revokePermission(BigInt(g.permissionId), testChainClient(chain).senderFor(OWNER_KEY))
  await waitFor('on-chain revocation honoured', async () => {
    const r = await again.request({ path: '/v1/data/instagram.profile', grantId })
    return r.status === 403 && r.json.error.errorCode === 'GRANT_REVOKED' ? true : null
  }, 60_000)
  const after = (await d.request({ path: `/v1/grants/${grantId}` })).json
  assert.equal(after.state, 'revoked')
  assert.equal(after.chain, 'revoked-on-chain')
  assert.equal(await d.stop(), 0)
})

test('an identity with only the master signature cannot approve: WALLET_KEY_MISSING says what to do', async (t) => {
  const root = await tempDir(t, 'hearth-home-')
  const account = privateKeyToAccount(OWNER_KEY)
  await createIdentity(homeLayout(root), { signature: await account.signMessage({ message: 'vana-master-key-v1' }) })
  const d = await startDaemonProcess(t, { home: root, args: [...LISTEN, '--set', 'builders.rateLimitPerMinute=20'] })
  const builder = testBuilder(generatePrivateKey(), endpointOf(d))
  assert.equal((await runCli(d.home, ['builders', 'register', builder.address, '--public-key', 'pk'])).code, 0)
  const asked = await builder.request({ method: 'POST', path: '/v1/access-requests', body: { scopes: ['instagram.profile'] } })
  const r = await runCli(d.home, ['requests', 'approve', String(asked.json.id)])
  assert.equal(r.code, 1)
  assert.match(r.stderr, /WALLET_KEY_MISSING/)
  assert.match(r.stderr, /hearth init --force --yes --private-key-file/)
  // the request stays pending: nothing was decided
  assert.equal((await d.request({ path: `/v1/access-requests/${String(asked.json.id)}` })).json.status, 'pending')
  // too many pending requests from one builder
  // (identical requests in one second would carry one signature, refused as a replay: vary them)
  for (let i = 0; i < 9; i++) assert.equal((await builder.request({ method: 'POST', path: '/v1/access-requests', body: { scopes: ['instagram.profile'], purpose: `try ${i}` } })).status, 201)
  refused(await builder.request({ method: 'POST', path: '/v1/access-requests', body: { scopes: ['instagram.profile'], purpose: 'one more' } }), 429, 'ACCESS_REQUEST_LIMIT')
  refused(await builder.request({ method: 'POST', path: '/v1/access-requests', body: { scopes: ['instagram.profile'], admin: true } }), 400, 'INVALID_BODY')
  const big = await builder.request({ method: 'POST', path: '/v1/access-requests', body: { scopes: ['instagram.profile'], purpose: 'x'.repeat(20_000) } })
  refused(big, 413, 'BODY_TOO_LARGE')
  // the per-builder rate limit: this builder runs out, another one (same address) does not
  let limited: BuilderResponse | null = null
  for (let i = 0; i < 20 && limited === null; i++) {
    const r = await builder.request({ path: `/v1/access-requests/${String(asked.json.id)}` })
    if (r.status === 429) limited = r
  }
  assert.ok(limited !== null, 'rate limited within 20 requests')
  refused(limited, 429, 'RATE_LIMITED')
  const second = testBuilder(generatePrivateKey(), endpointOf(d))
  assert.equal((await runCli(d.home, ['builders', 'register', second.address, '--public-key', 'pk2'])).code, 0)
  assert.equal((await second.request({ method: 'POST', path: '/v1/access-requests', body: { scopes: ['spotify.*'] } })).status, 201)
  assert.equal(await d.stop(), 0)
})
