// The Pinning Service API client against services that misbehave (a real one is in cluster.test.ts):
// each answer is checked before it is believed, every request has a deadline, the token is sent
// as a bearer token and never shown.
import { test } from 'node:test'
import assert from 'node:assert/strict'
import { createServer, type IncomingMessage, type ServerResponse } from 'node:http'
import { createPinningClient } from '../../src/pinning/client.js'
import { isHearthError } from '../../src/errors.js'
import { freeLoopbackPort } from '../support/ipfs-daemon.js'

const CID = 'bafkreigh2akiscaildcqabsyg3dfr6chu3fgpregiymsck7e7aqa4s52zy'

async function service (t: { after: (fn: () => void) => void }, handle: (req: IncomingMessage, res: ServerResponse) => void): Promise<string> {
  const server = createServer(handle)
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve))
  t.after(() => { server.closeAllConnections(); server.close() })
  return `http://user:secret@127.0.0.1:${(server.address() as { port: number }).port}/api/v1/`
}

function pinStatus (status: string): object {
  return { requestid: 'r1', status, created: new Date().toISOString(), pin: { cid: CID }, delegates: [] }
}

test('a well-formed exchange: bearer token, the API paths, states read back', async (t) => {
  const seen: string[] = []
  const endpoint = await service(t, (req, res) => {
    seen.push(`${req.method} ${req.url} ${req.headers.authorization}`)
    req.resume()
    if (req.method === 'POST' && req.url === '/api/v1/pins/forgotten') { res.writeHead(404).end(JSON.stringify({ error: { reason: 'NOT_FOUND' } })); return }
    if (req.method === 'POST') { res.writeHead(202, { 'content-type': 'application/json' }).end(JSON.stringify(pinStatus('queued'))); return }
    if (req.method === 'DELETE') { res.writeHead(202).end(); return }
    if (req.url?.startsWith('/api/v1/pins?')) { res.writeHead(200).end(JSON.stringify({ count: 1, results: [pinStatus('pinned')] })); return }
    res.writeHead(404).end(JSON.stringify({ error: { reason: 'NOT_FOUND' } }))
  })
  const client = createPinningClient({ endpoint, token: 'tok-123', timeoutMs: 2000 })
  assert.equal(client.endpoint.includes('secret'), false, 'credentials in the URL are never shown')
  assert.deepEqual(await client.add({ cid: CID, origins: ['/ip4/127.0.0.1/tcp/4001/p2p/12D3KooWexample'] }), { requestId: 'r1', status: 'queued', cid: CID, info: null })
  assert.equal((await client.byCids([CID]))[0].status, 'pinned')
  assert.equal(await client.get('gone'), null)
  await client.remove('r1')
  assert.equal((await client.replace('r1', { cid: CID })).status, 'queued')
  assert.equal((await client.replace('forgotten', { cid: CID })).requestId, 'r1', 'a request the service forgot is added anew')
  assert.match(seen[0], /^POST \/api\/v1\/pins Bearer tok-123$/)
  assert.match(seen[1], /^GET \/api\/v1\/pins\?cid=bafkrei\w+&limit=1000&status=queued%2Cpinning%2Cpinned%2Cfailed Bearer tok-123$/)
  assert.deepEqual(seen.slice(4).map((s) => s.split(' ').slice(0, 2).join(' ')), ['POST /api/v1/pins/r1', 'POST /api/v1/pins/forgotten', 'POST /api/v1/pins'], 'replace is POST /pins/{requestid}, never a DELETE')
  await assert.rejects(client.byCids(Array.from({ length: 11 }, () => CID)), (err) => isHearthError(err, 'INVALID_ARGUMENT'))
})

test('hostile or failing answers become clear, stable errors', async (t) => {
  const cases: Array<{ what: string; handle: (req: IncomingMessage, res: ServerResponse) => void; code: 'PINNING_AUTH_REFUSED' | 'PINNING_BAD_RESPONSE' | 'PINNING_UNAVAILABLE'; message: RegExp; timeoutMs?: number }> = [
    { what: 'refused token', handle: (_q, s) => { s.writeHead(401).end('{"error":{"reason":"UNAUTHORIZED"}}') }, code: 'PINNING_AUTH_REFUSED', message: /refused the access token \(HTTP 401\)/ },
    { what: 'not JSON', handle: (_q, s) => { s.writeHead(202).end('<html>hello</html>') }, code: 'PINNING_BAD_RESPONSE', message: /not JSON/ },
    { what: 'wrong shape', handle: (_q, s) => { s.writeHead(202).end('{"requestid": 5, "status": "pinned", "pin": {"cid": "x"}}') }, code: 'PINNING_BAD_RESPONSE', message: /not a pin status/ },
    { what: 'unknown state', handle: (_q, s) => { s.writeHead(202).end(JSON.stringify(pinStatus('maybe'))) }, code: 'PINNING_BAD_RESPONSE', message: /not a pin status/ },
    { what: 'server error', handle: (_q, s) => { s.writeHead(503).end('{"error":{"reason":"BUSY","details":"try later"}}') }, code: 'PINNING_UNAVAILABLE', message: /HTTP 503\): BUSY: try later/ },
    { what: 'a bad request', handle: (_q, s) => { s.writeHead(400).end('{"error":{"reason":"BAD_CID"}}') }, code: 'PINNING_BAD_RESPONSE', message: /refused add \(HTTP 400\): BAD_CID/ },
    { what: 'endless body', handle: (_q, s) => { s.writeHead(202); const chunk = Buffer.alloc(1 << 20, 32); const pump = (): void => { while (s.write(chunk)) { /* fill */ } }; s.on('drain', pump); pump() }, code: 'PINNING_BAD_RESPONSE', message: /more than/, timeoutMs: 20_000 },
    { what: 'no answer', handle: () => { /* never answers */ }, code: 'PINNING_UNAVAILABLE', message: /did not answer add within 500 ms/ }
  ]
  for (const c of cases) {
    const endpoint = await service(t, (req, res) => { req.resume(); c.handle(req, res) })
    const client = createPinningClient({ endpoint, token: 'very-secret-token', timeoutMs: c.timeoutMs ?? 500 })
    await assert.rejects(client.add({ cid: CID }), (err) => {
      assert.ok(isHearthError(err, c.code), `${c.what}: ${String(err)}`)
      assert.match(err.message, c.message, c.what)
      assert.ok(!err.message.includes('very-secret-token') && !err.message.includes('secret@'), `${c.what}: no secret in the message`)
      return true
    })
  }
  const closed = createPinningClient({ endpoint: `http://127.0.0.1:${await freeLoopbackPort()}`, token: 't', timeoutMs: 500 })
  await assert.rejects(closed.add({ cid: CID }), (err) => isHearthError(err, 'PINNING_UNAVAILABLE') && /unreachable \(ECONNREFUSED\)/.test(err.message))
})
