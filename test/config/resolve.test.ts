import { test } from 'node:test'
import assert from 'node:assert/strict'
import { readFile, stat, writeFile } from 'node:fs/promises'
import { join } from 'node:path'
import { defaultConfig, resolveConfig, resolveConfigWithSources } from '../../src/config/resolve.js'
import { persistConfigChange } from '../../src/config/persist.js'
import { leafKeys } from '../../src/config/schema.js'
import { HearthError } from '../../src/errors.js'
import { tempDir } from '../support/tmp.js'

function configError (fn: () => unknown): HearthError {
  try { fn() } catch (err) {
    assert.ok(err instanceof HearthError, String(err))
    assert.equal(err.code, 'CONFIG_INVALID')
    return err
  }
  assert.fail('expected CONFIG_INVALID')
}

test('the schema\'s defaults make a complete configuration', () => {
  const c = defaultConfig()
  assert.equal(c.logLevel, 'info')
  assert.deepEqual(c.api.tcp, { enabled: false, host: '127.0.0.1', port: 8471 })
  assert.equal(c.storage.backend, 'embedded')
  assert.deepEqual(c.storage.kubo.headers, {})
  assert.equal(c.chain.preset, null)
  assert.deepEqual(c.sync.listen, ['/ip4/0.0.0.0/tcp/4011'])
  assert.equal(c.ingest.concurrency, 16)
  // every leaf key has a default and a description (the README table is generated from them)
  for (const { path, schema } of leafKeys()) {
    assert.ok('default' in schema, `${path} has a default`)
    assert.ok((schema.description ?? '').length > 0, `${path} has a description`)
  }
})

test('file, environment and --set apply in that order and each value names its source', () => {
  const { config, sources } = resolveConfigWithSources({
    file: { logLevel: 'debug', api: { tcp: { port: 9000 } } },
    env: { HEARTH_TCP_PORT: '9001', HEARTH_SYNC_LISTEN: '/ip4/127.0.0.1/tcp/0, /ip4/127.0.0.1/tcp/1' },
    sets: ['api.tcp.port=9002', 'sync.mdns=false']
  })
  assert.equal(config.logLevel, 'debug')
  assert.equal(config.api.tcp.port, 9002)
  assert.deepEqual(config.sync.listen, ['/ip4/127.0.0.1/tcp/0', '/ip4/127.0.0.1/tcp/1'])
  assert.equal(config.sync.mdns, false)
  assert.equal(sources.logLevel, 'file')
  assert.equal(sources['api.tcp.port'], '--set')
  assert.equal(sources['sync.listen'], 'env HEARTH_SYNC_LISTEN')
  assert.equal(sources['storage.backend'], 'default')
})

test('values the daemon would reject later are refused up front, naming the key and where the value came from', () => {
  let err = configError(() => resolveConfig({ env: { HEARTH_LOG_LEVEL: 'verbose' } }))
  assert.match(err.message, /logLevel must be equal to one of the allowed values.*"verbose" from env HEARTH_LOG_LEVEL/)
  err = configError(() => resolveConfig({ env: { HEARTH_TCP_PORT: '99999' } }))
  assert.match(err.message, /api\.tcp\.port must be <= 65535 \(got 99999 from env HEARTH_TCP_PORT\)/)
  err = configError(() => resolveConfig({ sets: ['upstream.baseUrl=42'] }))
  assert.match(err.message, /upstream\.baseUrl must be string,null \(got 42 from --set\)/)
  err = configError(() => resolveConfig({ file: { upstream: { baseUrl: 'ftp://example' } } }))
  assert.match(err.message, /upstream\.baseUrl must match pattern .* from file/)
  err = configError(() => resolveConfig({ file: { api: { tcpp: {} } } }))
  assert.match(err.message, /api\.tcpp is not a configuration key/)
  err = configError(() => resolveConfig({ file: { ingest: { concurrency: 1.5 } } }))
  assert.match(err.message, /ingest\.concurrency must be integer/)
  err = configError(() => resolveConfig({ file: { chain: { dataRegistry: '0x1234' } } }))
  assert.match(err.message, /chain\.dataRegistry must match pattern/)
  err = configError(() => resolveConfig({ file: [1, 2] }))
  assert.match(err.message, /must hold a JSON object/)
  // every problem is listed, not only the first
  err = configError(() => resolveConfig({ env: { HEARTH_LOG_LEVEL: 'verbose', HEARTH_TCP_PORT: '-1' } }))
  assert.equal((err.details?.reasons as string[]).length, 2)
})

test('persisting a change validates the whole file first and writes it atomically (0600)', async (t) => {
  const dir = await tempDir(t, 'hearth-config-')
  const file = join(dir, 'config.json')
  await writeFile(file, JSON.stringify({ sync: { mdns: false } }))
  const r = await persistConfigChange(file, { set: { 'api.tcp.port': 9100, logLevel: 'debug' } })
  assert.deepEqual(JSON.parse(await readFile(file, 'utf8')), { sync: { mdns: false }, api: { tcp: { port: 9100 } }, logLevel: 'debug' })
  assert.equal((await stat(file)).mode & 0o777, 0o600)
  assert.deepEqual(r.live, ['logLevel'])
  assert.deepEqual(r.restartRequired, ['api.tcp.port'])

  const before = await readFile(file, 'utf8')
  await assert.rejects(persistConfigChange(file, { set: { 'api.tcp.port': 70000 } }), (e: unknown) => e instanceof HearthError && e.code === 'CONFIG_INVALID')
  await assert.rejects(persistConfigChange(file, { set: { 'api.nope': 1 } }), /api\.nope is not a configuration key/)
  assert.equal(await readFile(file, 'utf8'), before, 'a refused change leaves the file as it was')

  await persistConfigChange(file, { set: { 'storage.kubo.headers.Authorization': 'Basic x' } })
  const unset = await persistConfigChange(file, { set: { 'api.tcp.port': undefined } }, { env: { HEARTH_LOG_LEVEL: 'warn' } })
  assert.equal(unset.next.config.api.tcp.port, 8471)
  assert.equal(unset.next.config.logLevel, 'warn')
  assert.deepEqual(JSON.parse(await readFile(file, 'utf8')).storage, { kubo: { headers: { Authorization: 'Basic x' } } })
  const overridden = await persistConfigChange(file, { set: { logLevel: 'error' } }, { env: { HEARTH_LOG_LEVEL: 'warn' } })
  assert.deepEqual(overridden.overridden, { logLevel: 'env HEARTH_LOG_LEVEL' })
})
