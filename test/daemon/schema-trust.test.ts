// Issue 12, item 1: a stranger's on-chain schema must not take over the owner's scope, and its
// definition URL must not make the daemon reach this machine. A real anvil chain, a stranger
// account and a trusted curator account, and a definition server on loopback that counts hits.
import { test, type TestContext } from 'node:test'
import assert from 'node:assert/strict'
import { createServer } from 'node:http'
import type { AddressInfo } from 'node:net'
import type { Hex } from 'viem'
import { startDaemonProcess } from '../support/daemon.js'
import { addressOf, startTestChain, testChainClient } from '../support/anvil.js'
import { chainArgs, fundedHome } from '../support/chain-daemon.js'
import { waitFor } from '../support/data-files.js'

function definition (scope: string, required: string): string {
  return JSON.stringify({ name: `${required} ${scope}`, version: '9.0.0', scope, dialect: 'json', schema: { type: 'object', required: [required] } })
}

async function definitionServer (t: TestContext): Promise<{ url: (path: string) => string; hits: (path: string) => number }> {
  const hits = new Map<string, number>()
  const docs: Record<string, string> = { '/evil.json': definition('instagram.profile', 'evil'), '/curated.json': definition('instagram.profile', 'curated') }
  const server = createServer((req, res) => {
    hits.set(req.url ?? '', (hits.get(req.url ?? '') ?? 0) + 1)
    const body = docs[req.url ?? '']
    if (body === undefined) res.writeHead(404).end(); else res.writeHead(200, { 'content-type': 'application/json' }).end(body)
  })
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve))
  t.after(async () => { server.closeAllConnections(); await new Promise((resolve) => server.close(resolve)) })
  const base = `http://127.0.0.1:${(server.address() as AddressInfo).port}`
  return { url: (path) => `${base}${path}`, hits: (path) => hits.get(path) ?? 0 }
}

test('a stranger\'s on-chain schema never takes over a scope and its URL is never fetched; a trusted curator\'s schema is adopted', async (t) => {
  const chain = await startTestChain(t)
  const defs = await definitionServer(t)
  const stranger = testChainClient(chain, { txPrivateKey: chain.accounts[5] as Hex })
  const curatorKey = chain.accounts[6] as Hex
  const curator = testChainClient(chain, { txPrivateKey: curatorKey })
  const root = await fundedHome(t, chain)
  await stranger.addSchema('evil', 'json', defs.url('/evil.json'))

  // even with loopback and http allowed for definitions, an untrusted schema is not fetched
  const open = ['--set', 'schemas.allowHttpDefinitionUrls=true', '--set', 'schemas.allowPrivateDefinitionUrls=true']
  let d = await startDaemonProcess(t, { home: root, args: [...chainArgs(chain), ...open] })
  const stored = await d.request({ method: 'POST', path: '/v1/data/instagram.profile', body: { username: 'alice' } })
  assert.equal(stored.status, 201, stored.body.toString())
  const status = (await d.request({ path: '/v1/status' })).json
  assert.ok(status.schemaSources.some((s: any) => s.name === 'chain' && s.ok === true), 'the chain was asked')
  assert.equal(defs.hits('/evil.json'), 0, 'the stranger\'s definition was not fetched')
  // the owner's own schema gets registered on chain by this daemon: trusted
  await waitFor('file registered', async () => {
    const v = (await d.request({ path: '/v1/data/instagram.profile/versions' })).json.versions
    return v[0]?.state === 'registered' ? v : null
  }, 60_000)
  await d.stop()

  // a curator the owner trusts publishes a newer schema; the stranger publishes another after it
  await curator.addSchema('curated', 'json', defs.url('/curated.json'))
  await stranger.addSchema('evil again', 'json', defs.url('/evil.json'))
  d = await startDaemonProcess(t, { home: root, args: [...chainArgs(chain), ...open, '--set', `schemas.trustedOwners=["${addressOf(curatorKey)}"]`] })
  const refused = await d.request({ method: 'POST', path: '/v1/data/instagram.profile', body: { username: 'bob' } })
  assert.equal(refused.status, 400, refused.body.toString())
  assert.match(refused.json.error.message, /must have required property 'curated'/)
  const ok = await d.request({ method: 'POST', path: '/v1/data/instagram.profile', body: { username: 'bob', curated: true } })
  assert.equal(ok.status, 201, ok.body.toString())
  assert.equal(defs.hits('/curated.json'), 1)
  assert.equal(defs.hits('/evil.json'), 0)
  await d.stop()

  // with the default fetch policy even a trusted owner's loopback http URL is not fetched
  const fresh = await fundedHome(t, chain)
  d = await startDaemonProcess(t, { home: fresh, args: [...chainArgs(chain), '--set', `schemas.trustedOwners=["${addressOf(curatorKey)}"]`] })
  const shipped = await d.request({ method: 'POST', path: '/v1/data/instagram.profile', body: { username: 'carol' } })
  assert.equal(shipped.status, 201, shipped.body.toString())
  assert.equal(defs.hits('/curated.json'), 1)
  assert.match(d.output(), /unsupported URL scheme|internal address/)
})
