// The daemon registers stored files (and the schemas they use) on a real local chain, waits in
// its durable queue while the chain is down, and drains exactly once when it is back, also
// across a daemon crash.
import { test } from 'node:test'
import assert from 'node:assert/strict'
import { startDaemonProcess, runCli } from '../support/daemon.js'
import { startTestChain, testChainClient } from '../support/anvil.js'
import { waitFor } from '../support/data-files.js'
import { chainArgs, fundedHome } from '../support/chain-daemon.js'

async function versionsOf (d: { request: (r: any) => Promise<any> }, scope: string): Promise<any[]> {
  return (await d.request({ path: `/v1/data/${scope}/versions?limit=1000` })).json.versions
}

test('stored files are registered on chain with an on-chain schema id; a chain outage and a daemon crash lose and duplicate nothing', async (t) => {
  const chain = await startTestChain(t)
  const client = testChainClient(chain)
  const root = await fundedHome(t, chain)
  let d = await startDaemonProcess(t, { home: root, args: chainArgs(chain) })

  for (let i = 0; i < 5; i++) {
    const r = await d.request({ method: 'POST', path: '/v1/data/instagram.profile', body: { username: `u${i}` } })
    assert.equal(r.status, 201, r.body.toString())
  }
  const registered = await waitFor('five files registered', async () => {
    const v = await versionsOf(d, 'instagram.profile')
    return v.length === 5 && v.every((x) => x.state === 'registered' && x.fileId !== null) ? v : null
  }, 60_000)
  for (const v of registered) {
    assert.match(v.schemaId, /^\d+$/, 'the local schema id was replaced by the on-chain id')
    assert.equal((await client.fileIdByUrl(v.url)).toString(), v.fileId)
    const file = await client.getFile(BigInt(v.fileId))
    assert.equal(file?.schemaId.toString(), v.schemaId)
  }
  const schema = await client.getSchema(BigInt(registered[0].schemaId))
  assert.equal(schema?.definitionUrl.startsWith('ipfs://'), true)
  const byId = await d.request({ path: `/v1/schemas/${registered[0].schemaId}` })
  assert.equal(byId.status, 200)
  assert.equal(byId.json.data.scope, 'instagram.profile')

  // the chain goes away: files are still stored, registrations wait
  await chain.kill()
  for (let i = 5; i < 10; i++) {
    const r = await d.request({ method: 'POST', path: '/v1/data/instagram.profile', body: { username: `u${i}` } })
    assert.equal(r.status, 201)
  }
  const status = await waitFor('pending registrations visible', async () => {
    const s = (await d.request({ path: '/v1/status' })).json
    return s.chain.registrations.pending >= 5 ? s : null
  })
  assert.equal(status.chain.network.reachable, false)
  const cli = await runCli(d.home, ['status'])
  assert.match(cli.stdout, /chain/)

  // ...and the daemon crashes before the chain is back
  await d.kill('SIGKILL')
  await chain.restart()
  d = await startDaemonProcess(t, { home: root, args: chainArgs(chain) })
  const all = await waitFor('ten files registered', async () => {
    const v = await versionsOf(d, 'instagram.profile')
    return v.length === 10 && v.every((x) => x.state === 'registered') ? v : null
  }, 90_000)
  assert.equal(Number(await client.filesCount()), 10, 'each URL registered exactly once')
  assert.equal(new Set(all.map((v) => v.fileId)).size, 10)
  const byFileId = await d.request({ path: `/v1/data/instagram.profile?fileId=${all[0].fileId}` })
  assert.equal(byFileId.status, 200)
  assert.equal(byFileId.headers['x-hearth-file-id'], all[0].fileId)
})
