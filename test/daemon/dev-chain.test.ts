// `hearth daemon --dev-chain`: the whole protocol on one machine. The daemon starts anvil with our
// contracts, registers what it stores, and `hearth schema add` registers the definition on chain.
import { test } from 'node:test'
import assert from 'node:assert/strict'
import { writeFile } from 'node:fs/promises'
import { join } from 'node:path'
import { startDaemonProcess, runCli } from '../support/daemon.js'
import { waitFor } from '../support/data-files.js'

test('--dev-chain: files and added schemas are registered on the local chain, which stops with the daemon', async (t) => {
  const d = await startDaemonProcess(t, { args: ['--dev-chain', '--set', 'chain.pollIntervalMs=200'] })
  assert.match(d.output(), /dev chain http:\/\/127\.0\.0\.1:\d+/)

  const def = { name: 'Notes', version: '1.0.0', scope: 'notes.daily', dialect: 'json', description: 'daily notes', schema: { type: 'object', properties: { text: { type: 'string' } }, required: ['text'] } }
  const defFile = join(d.home.root, 'notes.json')
  await writeFile(defFile, JSON.stringify(def))
  const added = await runCli(d.home, ['schema', 'add', defFile, '--json'])
  assert.equal(added.code, 0, added.stderr)
  const posted = await d.request({ method: 'POST', path: '/v1/data/notes.daily', body: { text: 'hello chain' } })
  assert.equal(posted.status, 201, posted.body.toString())

  const version = await waitFor('registered', async () => {
    const v = (await d.request({ path: '/v1/data/notes.daily/versions' })).json.versions[0]
    return v?.state === 'registered' ? v : null
  }, 60_000)
  assert.match(version.fileId, /^\d+$/)
  assert.match(version.schemaId, /^\d+$/)
  const shown = await runCli(d.home, ['schema', 'show', 'notes.daily', '--json'])
  assert.equal(shown.code, 0, shown.stderr)
  assert.equal(JSON.parse(shown.stdout).data.id, version.schemaId)
  assert.equal(JSON.parse(shown.stdout).proof.source, 'chain')

  const rpcUrl = /dev chain (http:\/\/127\.0\.0\.1:\d+)/.exec(d.output())![1]!
  assert.equal(await d.stop(), 0)
  await assert.rejects(fetch(rpcUrl, { method: 'POST', headers: { 'content-type': 'application/json' }, body: '{"jsonrpc":"2.0","id":1,"method":"eth_blockNumber"}' }), 'anvil stopped with the daemon')
})
