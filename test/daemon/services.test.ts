// The composition root as a list of services: a service that fails to start stops everything
// that had started before it (lock, database, storage, sync node, proxy, ingest, the unix
// listener), so the home can be used again at once.
import test from 'node:test'
import assert from 'node:assert/strict'
import { createServer, type AddressInfo } from 'node:net'
import { access } from 'node:fs/promises'
import { startDaemon } from '../../src/daemon/daemon.js'
import { defaultConfig } from '../../src/config/resolve.js'
import type { HearthConfig } from '../../src/config/types.js'
import { homeLayout } from '../../src/home.js'
import { silentLogger } from '../../src/log.js'
import { daemonRequest } from '../../src/client/daemon-client.js'
import { tempDir } from '../support/tmp.js'

function configWith (changes: { buildersPort?: number }): HearthConfig {
  const config = defaultConfig()
  // a real sync node on loopback only, so its stop is exercised too; never mDNS on a real interface
  config.sync = { ...config.sync, enabled: true, listen: ['/ip4/127.0.0.1/tcp/0'], mdns: false }
  if (changes.buildersPort !== undefined) config.builders = { ...config.builders, listen: `127.0.0.1:${changes.buildersPort}` }
  return config
}

const exists = async (path: string): Promise<boolean> => await access(path).then(() => true, () => false)

test('a service that fails to start stops the ones started before it; the home is usable again', async (t) => {
  const home = homeLayout(await tempDir(t))
  const taken = createServer()
  await new Promise<void>((resolve) => taken.listen(0, '127.0.0.1', resolve))
  t.after(() => { taken.close() })
  const port = (taken.address() as AddressInfo).port

  const lines: string[] = []
  // the builder listener starts last, after the owner's listeners and every other part
  await assert.rejects(startDaemon({ home, config: configWith({ buildersPort: port }), logger: silentLogger(), env: {}, print: (l) => lines.push(l) }))
  assert.ok(lines.some((l) => l.startsWith('sync      peer')), 'the sync node had started before the listener failed')
  assert.equal(lines.includes('ready'), false)
  assert.equal(await exists(home.lock), false, 'the daemon lock is released')
  assert.equal(await exists(home.socket), false, 'the unix socket is removed')

  // the lock, the index database and the embedded IPFS folders are free again
  const daemon = await startDaemon({ home, config: configWith({}), logger: silentLogger(), env: {} })
  try {
    await daemon.scanned
    const status = await daemonRequest(home.socket, { path: '/v1/status' })
    assert.equal(status.status, 200)
    const body = JSON.parse(Buffer.from(status.body).toString('utf8')) as Record<string, any>
    assert.deepEqual(Object.keys(body), ['owner', 'index', 'files', 'rejected', 'waiting', 'storage', 'search', 'schemaSources', 'chain', 'encryptionWorkers', 'sync', 'upstream', 'ingest', 'storageCheck', 'builders', 'dashboard', 'assistants', 'memorySettle', 'process'])
    assert.equal(body.storage.backend, 'embedded')
    assert.equal(body.storage.ok, true)
    assert.equal(body.chain.configured, false)
    assert.equal(body.sync.enabled, true)
    assert.equal(body.ingest.scan.done, true)
    assert.equal(typeof body.memorySettle.settles, 'number', 'the idle collection reports its count (src/daemon/memory-settle.ts)')
  } finally {
    await daemon.stop()
  }
  assert.equal(await exists(home.lock), false)
})
