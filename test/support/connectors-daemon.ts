// A small stand-in for the daemon's `POST /v1/data/{scope}` on a real unix socket, for the
// connector import tests: it validates with the shipped schemas (the daemon's own compiler),
// writes real envelopes under data/{scope}/, and dedupes the way the daemon's ingest does — a
// file with the same scope, collectedAt and content is a duplicate; the same collectedAt with
// other content moves on by a millisecond until it finds its own bytes or a free name.
import { createServer, type IncomingMessage, type ServerResponse } from 'node:http'
import { mkdir, readFile, writeFile } from 'node:fs/promises'
import { join } from 'node:path'
import type { TestContext } from 'node:test'
import { toErrorBody, HearthError } from '../../src/errors.js'
import { MAX_DATA_DEPTH, parseBoundedJsonBytes } from '../../src/protocol/bounded-json.js'
import { buildEnvelope, collectedAtProblem, collectedAtToFileName, serializeEnvelope } from '../../src/protocol/envelope.js'
import { scopeProblem } from '../../src/protocol/scope.js'
import { createSchemaCompiler, type CompiledSchema } from '../../src/registry/validators.js'
import type { SchemaDefinition } from '../../src/registry/types.js'

export interface Submission { scope: string; collectedAt: string; status: number; path?: string }

export interface DataServer {
  socketPath: string
  dataDir: string
  submissions: Submission[]
  close (): Promise<void>
}

export async function startDataServer (t: Pick<TestContext, 'after'>, opts: {
  dir: string
  schemasDir: string
  /** Scopes whose schema is "not known yet": their files are kept and answered 202 waiting-schema. */
  waitingScopes?: string[]
}): Promise<DataServer> {
  const socketPath = join(opts.dir, 'd.sock')
  const dataDir = join(opts.dir, 'data')
  const submissions: Submission[] = []
  const compiler = createSchemaCompiler()
  const validators = new Map<string, { def: SchemaDefinition; compiled: CompiledSchema } | null>()

  async function schemaFor (scope: string): Promise<{ def: SchemaDefinition; compiled: CompiledSchema } | null> {
    if (!validators.has(scope)) {
      const text = await readFile(join(opts.schemasDir, `${scope}.json`), 'utf8').catch(() => null)
      const def = text === null ? null : JSON.parse(text) as SchemaDefinition
      validators.set(scope, def === null ? null : { def, compiled: compiler.compile(def.schema) })
    }
    return validators.get(scope)!
  }

  async function store (scope: string, collectedAt: string, data: Record<string, unknown>, definitionUrl: string): Promise<{ status: 'stored' | 'duplicate'; path: string; collectedAt: string }> {
    let at = collectedAt
    for (;;) {
      const bytes = serializeEnvelope(buildEnvelope({ definitionUrl, scope, data, collectedAt: at }))
      const rel = `${scope}/${collectedAtToFileName(at)}`
      await mkdir(join(dataDir, scope), { recursive: true })
      try {
        await writeFile(join(dataDir, rel), bytes, { flag: 'wx' })
        return { status: 'stored', path: rel, collectedAt: at }
      } catch (err) {
        if ((err as NodeJS.ErrnoException).code !== 'EEXIST') throw err
      }
      if (Buffer.from(await readFile(join(dataDir, rel))).equals(bytes)) return { status: 'duplicate', path: rel, collectedAt: at }
      at = new Date(Date.parse(at) + 1).toISOString()
    }
  }

  async function handle (req: IncomingMessage): Promise<{ status: number; body: unknown }> {
    const url = new URL(req.url ?? '/', 'http://hearth')
    if (req.method === 'GET' && url.pathname === '/health') return { status: 200, body: { status: 'ok' } }
    const m = /^\/v1\/data\/([^/]+)$/.exec(url.pathname)
    if (req.method !== 'POST' || m === null) throw new HearthError('NOT_FOUND', `no route ${req.method ?? ''} ${url.pathname}`)
    const scope = decodeURIComponent(m[1]!)
    const badScope = scopeProblem(scope)
    if (badScope !== null) throw new HearthError('INVALID_SCOPE', `invalid scope: ${badScope}`)
    const collectedAt = url.searchParams.get('collectedAt') ?? new Date().toISOString()
    const badTime = collectedAtProblem(collectedAt)
    if (badTime !== null) throw new HearthError('INVALID_ARGUMENT', `collectedAt ${badTime}`)
    const chunks: Buffer[] = []
    for await (const c of req) chunks.push(c as Buffer)
    // the daemon's own body rules (depth, exact numbers, value count)
    const data = parseBoundedJsonBytes(Buffer.concat(chunks), { maxDepth: MAX_DATA_DEPTH, subject: 'request body' })
    if (data === null || typeof data !== 'object' || Array.isArray(data)) throw new HearthError('INVALID_BODY', 'the body must be a JSON object')
    const schema = await schemaFor(scope)
    if (schema === null) {
      if (opts.waitingScopes?.includes(scope) !== true) throw new HearthError('NO_SCHEMA_FOR_SCOPE', `no schema is known for scope ${scope}`)
      const r = await store(scope, collectedAt, data as Record<string, unknown>, 'ipfs://unknown')
      return { status: 202, body: { status: 'waiting-schema', scope, collectedAt: r.collectedAt, path: r.path } }
    }
    const verdict = schema.compiled.validate(data)
    if (!verdict.ok) throw new HearthError('SCHEMA_VALIDATION_FAILED', `data does not match the schema of ${scope}`, { reasons: verdict.reasons })
    const r = await store(scope, collectedAt, data as Record<string, unknown>, `ipfs://shipped/${scope}`)
    return { status: r.status === 'stored' ? 201 : 200, body: { status: r.status, scope, collectedAt: r.collectedAt, path: r.path } }
  }

  const server = createServer((req: IncomingMessage, res: ServerResponse) => {
    const url = new URL(req.url ?? '/', 'http://hearth')
    handle(req).then(({ status, body }) => {
      submissions.push({ scope: url.pathname.split('/').at(-1)!, collectedAt: url.searchParams.get('collectedAt') ?? '', status, ...(typeof (body as { path?: unknown }).path === 'string' ? { path: (body as { path: string }).path } : {}) })
      res.writeHead(status, { 'content-type': 'application/json' }).end(JSON.stringify(body))
    }, (err: unknown) => {
      const body = toErrorBody(err)
      submissions.push({ scope: url.pathname.split('/').at(-1)!, collectedAt: url.searchParams.get('collectedAt') ?? '', status: body.error.code })
      res.writeHead(body.error.code, { 'content-type': 'application/json' }).end(JSON.stringify(body))
    })
  })
  await new Promise<void>((resolve, reject) => { server.once('error', reject); server.listen(socketPath, resolve) })
  let closed = false
  const close = async (): Promise<void> => {
    if (closed) return
    closed = true
    server.closeAllConnections()
    await new Promise<void>((resolve) => server.close(() => resolve()))
  }
  t.after(close)
  return { socketPath, dataDir, submissions, close }
}
