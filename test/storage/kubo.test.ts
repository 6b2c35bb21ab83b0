// The kubo backend against a real Kubo daemon (built from its Go module), on loopback, no public network.
import { before, test } from 'node:test'
import assert from 'node:assert/strict'
import { randomBytes } from 'node:crypto'
import { createServer, request, type Server } from 'node:http'
import { join } from 'node:path'
import { createKuboStorage } from '../../src/storage/kubo.js'
import { createEmbeddedStorage } from '../../src/storage/embedded.js'
import { isHearthError } from '../../src/errors.js'
import { canonicalCid } from '../../src/storage/cid.js'
import { ensureIpfsInstalled, startIpfsDaemon, type IpfsDaemon } from '../support/ipfs-daemon.js'
import { tempDir } from '../support/tmp.js'

// A fresh checkout builds Kubo on first use; that can take many minutes, outside test timeouts.
before(async () => { await ensureIpfsInstalled() }, { timeout: 60 * 60_000 })

const ABSENT = 'bafkreigh2akiscaildcqabsyg3dfr6chu3fgpregiymsck7e7aqa4s52zy'

/** `POST /api/v0/cat` with plain fetch: the node's own answer, not read through kubo-rpc-client. */
async function rpcCat (daemon: IpfsDaemon, cid: string): Promise<Buffer> {
  const res = await fetch(`${daemon.apiUrl}/api/v0/cat?arg=${cid}`, { method: 'POST', signal: AbortSignal.timeout(30_000) })
  assert.equal(res.status, 200)
  return Buffer.from(await res.arrayBuffer())
}

test('kubo backend on a real Kubo node', async (t) => {
  const daemon = await startIpfsDaemon(t)
  const kubo = createKuboStorage({ url: daemon.apiUrl, timeoutMs: 3000 })
  t.after(async () => { await kubo.stop() })
  const dir = await tempDir(t)
  const embedded = await createEmbeddedStorage({ blocksDir: join(dir, 'blocks'), datastoreDir: join(dir, 'datastore') })
  t.after(async () => { await embedded.stop() })

  await t.test('the same bytes give the same CID on both backends, and the node serves them', async () => {
    for (const size of [0, 1, 1024, 262_144, 262_145, 3_000_001]) {
      const bytes = randomBytes(size)
      const viaKubo = await kubo.add(bytes)
      assert.equal(viaKubo, await embedded.add(bytes), `size ${size}`)
      assert.deepEqual(await rpcCat(daemon, viaKubo), bytes, `RPC cat of ${size} bytes`)
      assert.deepEqual(Buffer.from(await kubo.get(viaKubo)), bytes)
      assert.equal(await kubo.has(viaKubo), true, 'added content is pinned on the node')
    }
  })

  await t.test('`ipfs cat` on that node reads what the kubo backend stored', async () => {
    const bytes = randomBytes(3_000_000)
    const cid = await kubo.add(bytes)
    assert.deepEqual(Buffer.from(await daemon.catWithCli(cid)), bytes)
  })

  await t.test('has, pin, unpin and missing content', async () => {
    const cid = await kubo.add(randomBytes(5000))
    await kubo.unpin(cid)
    assert.equal(await kubo.has(cid), false, 'has means pinned on the node')
    await kubo.unpin(cid) // already unpinned: no error
    await kubo.unpin(ABSENT) // unknown: no error
    await kubo.pin(cid)
    assert.equal(await kubo.has(cid), true)
    assert.equal(await kubo.has(ABSENT), false)
    assert.equal(await kubo.has('garbage'), false)
    const started = Date.now()
    await assert.rejects(kubo.get(ABSENT), (err) => isHearthError(err, 'STORAGE_NOT_FOUND') && err.message.includes(ABSENT))
    assert.ok(Date.now() - started < 3000 + 2000, 'a missing CID is reported within the configured timeout')
    await assert.rejects(kubo.get('garbage'), (err) => isHearthError(err, 'INVALID_ARGUMENT'))
  })

  await t.test('a node that imports with other settings is refused, and its stray pin removed', async (t) => {
    const proxy = await rpcProxy(daemon.apiUrl, { rewrite: (path) => path.replace('chunker=size-262144', 'chunker=size-1024') })
    t.after(() => { proxy.server.close() })
    const skewed = createKuboStorage({ url: proxy.url, timeoutMs: 3000 })
    const bytes = randomBytes(5000)
    let got = ''
    await assert.rejects(skewed.add(bytes), (err) => {
      got = String((err as { details?: { got?: unknown } }).details?.got)
      return isHearthError(err, 'STORAGE_VERIFY_FAILED') && err.details?.expected === canonicalCid(err.details?.expected as string)
    })
    assert.ok(got.startsWith('bafybei'), 'the node made a multi-chunk DAG')
    assert.equal(await kubo.has(got), false, 'the stray CID is not left pinned')
    assert.equal(await kubo.add(bytes), (await embedded.add(bytes)), 'the honest path still agrees')
  })

  await t.test('health names the node', async () => {
    const h = await kubo.health()
    assert.equal(h.ok, true)
    assert.match(h.detail ?? '', new RegExp(`Kubo RPC at ${daemon.apiUrl.replace(/\./g, '\\.')} \\(version`))
  })

  await t.test('the node only ever used loopback sockets', async () => {
    const sockets = await daemon.sockets()
    const apiPort = Number(new URL(daemon.apiUrl).port)
    assert.ok(sockets.some((s) => s.local.port === apiPort && s.local.address === '127.0.0.1'), 'the RPC listener is seen')
    assert.deepEqual(sockets.filter((s) => !s.loopbackOnly), [])
  })

  await t.test('auth headers reach the node; a refused request is STORAGE_UNAVAILABLE without the secret', async (t) => {
    const secret = 'Basic ' + Buffer.from('hearth:' + randomBytes(8).toString('hex')).toString('base64')
    const proxy = await rpcProxy(daemon.apiUrl, { authorization: secret })
    t.after(() => { proxy.server.close() })
    const anonymous = createKuboStorage({ url: proxy.url, timeoutMs: 3000 })
    await assert.rejects(anonymous.add(randomBytes(10)), (err) =>
      isHearthError(err, 'STORAGE_UNAVAILABLE') && /HTTP 401/.test(err.message) && err.message.includes(proxy.url))
    assert.equal((await anonymous.health()).ok, false)
    const authorized = createKuboStorage({ url: proxy.url, headers: { authorization: secret }, timeoutMs: 3000 })
    const bytes = randomBytes(2000)
    const cid = await authorized.add(bytes)
    assert.deepEqual(Buffer.from(await authorized.get(cid)), bytes)
    const wrong = createKuboStorage({ url: proxy.url, headers: { authorization: 'Basic d3Jvbmc6d3Jvbmc=' }, timeoutMs: 3000 })
    await assert.rejects(wrong.get(cid), (err) => isHearthError(err, 'STORAGE_UNAVAILABLE') && !err.message.includes('d3Jvbmc6d3Jvbmc'))
  })
})

test('node down, unresponsive and restarted mid-ingest: clear errors, nothing lost, nothing stored twice', async (t) => {
  const daemon = await startIpfsDaemon(t)
  const timeoutMs = 1500
  const kubo = createKuboStorage({ url: daemon.apiUrl, timeoutMs })
  const before = new Map<string, Buffer>()
  for (let i = 0; i < 5; i++) { const b = randomBytes(3000 + i); before.set(await kubo.add(b), b) }

  await daemon.stop()
  let started = Date.now()
  await assert.rejects(kubo.add(randomBytes(10)), (err) =>
    isHearthError(err, 'STORAGE_UNAVAILABLE') && err.message.includes(daemon.apiUrl) && err.stack !== undefined && !err.message.includes('\n    at '))
  assert.ok(Date.now() - started < timeoutMs, 'a refused connection fails at once')
  await assert.rejects(kubo.get([...before.keys()][0]), (err) => isHearthError(err, 'STORAGE_UNAVAILABLE'))
  await assert.rejects(kubo.has([...before.keys()][0]), (err) => isHearthError(err, 'STORAGE_UNAVAILABLE'))
  const down = await kubo.health()
  assert.equal(down.ok, false)
  assert.match(down.detail ?? '', /unreachable/)

  await daemon.restart()
  for (const [cid, bytes] of before) assert.deepEqual(Buffer.from(await kubo.get(cid)), bytes, 'content survives a restart')

  // A frozen node accepts connections but never answers: the configured timeout bounds every call.
  daemon.pause()
  started = Date.now()
  await assert.rejects(kubo.add(randomBytes(10)), (err) => isHearthError(err, 'STORAGE_UNAVAILABLE') && /did not answer add within 1500 ms/.test(err.message))
  const waited = Date.now() - started
  assert.ok(waited >= timeoutMs - 50 && waited < timeoutMs + 3000, `timed out after ${waited} ms`)
  assert.equal((await kubo.health()).ok, false)
  daemon.resume()

  // Ingest-like queue: four workers add files and put a failed one back for a later retry; after
  // 20 files are stored the node is SIGKILLed (with adds in flight) and started again.
  const files = Array.from({ length: 60 }, (_, i) => randomBytes(1000 + i * 997))
  const pending = files.map((_, i) => i)
  const stored = new Map<number, string>()
  let failures = 0
  let restarted: Promise<void> | undefined
  const deadline = Date.now() + 180_000
  const worker = async (): Promise<void> => {
    while (pending.length > 0 && Date.now() < deadline) {
      const i = pending.shift()!
      try {
        stored.set(i, await kubo.add(files[i]))
        if (stored.size === 20 && restarted === undefined) {
          restarted = daemon.stop({ kill: true }).then(async () => { await daemon.restart() })
        }
      } catch (err) {
        assert.ok(isHearthError(err, 'STORAGE_UNAVAILABLE'), `only unavailability, got ${String(err)}`)
        failures++
        pending.push(i)
        await new Promise((resolve) => setTimeout(resolve, 200))
      }
    }
  }
  await Promise.all([worker(), worker(), worker(), worker()])
  await restarted
  assert.equal(stored.size, files.length)
  assert.ok(failures > 0, 'the kill did interrupt the queue')
  for (const [i, cid] of stored) {
    assert.deepEqual(Buffer.from(await kubo.get(cid)), files[i])
    assert.equal(await kubo.has(cid), true)
  }
  for (const [cid, bytes] of before) assert.deepEqual(Buffer.from(await kubo.get(cid)), bytes)
  // Retried adds (some of which reached the node before the kill) map to the same CIDs: every file
  // is exactly one recursive pin on the node.
  const res = await fetch(`${daemon.apiUrl}/api/v0/pin/ls?type=recursive`, { method: 'POST' })
  const listed = new Set(Object.keys((await res.json() as { Keys: Record<string, unknown> }).Keys).map((c) => canonicalCid(c)))
  for (const cid of [...stored.values(), ...before.keys()]) assert.ok(listed.has(cid), `${cid} is pinned`)
  assert.equal(new Set(stored.values()).size, files.length, 'one CID per file')
})

/**
 * A reverse proxy in front of the node, as a user might run one: it can demand an Authorization
 * header (like nginx with basic auth) and rewrite request URLs (standing in for a node whose own
 * import settings differ from what was asked).
 */
async function rpcProxy (target: string, opts: { authorization?: string; rewrite?: (path: string) => string }): Promise<{ server: Server; url: string }> {
  const upstream = new URL(target)
  const server = createServer((req, res) => {
    if (opts.authorization !== undefined && req.headers.authorization !== opts.authorization) {
      res.writeHead(401, { 'content-type': 'text/plain' }).end('unauthorized')
      req.resume()
      return
    }
    const path = opts.rewrite !== undefined ? opts.rewrite(req.url ?? '/') : req.url
    const fwd = request({ host: upstream.hostname, port: upstream.port, method: req.method, path, headers: req.headers }, (up) => {
      res.writeHead(up.statusCode ?? 502, up.headers)
      up.pipe(res)
    })
    fwd.on('error', () => { res.destroy() })
    req.pipe(fwd)
  })
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve))
  const addr = server.address()
  return { server, url: `http://127.0.0.1:${typeof addr === 'object' && addr !== null ? addr.port : 0}` }
}
