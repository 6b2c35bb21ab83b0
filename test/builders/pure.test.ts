// The pure parts of the builder side: signed-request parsing and checks, grant JSON, scope
// patterns and the EIP-712 permission message, with real keys and real signatures.
import { test } from 'node:test'
import assert from 'node:assert/strict'
import { hashTypedData, keccak256, toBytes, type Hex } from 'viem'
import { privateKeyToAccount } from 'viem/accounts'
import { isHearthError, type ErrorCode } from '../../src/errors.js'
import { checkPatterns, coveringPattern, patternProblem, patternWithin } from '../../src/protocol/scope-pattern.js'
import { grantJson, parseGrant } from '../../src/builders/grant.js'
import { permissionTypedData, recoverPermissionSigner, PERMISSION_TYPES } from '../../src/builders/typed-data.js'
import { acceptedUntilMs, bodyHash, checkSignedFacts, parseAuthorization, recoverSigner, replayKey, signRequest } from '../../src/builders/web3-signed.js'

const builder = privateKeyToAccount('0x59c6995e998f97a5a0044966f0945389dc9e86dae88c7a8412f4603b6b78690d')
const other = privateKeyToAccount('0x5de4111afa1a4b94908f83103eb1f1706367c2e68ca870fc3fb9a804cdab365a')
const AUD = 'https://hearth.example/'
const sign = async (m: string): Promise<Hex> => await builder.signMessage({ message: m })

function rejects (code: ErrorCode, fn: () => unknown): void {
  assert.throws(fn, (err: unknown) => isHearthError(err, code) && err.message.length > 0, `expected ${code}`)
}

test('scope patterns: exact, source.* and *, case-sensitive, never a wider match than written', () => {
  assert.equal(patternProblem('instagram.profile'), null)
  assert.equal(patternProblem('instagram.*'), null)
  assert.equal(patternProblem('*'), null)
  for (const bad of ['instagram', 'Instagram.*', 'a.*.b', '*.profile', 'instagram.pro*', '', 'a..b', 42]) assert.notEqual(patternProblem(bad), null, String(bad))
  assert.equal(coveringPattern(['instagram.*'], 'instagram.profile'), 'instagram.*')
  assert.equal(coveringPattern(['instagram.*'], 'instagramx.profile'), null)
  assert.equal(coveringPattern(['spotify.savedTracks'], 'spotify.savedtracks'), null)
  assert.equal(coveringPattern(['*'], 'a.b.c'), '*')
  assert.equal(coveringPattern(['*'], 'not a scope'), null)
  assert.deepEqual(checkPatterns(['a.b', 'a.b', 'c.*']), ['a.b', 'c.*'])
  assert.throws(() => checkPatterns([]), (e: unknown) => isHearthError(e, 'INVALID_ARGUMENT'))
  assert.equal(patternWithin('instagram.profile', ['instagram.*']), true)
  assert.equal(patternWithin('instagram.*', ['instagram.profile']), false)
  assert.equal(patternWithin('*', ['instagram.*']), false)
})

test('grant JSON round-trips in its fixed key order and refuses anything else', () => {
  const g = { user: other.address, builder: builder.address, scopes: ['instagram.*'], expiresAt: 0, nonce: 3 }
  const text = grantJson(g)
  assert.equal(text, `{"user":"${other.address}","builder":"${builder.address}","scopes":["instagram.*"],"expiresAt":0,"nonce":3}`)
  assert.deepEqual(parseGrant(text), g)
  assert.deepEqual(parseGrant(text.replace(other.address, other.address.toLowerCase())).user, other.address)
  for (const bad of ['[]', '{', '{"user":"x"}', text.replace('"nonce":3', '"nonce":-1'), text.replace('["instagram.*"]', '["bad"]'), 'x'.repeat(9000)]) {
    assert.throws(() => parseGrant(bad), (e: unknown) => isHearthError(e, 'INVALID_ARGUMENT'))
  }
})

test('the EIP-712 permission matches the contract typehash and recovers the signer', async () => {
  assert.equal(keccak256(toBytes('Permission(uint256 nonce,uint256 granteeId,string grant,uint256[] fileIds)')).length, 66)
  assert.deepEqual(PERMISSION_TYPES.Permission.map((f) => `${f.type} ${f.name}`).join(','), 'uint256 nonce,uint256 granteeId,string grant,uint256[] fileIds')
  const message = { nonce: 0n, granteeId: 1n, grant: '{}', fileIds: [] }
  const target = { chainId: 31337, verifyingContract: '0x5FbDB2315678afecb367f032d93F642f64180aa3' as const }
  const sig = await other.signTypedData(permissionTypedData(target, message))
  assert.equal(await recoverPermissionSigner(target, message, sig), other.address)
  // bound to its domain: the local (chainless) domain recovers someone else
  assert.notEqual(await recoverPermissionSigner(null, message, sig), other.address)
  assert.notEqual(hashTypedData(permissionTypedData(null, message)), hashTypedData(permissionTypedData(target, message)))
})

test('a signed request parses, recovers its signer and passes the checks it was made for', async () => {
  const body = new TextEncoder().encode('{"scopes":["a.b"]}')
  const header = await signRequest(sign, { aud: AUD, method: 'POST', uri: '/v1/access-requests?x=1', body, grantId: 'grant_1', iss: builder.address })
  const parsed = parseAuthorization(header)
  assert.equal(parsed.payload.bodyHash, bodyHash(body))
  assert.equal(await recoverSigner(parsed.encoded, parsed.signature, parsed.payload.iss), builder.address)
  const now = parsed.payload.iat
  checkSignedFacts(parsed.payload, { method: 'POST', uri: '/v1/access-requests?x=1', body, now }, 'https://hearth.example')
  // behind a proxy that serves the listener under a path
  const proxied = parseAuthorization(await signRequest(sign, { aud: 'https://x.example/hearth', method: 'GET', uri: '/hearth/v1/data' }))
  checkSignedFacts(proxied.payload, { method: 'GET', uri: '/v1/data', body: new Uint8Array(), now }, 'https://x.example/hearth')
})

test('each bad signed request fails with its own code', async () => {
  const now = Math.floor(Date.now() / 1000)
  const facts = { method: 'GET', uri: '/v1/data/a.b?at=x', body: new Uint8Array(), now }
  const make = async (over: Record<string, unknown> = {}, signer = sign): Promise<ReturnType<typeof parseAuthorization>> =>
    parseAuthorization(await signRequest(signer, { aud: AUD, method: 'GET', uri: '/v1/data/a.b?at=x', iat: now, exp: now + 60, ...over } as never))
  rejects('SIGNATURE_MISSING', () => parseAuthorization(undefined))
  for (const bad of ['Bearer abc', 'Web3Signed abc', 'Web3Signed @@.0x00', `Web3Signed ${Buffer.from('[]').toString('base64url')}.0x${'1'.repeat(130)}`,
    `Web3Signed ${Buffer.from('{"aud":1}').toString('base64url')}.0x${'1'.repeat(130)}`, `Web3Signed ${'a'.repeat(5000)}.0x`]) {
    rejects('SIGNATURE_MALFORMED', () => parseAuthorization(bad))
  }
  const extra = Buffer.from(JSON.stringify({ aud: AUD, method: 'GET', uri: '/', bodyHash: bodyHash(new Uint8Array()), iat: 1, exp: 2, admin: true })).toString('base64url')
  rejects('SIGNATURE_MALFORMED', () => parseAuthorization(`Web3Signed ${extra}.0x${'1'.repeat(130)}`))

  const byOther = await make({ iss: builder.address }, async (m) => await other.signMessage({ message: m }))
  await assert.rejects(recoverSigner(byOther.encoded, byOther.signature, byOther.payload.iss), (e: unknown) => isHearthError(e, 'SIGNATURE_INVALID'))
  const garbage = await make()
  await assert.rejects(recoverSigner(garbage.encoded, `0x${'ff'.repeat(65)}`), (e: unknown) => isHearthError(e, 'SIGNATURE_INVALID'))

  const cases: Array<[ErrorCode, Record<string, unknown>, Partial<typeof facts>?]> = [
    ['SIGNATURE_WRONG_AUDIENCE', { aud: 'https://evil.example' }],
    ['SIGNATURE_WRONG_METHOD', { method: 'POST' }],
    ['SIGNATURE_WRONG_URI', { uri: '/v1/data/a.b' }],
    ['SIGNATURE_WRONG_URI', { uri: '/v1/data/a.c?at=x' }],
    ['SIGNATURE_WRONG_BODY', {}, { body: new TextEncoder().encode('x') }],
    ['SIGNATURE_EXPIRED', { iat: now - 400, exp: now - 61 }],
    ['SIGNATURE_NOT_YET_VALID', { iat: now + 61, exp: now + 100 }],
    ['SIGNATURE_WINDOW_TOO_LONG', { iat: now, exp: now + 601 }]
  ]
  for (const [code, over, factOver] of cases) {
    const p = await make(over)
    rejects(code, () => { checkSignedFacts(p.payload, { ...facts, ...factOver }, AUD) })
  }
  // the edges of the window are accepted
  checkSignedFacts((await make({ iat: now + 60, exp: now + 660 })).payload, facts, AUD)
  checkSignedFacts((await make({ iat: now - 600, exp: now - 60 })).payload, facts, AUD)
})

test('the malleable twin of a signature (high s, flipped v) is refused, so a signature works once', async () => {
  const parsed = parseAuthorization(await signRequest(sign, { aud: AUD, method: 'GET', uri: '/v1/data' }))
  assert.equal(await recoverSigner(parsed.encoded, parsed.signature), builder.address)
  const n = 0xfffffffffffffffffffffffffffffffebaaedce6af48a03bbfd25e8cd0364141n
  const s = BigInt(`0x${parsed.signature.slice(66, 130)}`)
  const v = Number.parseInt(parsed.signature.slice(130), 16)
  const twin = `${parsed.signature.slice(0, 66)}${(n - s).toString(16).padStart(64, '0')}${(v === 27 ? 28 : 27).toString(16)}` as Hex
  await assert.rejects(recoverSigner(parsed.encoded, twin), (e: unknown) => isHearthError(e, 'SIGNATURE_INVALID'))
})

test('every encoding of one signature has one replay key, and it is remembered as long as it is accepted', async () => {
  const parsed = parseAuthorization(await signRequest(sign, { aud: AUD, method: 'GET', uri: '/v1/data' }))
  const v = Number.parseInt(parsed.signature.slice(130), 16)
  const zeroOne = `${parsed.signature.slice(0, 130)}0${v - 27}` as Hex
  const signer = await recoverSigner(parsed.encoded, zeroOne)
  assert.equal(signer, builder.address)
  assert.equal(replayKey(parsed.encoded, signer), replayKey(parsed.encoded, await recoverSigner(parsed.encoded, parsed.signature)))
  assert.notEqual(replayKey(parsed.encoded, signer), replayKey(parsed.encoded, other.address))
  // accepted in the last second before acceptedUntilMs, refused from it on
  const until = acceptedUntilMs(parsed.payload)
  const facts = { method: 'GET', uri: '/v1/data', body: new Uint8Array(), now: Math.floor((until - 1) / 1000) }
  checkSignedFacts(parsed.payload, facts, AUD)
  rejects('SIGNATURE_EXPIRED', () => { checkSignedFacts(parsed.payload, { ...facts, now: Math.floor(until / 1000) }, AUD) })
})
