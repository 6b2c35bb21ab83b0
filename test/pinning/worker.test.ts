// The pin worker's retry of a pin the service answered "failed", against two kinds of Pinning
// Service API on loopback that differ only in their request ids: one names a request by a fresh
// id (the specification's example), the other by the CID itself, as IPFS Cluster does. A replace
// (POST /pins/{id}) is carried out as Cluster carries it out: the new pin added, then the request
// {id} removed. With a CID for an id that removes the pin just added, so against such a service the
// worker must ask again with a plain add. (The real Cluster is in cluster.test.ts; whether one of
// its pins fails there depends on timing, so this is the deterministic check of that branch.)
import { test } from 'node:test'
import assert from 'node:assert/strict'
import { createServer, type IncomingMessage } from 'node:http'
import { openDatabase, openKv } from '../../src/db/database.js'
import { createDurableQueue } from '../../src/db/queue.js'
import { createPinningClient } from '../../src/pinning/client.js'
import { createPinRecords, type PinRecord } from '../../src/pinning/records.js'
import { pinRound, type PinWorkerDeps } from '../../src/pinning/worker.js'
import { tempDir } from '../support/tmp.js'

const CID = 'bafkreigh2akiscaildcqabsyg3dfr6chu3fgpregiymsck7e7aqa4s52zy'

/** A pinning service holding pins by request id; `idOf` names a new request; its first add fails. */
async function pinningService (t: { after: (fn: () => void) => void }, idOf: (cid: string, n: number) => string): Promise<{ endpoint: string; requests: string[]; pins: Map<string, string> }> {
  const pins = new Map<string, string>() // request id → CID
  const requests: string[] = []
  let adds = 0
  const readJson = async (req: IncomingMessage): Promise<any> => {
    const chunks: Buffer[] = []
    for await (const c of req) chunks.push(c as Buffer)
    return JSON.parse(Buffer.concat(chunks).toString('utf8'))
  }
  const server = createServer((req, res) => {
    void (async () => {
      requests.push(`${req.method} ${req.url}`)
      const reply = (requestid: string, status: string, cid: string): void => {
        res.writeHead(202, { 'content-type': 'application/json' }).end(JSON.stringify({ requestid, status, created: new Date().toISOString(), pin: { cid }, delegates: [] }))
      }
      const replaced = /^\/api\/v1\/pins\/([^/?]+)$/.exec(req.url ?? '')
      if (req.method === 'POST' && (req.url === '/api/v1/pins' || replaced !== null)) {
        const { cid } = await readJson(req)
        const id = idOf(cid, ++adds)
        pins.set(id, cid)
        // Cluster's replace: Pin(new), then Unpin(old) — the same entry when the id is the CID
        if (replaced !== null) pins.delete(decodeURIComponent(replaced[1]))
        reply(id, adds === 1 ? 'failed' : 'pinned', cid)
        return
      }
      req.resume()
      res.writeHead(404, { 'content-type': 'application/json' }).end(JSON.stringify({ error: { reason: 'NOT_FOUND' } }))
    })()
  })
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve))
  t.after(() => { server.closeAllConnections(); server.close() })
  return { endpoint: `http://127.0.0.1:${(server.address() as { port: number }).port}/api/v1/`, requests, pins }
}

async function workerFor (t: Parameters<typeof tempDir>[0], endpoint: string): Promise<PinWorkerDeps> {
  const db = await openDatabase(await tempDir(t, 'hearth-pin-worker-'))
  t.after(async () => { await db.close() })
  const records = createPinRecords(openKv<PinRecord>(db, 'pinning.test'))
  await records.load()
  const queue = createDurableQueue<{ cid: string }>(db, 'pinning.test')
  await records.put({ cid: CID, scope: 'instagram.profile', state: 'queued', requestId: null, error: null, verified: false, updatedAt: Date.now() })
  await queue.enqueue(CID, { cid: CID })
  return {
    client: createPinningClient({ endpoint, token: 'tok', timeoutMs: 2000 }),
    records,
    queue,
    origins: async () => ['/ip4/127.0.0.1/tcp/4001/p2p/12D3KooWexample'],
    gateway: null,
    settings: { batchSize: 10, concurrency: 2, pollIntervalMs: 10, sampleRate: 0, maxSampleBytes: 1024, requestTimeoutMs: 2000 },
    backoff: { initialMs: 1, maxMs: 1 },
    onOutcome: () => {}
  }
}

/** Two rounds: the add the service fails, then (after the 1 ms backoff) the retry. */
async function failThenRetry (deps: PinWorkerDeps): Promise<PinRecord | null> {
  const signal = new AbortController().signal
  assert.equal(await pinRound(deps, signal), 1)
  assert.equal((await deps.records.get(CID))?.state, 'failed')
  await new Promise((resolve) => setTimeout(resolve, 20))
  assert.equal(await pinRound(deps, signal), 1)
  return await deps.records.get(CID)
}

test('a failed pin whose request id is its CID (IPFS Cluster) is asked again by add, and stays pinned', async (t) => {
  const service = await pinningService(t, (cid) => cid)
  const record = await failThenRetry(await workerFor(t, service.endpoint))
  assert.deepEqual(service.requests, ['POST /api/v1/pins', 'POST /api/v1/pins'], 'no replace: it would unpin the CID just pinned again')
  assert.equal(service.pins.get(CID), CID, 'the service still holds the pin')
  assert.equal(record?.state, 'pinned')
  assert.equal(record?.requestId, CID)
})

test('a failed pin with a request id of its own is asked again by replace, never remove + add', async (t) => {
  const service = await pinningService(t, (_cid, n) => `r${n}`)
  const record = await failThenRetry(await workerFor(t, service.endpoint))
  assert.deepEqual(service.requests, ['POST /api/v1/pins', 'POST /api/v1/pins/r1'])
  assert.deepEqual([...service.pins], [['r2', CID]], 'one pin, under the new request id')
  assert.equal(record?.state, 'pinned')
  assert.equal(record?.requestId, 'r2')
})
