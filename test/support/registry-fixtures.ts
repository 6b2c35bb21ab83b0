// Fixtures for schema registry tests: a real LevelDB-backed KV and a real embedded storage in temp
// folders, and a faithful double of the hosted schema lookup service (docs/protocol.md §2.6), which is a
// public service tests cannot reach. The double keeps schemas with hex ids as the hosted service
// does, answers decimal spellings of them too, and can also serve definition documents over HTTP.
import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http'
import type { AddressInfo } from 'node:net'
import { join } from 'node:path'
import type { TestContext } from 'node:test'
import { openDatabase, openKv, type HearthDatabase } from '../../src/db/database.js'
import { createEmbeddedStorage } from '../../src/storage/embedded.js'
import type { StorageBackend } from '../../src/storage/types.js'
import { createSchemaCache, type SchemaCache } from '../../src/registry/cache.js'
import { tempDir } from './tmp.js'

type After = Pick<TestContext, 'after'>

export function definitionDoc (scope: string, overrides: Record<string, unknown> = {}): Record<string, unknown> {
  return {
    name: `${scope} test schema`,
    version: '1.0.0',
    scope,
    dialect: 'json',
    description: 'test definition',
    schema: { type: 'object', properties: { username: { type: 'string' } }, required: ['username'] },
    ...overrides
  }
}

export async function startStorage (t: After): Promise<StorageBackend> {
  const dir = await tempDir(t, 'hearth-registry-storage-')
  const storage = await createEmbeddedStorage({ blocksDir: join(dir, 'blocks'), datastoreDir: join(dir, 'datastore') })
  t.after(async () => { await storage.stop() })
  return storage
}

/** A schema cache over a real LevelDB in `dir`; `reopen` closes and opens it again. */
export async function openCache (t: After, dir?: string): Promise<{ cache: SchemaCache; db: HearthDatabase; dir: string; close: () => Promise<void> }> {
  const location = dir ?? await tempDir(t, 'hearth-registry-db-')
  const db = await openDatabase(location)
  let closed = false
  const close = async (): Promise<void> => {
    if (closed) return
    closed = true
    await db.close()
  }
  t.after(close)
  return { cache: createSchemaCache(openKv(db, 'schemas')), db, dir: location, close }
}

export interface ServiceSchema {
  id: string
  ownerAddress: string | null
  name: string
  dialect: string
  definitionUrl: string
  scope: string
  addedAt: string | number | null
}

export interface DpRpcDouble {
  baseUrl: string
  /** Schemas the service knows, oldest first; the last one of a scope is its newest. */
  schemas: ServiceSchema[]
  /** Documents served at `${baseUrl}/defs/<name>`. */
  documents: Map<string, string>
  /** 'ok' answers; 'error' answers 500; 'hang' never answers; 'garbage' answers 200 with non-JSON. */
  mode: 'ok' | 'error' | 'hang' | 'garbage'
  requests: string[]
  stop (): Promise<void>
}

export async function startDpRpcDouble (t: After): Promise<DpRpcDouble> {
  const hanging = new Set<ServerResponse>()
  const state: Omit<DpRpcDouble, 'baseUrl' | 'stop'> = { schemas: [], documents: new Map(), mode: 'ok', requests: [] }

  const handle = (req: IncomingMessage, res: ServerResponse): void => {
    const url = new URL(req.url ?? '/', 'http://127.0.0.1')
    state.requests.push(url.pathname + url.search)
    const json = (status: number, body: unknown): void => {
      res.writeHead(status, { 'content-type': 'application/json' })
      res.end(JSON.stringify(body))
    }
    if (url.pathname.startsWith('/defs/')) {
      const doc = state.documents.get(decodeURIComponent(url.pathname.slice('/defs/'.length)))
      if (doc === undefined) { json(404, { error: 'not found' }); return }
      res.writeHead(200, { 'content-type': 'application/json' })
      res.end(doc)
      return
    }
    if (state.mode === 'hang') { hanging.add(res); return }
    if (state.mode === 'error') { json(500, { error: 'internal' }); return }
    if (state.mode === 'garbage') { res.writeHead(200); res.end('<html>oops</html>'); return }
    let found: ServiceSchema | undefined
    if (url.pathname === '/v1/schemas') {
      const scope = url.searchParams.get('scope')
      found = state.schemas.filter((s) => s.scope === scope).at(-1)
    } else if (url.pathname.startsWith('/v1/schemas/')) {
      const asked = decodeURIComponent(url.pathname.slice('/v1/schemas/'.length))
      const wanted = asNumber(asked)
      found = state.schemas.find((s) => s.id === asked || (wanted !== null && asNumber(s.id) === wanted))
    } else {
      json(404, { error: 'no route' })
      return
    }
    if (found === undefined) { json(404, { error: 'Schema not found' }); return }
    json(200, { data: found, proof: { signature: '0xdouble', blockNumber: 1 } })
  }

  const server: Server = createServer(handle)
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve))
  const { port } = server.address() as AddressInfo
  let stopped = false
  const stop = async (): Promise<void> => {
    if (stopped) return
    stopped = true
    for (const res of hanging) res.destroy()
    server.closeAllConnections()
    await new Promise<void>((resolve) => server.close(() => resolve()))
  }
  t.after(stop)
  return Object.assign(state, { baseUrl: `http://127.0.0.1:${port}`, stop })
}

function asNumber (id: string): bigint | null {
  try {
    return /^(0x[0-9a-f]+|[0-9]+)$/i.test(id) ? BigInt(id) : null
  } catch {
    return null
  }
}
