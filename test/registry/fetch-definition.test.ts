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
    } else if (req.url === '/to-file') {
      res.writeHead(302, { location: 'file:///etc/passwd' })
      res.end()
    } else if (req.url === '/to-self') {
      res.writeHead(302, { location: '/def.json' })
      res.end()
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
  const fetchDefinition = createDefinitionFetcher({ storage, timeoutMs: 10_000, maxBytes: 1024 })
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
  const fetchDefinition = createDefinitionFetcher({ storage, timeoutMs: 1000, maxBytes: 16 * 1024, allowHttp: true, allowPrivateAddresses: true })

  assert.equal(new TextDecoder().decode(await fetchDefinition(`${base}/def.json`)), '{"name":"n"}')
  await rejects(fetchDefinition(`${base}/missing.json`), 'DEFINITION_UNAVAILABLE', /^HTTP 404$/)
  await rejects(fetchDefinition(`${base}/streamed-big`), 'INVALID_SCHEMA_DEFINITION', /larger than 16384 bytes/)
  await rejects(fetchDefinition(`${base}/declared-big`), 'INVALID_SCHEMA_DEFINITION', /larger than 16384 bytes/)
  const started = Date.now()
  await rejects(fetchDefinition(`${base}/slow`), 'DEFINITION_UNAVAILABLE', /within 1000 ms/)
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
  const fetchDefinition = createDefinitionFetcher({ storage, timeoutMs: 10_000, allowHttp: true, allowPrivateAddresses: true })
  const controller = new AbortController()
  setTimeout(() => controller.abort(), 50)
  await rejects(fetchDefinition(`${base}/slow`, { signal: controller.signal }), 'DEFINITION_UNAVAILABLE', /./)
})

test('by default a definition URL can reach neither plain http nor this machine or its network, even through a name or a redirect', async (t) => {
  const storage = await startStorage(t)
  const base = await startDocumentServer(t)
  const port = new URL(base).port
  let hits = 0
  const counting: typeof globalThis.fetch = async (...args) => { hits++; return await globalThis.fetch(...args) }
  const strict = createDefinitionFetcher({ storage, timeoutMs: 2000 })
  await rejects(strict(`${base}/def.json`), 'DEFINITION_UNAVAILABLE', /unsupported URL scheme .*allowHttpDefinitionUrls/)
  await rejects(strict('https://127.0.0.1/def.json'), 'DEFINITION_UNAVAILABLE', /127\.0\.0\.1 is an internal address/)
  for (const host of ['[::1]', '10.1.2.3', '192.168.1.1', '169.254.169.254', '[::ffff:127.0.0.1]', '0.0.0.0', '[fd00::1]']) {
    await rejects(createDefinitionFetcher({ storage, allowHttp: true, fetch: counting })(`http://${host}:${port}/def.json`), 'DEFINITION_UNAVAILABLE', /internal address/)
  }
  assert.equal(hits, 0, 'refused before any request')
  // a name is checked on the address actually connected to
  const httpOnly = createDefinitionFetcher({ storage, timeoutMs: 2000, allowHttp: true })
  await rejects(httpOnly(`http://localhost:${port}/def.json`), 'DEFINITION_UNAVAILABLE', /localhost resolves to .* an internal address/)

  // allowed by configuration: loopback works, and every redirect is checked again
  const open = createDefinitionFetcher({ storage, timeoutMs: 2000, allowHttp: true, allowPrivateAddresses: true })
  assert.equal(new TextDecoder().decode(await open(`${base}/to-self`)), '{"name":"n"}')
  await rejects(open(`${base}/to-file`), 'DEFINITION_UNAVAILABLE', /redirected to file:\/\/\/etc\/passwd: unsupported URL scheme/)
})
