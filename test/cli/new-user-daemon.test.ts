// A new user's failures on start and with storage away: one clear line, the reasons, what was
// queued; and storage migrate progress that stays within its total.
import assert from 'node:assert/strict'
import { createServer } from 'node:net'
import { PassThrough } from 'node:stream'
import { test } from 'node:test'
import { EXIT } from '../../src/cli/command.js'
import { progressPrinter } from '../../src/cli/commands/storage.js'
import { restoreAdvice } from '../../src/cli/commands/sync.js'
import { homeStorageDeps } from '../../src/cli/home-storage.js'
import { homeLayout } from '../../src/home.js'
import { daemonUntilExit, runCli, startDaemonProcess } from '../support/daemon.js'
import { tempDir } from '../support/tmp.js'
import { startIpfsDaemon } from '../support/ipfs-daemon.js'

test('a busy sync port is one clear line, not a stack trace', async (t) => {
  const holder = createServer()
  await new Promise<void>((resolve) => holder.listen(0, '127.0.0.1', resolve))
  t.after(() => { holder.close() })
  const port = (holder.address() as { port: number }).port
  const r = await daemonUntilExit(await tempDir(t), { HEARTH_SYNC: 'true', HEARTH_SYNC_LISTEN: `/ip4/127.0.0.1/tcp/${port}` })
  assert.equal(r.code, EXIT.FAILURE)
  assert.equal(r.stderr, `error CONFIG_INVALID: cannot listen for sync on /ip4/127.0.0.1/tcp/${port}: the port is already in use (another Hearth daemon, or another program); set sync.listen (HEARTH_SYNC_LISTEN) to a free address, or sync.enabled false\n`)
})

test('the custom-chain error lists its reasons', async (t) => {
  const r = await daemonUntilExit(await tempDir(t), {}, ['--set', 'chain.preset=custom'])
  assert.equal(r.code, EXIT.FAILURE)
  assert.match(r.stderr, /^error CONFIG_INVALID: invalid chain configuration\n/)
  for (const reason of ['rpcUrl must be an http(s) URL', 'chainId must be a positive integer', 'dataRegistry must be an address', 'dataRefinerRegistry must be an address']) {
    assert.ok(r.stderr.includes(`\n  - ${reason}\n`), reason)
  }
})

test('put with storage down prints what was queued, and versions lists it', async (t) => {
  const ipfs = await startIpfsDaemon(t)
  const d = await startDaemonProcess(t, { env: { HEARTH_STORAGE: 'kubo', HEARTH_KUBO_URL: ipfs.apiUrl }, args: ['--set', 'storage.kubo.timeoutMs=2000'] })
  await ipfs.stop()
  const put = await runCli(d.home, ['put', 'instagram.profile', '-', '--collected-at', '2026-03-01T00:00:00Z'], '{"username":"offline"}')
  assert.equal(put.code, EXIT.OK, put.stderr)
  assert.match(put.stdout, /^queued instagram\.profile 2026-03-01T00:00:00(\.000)?Z\n {2}written to instagram\.profile\/2026-03-01T00-00-00(\.000)?Z\.json\n {2}storage is unavailable \(/)
  const versions = await runCli(d.home, ['versions', 'instagram.profile'])
  assert.equal(versions.code, EXIT.OK, versions.stderr)
  assert.match(versions.stdout, /^2026-03-01T00:00:00(\.000)?Z {2}waiting-storage /m)
  assert.match(versions.stdout, /^ {4}storage unavailable: /m)
  await d.stop()
})

test('storage migrate progress counts what it copies, never passes 100 %, and updates in place on a terminal', async (t) => {
  const d = await startDaemonProcess(t)
  for (let i = 0; i < 3; i++) {
    const r = await runCli(d.home, ['put', 'instagram.profile', '-'], JSON.stringify({ username: `u${i}` }))
    assert.equal(r.code, EXIT.OK, r.stderr)
  }
  await d.stop()
  const home = homeLayout(d.home.root)
  let listed = 0
  for await (const _cid of homeStorageDeps.listCids(home)) listed++
  assert.ok(listed > 3, 'data and schema definitions')
  assert.equal(await homeStorageDeps.countCids!(home), listed)

  const stderr = Object.assign(new PassThrough(), { isTTY: true })
  let out = ''
  stderr.on('data', (c: Buffer) => { out += c.toString() })
  const progress = progressPrinter({ stderr }, 4)
  for (let done = 1; done <= 6; done++) progress.update({ done, total: 4, cid: 'x', action: 'copied' } as never)
  progress.finish()
  assert.ok(out.startsWith('\r\x1b[K'), 'rewritten in place')
  assert.ok(!out.includes('\n') || out.indexOf('\n') === out.length - 1, 'one line, ended once')
  for (const m of out.matchAll(/(\d+)\/(\d+) CID\(s\) done \((\d+) %\)/g)) {
    assert.ok(Number(m[1]) <= Number(m[2]) && Number(m[3]) <= 100, m[0])
  }
  assert.match(out, /4\/4 CID\(s\) done \(100 %\)\n$/)
})

test('a restore whose ciphertexts no storage has says what to do', () => {
  const advice = restoreAdvice([{ errorCode: 'STORAGE_NOT_FOUND' }, { errorCode: 'STORAGE_NOT_FOUND' }, { errorCode: 'SCHEMA_NOT_FOUND' }])
  assert.match(advice[0]!, /^2 ciphertext\(s\) are in no storage, connected device or gateway this device reaches/)
  assert.ok(advice.some((l) => l.includes('restore.gateways')))
  assert.ok(advice.some((l) => l.includes('hearth peers add')))
  assert.ok(advice.some((l) => l.includes('hearth storage migrate --to kubo')))
  assert.ok(advice.some((l) => l.includes('run `hearth restore` again')))
  assert.match(advice.at(-1)!, /^1 file\(s\) wait for their schema/)
  assert.match(restoreAdvice([{ errorCode: 'STORAGE_FULL' }])[0]!, /disk is full/)
  assert.match(restoreAdvice([{ errorCode: 'STORAGE_VERIFY_FAILED' }])[0]!, /bytes that do not match the CID, and nothing was stored/)
  assert.deepEqual(restoreAdvice([]), [])
})
