// /health first: a real daemon answers `/health` while a part is still starting (here the chain
// connection, held up by an RPC endpoint that does not answer yet), a request for the rest waits
// at the starting gate and then gets DAEMON_STARTING with Retry-After (or is served once the part
// is up), and a stop in the middle of the start leaves nothing behind.
import test, { type TestContext } from 'node:test'
import assert from 'node:assert/strict'
import { createServer, type IncomingMessage, type ServerResponse } from 'node:http'
import type { AddressInfo } from 'node:net'
import { access } from 'node:fs/promises'
import { launchDaemon, startDaemon } from '../../src/daemon/daemon.js'
import { defaultConfig } from '../../src/config/resolve.js'
import type { HearthConfig } from '../../src/config/types.js'
import { homeLayout, type HomeLayout } from '../../src/home.js'
import { silentLogger } from '../../src/log.js'
import { daemonRequest } from '../../src/client/daemon-client.js'
import { tempDir } from '../support/tmp.js'
import { waitFor } from '../support/data-files.js'
import { spawnSync } from 'node:child_process'
import { NODE_ARGS, REPO_ROOT, runCli, startDaemonProcess, testEnv } from '../support/daemon.js'

const exists = async (path: string): Promise<boolean> => await access(path).then(() => true, () => false)

/**
 * A chain RPC endpoint (the public network's stand-in) that holds every request until released,
 * then answers each with a JSON-RPC error, so the chain connection's start waits for it.
 */
async function heldRpc (t: TestContext): Promise<{ url: string; held: () => number; release: () => void }> {
  const waiting: ServerResponse[] = []
  let released = false
  const answer = (res: ServerResponse): void => {
    res.writeHead(200, { 'content-type': 'application/json' }).end(JSON.stringify({ jsonrpc: '2.0', id: 1, error: { code: -32601, message: 'not here' } }))
  }
  const server = createServer((req: IncomingMessage, res: ServerResponse) => {
    req.resume()
    req.on('end', () => { if (released) answer(res); else waiting.push(res) })
  })
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve))
  t.after(async () => {
    released = true
    for (const res of waiting.splice(0)) answer(res)
    server.closeAllConnections()
    await new Promise((resolve) => server.close(resolve))
  })
  return {
    url: `http://127.0.0.1:${(server.address() as AddressInfo).port}`,
    held: () => waiting.length,
    release: () => { released = true; for (const res of waiting.splice(0)) answer(res) }
  }
}

function configWithChain (rpcUrl: string): HearthConfig {
  const config = defaultConfig()
  config.sync = { ...config.sync, enabled: false }
  config.ui = { ...config.ui, enabled: false }
  config.chain = {
    ...config.chain,
    preset: 'custom',
    rpcUrl,
    chainId: 31337,
    dataRegistry: '0x5FbDB2315678afecb367f032d93F642f64180aa3',
    dataRefinerRegistry: '0xe7f1725E7734CE288F8367e1Bb143E90bb3F0512',
    pollIntervalMs: 60_000
  }
  return config
}

async function get (home: HomeLayout, path: string): Promise<{ status: number; json: any; headers: Record<string, unknown> }> {
  const res = await daemonRequest(home.socket, { path, timeoutMs: 30_000, retryWhileStarting: false })
  return { status: res.status, json: res.json, headers: res.headers }
}

const POST_BODY = { username: 'early', bio: 'posted while the daemon starts' }

/** A daemon launched on a new home whose chain connection waits on the held RPC endpoint. */
async function launchHeld (t: TestContext, startingWaitMs?: number): Promise<{ home: HomeLayout; rpc: Awaited<ReturnType<typeof heldRpc>>; daemon: Awaited<ReturnType<typeof launchDaemon>> }> {
  const home = homeLayout(await tempDir(t))
  const rpc = await heldRpc(t)
  const daemon = await launchDaemon({ home, config: configWithChain(rpc.url), logger: silentLogger(), env: {}, ...(startingWaitMs !== undefined ? { startingWaitMs } : {}) })
  t.after(async () => { await daemon.stop() })
  await waitFor('the chain connection to wait on its RPC', async () => rpc.held() > 0, 60_000)
  return { home, rpc, daemon }
}

test('a real daemon answers /health while a slow part starts; other routes answer DAEMON_STARTING, then serve once it is up', async (t) => {
  const { home, rpc, daemon } = await launchHeld(t, 300)

  const health = await get(home, '/health')
  assert.equal(health.status, 200)
  assert.equal(health.json.status, 'starting')
  assert.equal(health.json.starting, 'chainConnection')
  assert.deepEqual(health.json.started, ['home', 'api', 'staleTemps', 'fileWriting', 'database', 'storage', 'search'])
  assert.match(health.json.owner, /^0x[0-9a-fA-F]{40}$/, 'the identity is loaded before the chain')
  const status = await get(home, '/v1/status')
  assert.equal(status.status, 200)
  assert.equal(status.json.status, 'starting')
  const cli = await runCli(home, ['status'])
  assert.equal(cli.code, 0, cli.stderr)
  assert.match(cli.stdout, /daemon\s+starting chainConnection \(up: home, api, staleTemps, fileWriting, database, storage, search\)/)

  const early = await daemonRequest(home.socket, { method: 'POST', path: '/v1/data/instagram.profile', body: POST_BODY, retryWhileStarting: false })
  assert.equal(early.status, 503)
  assert.equal(early.json.error.errorCode, 'DAEMON_STARTING')
  assert.equal(early.json.error.details.starting, 'chainConnection')
  assert.equal(early.headers['retry-after'], '1')
  const unknown = await get(home, '/v1/no-such-route')
  assert.equal(unknown.json.error.errorCode, 'DAEMON_STARTING', 'the full route table decides what exists')

  rpc.release()
  const ready = await daemon.ready
  assert.equal((await get(home, '/health')).json.status, 'ok')
  const posted = await daemonRequest(home.socket, { method: 'POST', path: '/v1/data/instagram.profile', body: POST_BODY })
  assert.equal(posted.status, 201, posted.body.toString())
  assert.equal((await get(home, '/v1/no-such-route')).json.error.errorCode, 'NOT_FOUND')
  await ready.scanned
})

test('a request that arrives while a part starts waits at the gate and is served once the daemon is up', async (t) => {
  const { home, rpc, daemon } = await launchHeld(t, 60_000)
  const posting = daemonRequest(home.socket, { method: 'POST', path: '/v1/data/instagram.profile', body: POST_BODY, timeoutMs: 60_000 })
  await new Promise((resolve) => setTimeout(resolve, 200))
  rpc.release()
  const posted = await posting
  assert.equal(posted.status, 201, posted.body.toString())
  assert.equal(posted.json.status, 'stored')
})

test('a stop during the start stops what had started and leaves nothing behind; the home starts again', async (t) => {
  const { home, rpc, daemon } = await launchHeld(t)
  assert.equal(await exists(home.lock), true)

  const stopping = daemon.stop()
  // the part that is starting finishes its start, is stopped, and nothing after it starts
  rpc.release()
  await stopping
  await assert.rejects(daemon.ready, (err: any) => err.code === 'DAEMON_STOPPED')
  assert.equal(await exists(home.lock), false, 'the daemon lock is released')
  assert.equal(await exists(home.socket), false, 'the unix socket is removed')
  await assert.rejects(daemonRequest(home.socket, { path: '/health', timeoutMs: 2_000 }))

  // the lock, the index database and the embedded IPFS folders are free again
  const config = configWithChain(rpc.url)
  config.chain = { ...config.chain, preset: null }
  const again = await startDaemon({ home, config, logger: silentLogger(), env: {} })
  try {
    assert.equal((await get(home, '/health')).json.status, 'ok')
  } finally {
    await again.stop()
  }
})

test('hearth daemon: SIGTERM while a part starts exits 0 and leaves nothing behind; a part failing behind /health exits 1 with its error', async (t) => {
  const rpc = await heldRpc(t)
  const chainArgs = ['--set', 'chain.preset="custom"', '--set', `chain.rpcUrl="${rpc.url}"`, '--set', 'chain.chainId=31337',
    '--set', 'chain.dataRegistry="0x5FbDB2315678afecb367f032d93F642f64180aa3"', '--set', 'chain.dataRefinerRegistry="0xe7f1725E7734CE288F8367e1Bb143E90bb3F0512"']
  const d = await startDaemonProcess(t, { args: chainArgs, untilHealth: true })
  await waitFor('the chain connection to wait on its RPC', async () => rpc.held() > 0, 60_000)
  assert.equal((await d.request({ path: '/health' })).json.status, 'starting')
  d.child.kill('SIGTERM')
  rpc.release()
  assert.equal(await d.exited, 0, d.output())
  assert.match(d.output(), /SIGTERM: shutting down\nstopped\n/)
  assert.doesNotMatch(d.output(), /^ready$/m)
  assert.equal(await exists(d.home.lock), false)
  assert.equal(await exists(d.home.socket), false)

  // an unusable chain configuration is found when the chain connection starts, behind /health
  const broken = spawnSync(process.execPath, [...NODE_ARGS, 'daemon', '--set', 'chain.preset="custom"', '--set', `chain.rpcUrl="${rpc.url}"`],
    { cwd: REPO_ROOT, env: { ...testEnv(), HEARTH_HOME: d.home.root }, encoding: 'utf8', timeout: 120_000 })
  assert.equal(broken.status, 1, broken.stdout + broken.stderr)
  assert.match(broken.stderr, /CONFIG_INVALID/)
  assert.equal(await exists(d.home.lock), false)
  assert.equal(await exists(d.home.socket), false)
})
