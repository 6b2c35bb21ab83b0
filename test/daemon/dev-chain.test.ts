// `hearth daemon --dev-chain`: the whole protocol on one machine. The daemon starts anvil with our
// contracts, registers what it stores, and `hearth schema add` registers the definition on chain.
import { test } from 'node:test'
import assert from 'node:assert/strict'
import { spawn } from 'node:child_process'
import { readdir, readFile, writeFile } from 'node:fs/promises'
import { basename, join } from 'node:path'
import { startDaemonProcess, runCli } from '../support/daemon.js'
import { waitFor } from '../support/data-files.js'
import { tempDir } from '../support/tmp.js'
import { anvilBinaryPath } from '../../src/chain/dev-chain.js'
import { endStaleAnvil } from '../../src/chain/dev-chain-process.js'
import { silentLogger } from '../../src/log.js'

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

/** The pids of anvil processes running on `stateFile` (from their command lines). */
async function anvilsOn (stateFile: string): Promise<number[]> {
  const found: number[] = []
  for (const name of await readdir('/proc')) {
    if (!/^\d+$/.test(name)) continue
    const argv = (await readFile(`/proc/${name}/cmdline`, 'utf8').catch(() => '')).split('\0')
    if (basename(argv[0] ?? '') === 'anvil' && argv.includes(stateFile)) found.push(Number(name))
  }
  return found
}

test('a SIGKILLed --dev-chain daemon takes its anvil along, and a start ends an anvil an earlier run of its home left', async (t) => {
  const d = await startDaemonProcess(t, { args: ['--dev-chain'] })
  const stateFile = join(d.home.root, 'devchain', 'anvil-state.json')
  const [first] = await anvilsOn(stateFile)
  assert.ok(first !== undefined, 'anvil runs on the home\'s state file')
  process.kill(d.child.pid!, 'SIGKILL') // the daemon alone, not its process group
  await d.exited
  await waitFor('anvil gone with its daemon', async () => (await anvilsOn(stateFile)).length === 0, 30_000)

  // an anvil left on this home's state (as an older daemon left it): the next start ends it
  const stale = spawn(anvilBinaryPath(), ['--host', '127.0.0.1', '--port', '0', '--quiet', '--state', stateFile], { detached: true, stdio: 'ignore' })
  stale.unref()
  t.after(() => { try { process.kill(stale.pid!, 'SIGKILL') } catch {} })
  await writeFile(join(d.home.root, 'devchain', 'anvil.pid'), `${stale.pid!}\n`)
  await waitFor('stale anvil up', async () => (await anvilsOn(stateFile)).includes(stale.pid!), 30_000)
  const again = await startDaemonProcess(t, { home: d.home.root, args: ['--dev-chain'] })
  const running = await anvilsOn(stateFile)
  assert.equal(running.length, 1, `one anvil on the state file: ${running.join(', ')}`)
  assert.notEqual(running[0], stale.pid)
  assert.equal(await again.stop(), 0)
  await waitFor('anvil stopped with the daemon', async () => (await anvilsOn(stateFile)).length === 0, 30_000)
})

test('a pid file naming another process (not anvil on this state file) ends nothing', async (t) => {
  const dir = await tempDir(t)
  const sleeper = spawn('sleep', ['60'], { stdio: 'ignore' })
  t.after(() => { sleeper.kill('SIGKILL') })
  await writeFile(join(dir, 'anvil.pid'), `${sleeper.pid!}\n`)
  assert.equal(await endStaleAnvil(dir, join(dir, 'anvil-state.json'), silentLogger()), false)
  assert.equal(sleeper.exitCode, null)
  assert.equal(sleeper.signalCode, null)
  process.kill(sleeper.pid!, 0)
})
