import { test } from 'node:test'
import assert from 'node:assert/strict'
import { createServer } from 'node:http'
import type { AddressInfo } from 'node:net'
import { createDefinitionFetcher } from '../../src/registry/fetch-definition.js'
import { isHearthError, type ErrorCode } from '../../src/errors.js'
import { startStorage } from '../support/registry-fixtures.js'

async function rejects (work: Promise<unknown>, code: ErrorCode, reason: RegExp): Promise<void> {
  await assert.rejects(work, (err: unknown) => {
    assert.ok(isHearthError(err, code), `expected ${code}, got ${String(err)}`)
    const text = String(err.details?.reason ?? (err.details?.reasons as string[] | undefined)?.[0])
    assert.match(text, reason)
    return true
  })
}

/** A plain HTTP server for definition documents: sized, streamed without length, slow, missing. */
async function startDocumentServer (t: { after: (fn: () => Promise<void>) => void }): Promise<string> {
  const server = createServer((req, res) => {
    if (req.url === '/def.json') {
      res.writeHead(200, { 'content-type': 'application/json' })
      res.end('{"name":"n"}')
    } else if (req.url === '/streamed-big') {
      // No content-length: the limit has to be enforced while reading.
      res.writeHead(200, { 'content-type': 'application/json' })
      let sent = 0
      const push = (): void => {
        while (sent < 64 * 1024) {
          sent += 4096
          if (!res.write('x'.repeat(4096))) { res.once('drain', push); return }
        }
        res.end()
      }
      push()
    } else if (req.url === '/declared-big') {
      res.writeHead(200, { 'content-length': String(10 * 1024 * 1024) })
      res.write('x')
    } else if (req.url === '/slow') {
      res.writeHead(200)
      res.write('{')
      // never ends
    } else {
      res.writeHead(404)
      res.end()
    }
  })
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve))
  t.after(async () => {
    server.closeAllConnections()
    await new Promise<void>((resolve) => server.close(() => resolve()))
  })
  return `http://127.0.0.1:${(server.address() as AddressInfo).port}`
}

test('ipfs:// definitions come from the storage backend; missing or malformed CIDs fail clearly', async (t) => {
  const storage = await startStorage(t)
  const bytes = new TextEncoder().encode('{"name":"pinned"}')
  const cid = await storage.add(bytes)
  const fetchDefinition = createDefinitionFetcher({ storage, timeoutMs: 2000, maxBytes: 1024 })
  assert.deepEqual(await fetchDefinition(`ipfs://${cid}`), bytes)

  // A well-formed CID of content this node never had.
  const other = 'bafkreigh2akiscaildcqabsyg3dfr6chu3fgpregiymsck7e7aqa4s52zy'
  await assert.rejects(fetchDefinition(`ipfs://${other}`), (err: unknown) => isHearthError(err, 'STORAGE_NOT_FOUND'))
  await rejects(fetchDefinition('ipfs://not-a-cid'), 'DEFINITION_UNAVAILABLE', /valid CID/)
  await rejects(fetchDefinition('ftp://example.org/x.json'), 'DEFINITION_UNAVAILABLE', /unsupported URL scheme/)

  const big = await storage.add(new Uint8Array(4096).fill(0x20))
  await rejects(fetchDefinition(`ipfs://${big}`), 'INVALID_SCHEMA_DEFINITION', /larger than 1024 bytes/)
})

test('http(s):// definitions are fetched with a deadline and a size limit enforced while streaming', async (t) => {
  const storage = await startStorage(t)
  const base = await startDocumentServer(t)
  const fetchDefinition = createDefinitionFetcher({ storage, timeoutMs: 300, maxBytes: 16 * 1024 })

  assert.equal(new TextDecoder().decode(await fetchDefinition(`${base}/def.json`)), '{"name":"n"}')
  await rejects(fetchDefinition(`${base}/missing.json`), 'DEFINITION_UNAVAILABLE', /^HTTP 404$/)
  await rejects(fetchDefinition(`${base}/streamed-big`), 'INVALID_SCHEMA_DEFINITION', /larger than 16384 bytes/)
  await rejects(fetchDefinition(`${base}/declared-big`), 'INVALID_SCHEMA_DEFINITION', /larger than 16384 bytes/)
  const started = Date.now()
  await rejects(fetchDefinition(`${base}/slow`), 'DEFINITION_UNAVAILABLE', /within 300 ms/)
  assert.ok(Date.now() - started < 5000, 'the deadline ended the wait')

  // Nothing listens on a port of a closed server.
  const closed = createServer()
  await new Promise<void>((resolve) => closed.listen(0, '127.0.0.1', resolve))
  const port = (closed.address() as AddressInfo).port
  await new Promise<void>((resolve) => closed.close(() => resolve()))
  await rejects(fetchDefinition(`http://127.0.0.1:${port}/def.json`), 'DEFINITION_UNAVAILABLE', /request failed: ECONNREFUSED/)
})

test('a caller abort ends the fetch', async (t) => {
  const storage = await startStorage(t)
  const base = await startDocumentServer(t)
  const fetchDefinition = createDefinitionFetcher({ storage, timeoutMs: 10_000 })
  const controller = new AbortController()
  setTimeout(() => controller.abort(), 50)
  await rejects(fetchDefinition(`${base}/slow`, { signal: controller.signal }), 'DEFINITION_UNAVAILABLE', /./)
})
