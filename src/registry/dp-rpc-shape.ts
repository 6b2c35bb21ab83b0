// The wire shape of the schema lookup service (docs/protocol.md §2.6), both directions, with no I/O:
// reading a service's answers as SchemaRecords (client side), and turning what Hearth knows into
// the same answers (Hearth serves `GET /v1/schemas?scope=` and `GET /v1/schemas/{id}` itself).
import { scopeProblem } from '../protocol/scope.js'
import { isLocalSchemaId, type SchemaRecord } from './types.js'

/** `Schema` of docs/protocol.md §2.6, as it travels: exactly the fields of a SchemaRecord. */
export type DpRpcSchema = SchemaRecord

/**
 * What backs an answer. The hosted service returns its own proof; Hearth says where its answer
 * came from: `chain` when the record was read from the registry contract (the caller may add the
 * chain id, contract address, block), `hearth-cache` when it is what this daemon has cached or
 * added locally (`local: true` for a schema not registered on chain, whose id is `local:<cid>`).
 */
export interface DpRpcProof {
  source: 'hearth-cache' | 'chain'
  schemaId: string
  definitionUrl: string
  local: boolean
  [extra: string]: unknown
}

export interface DpRpcBody {
  data: DpRpcSchema
  proof: DpRpcProof
}

export function toDpRpcSchema (record: SchemaRecord): DpRpcSchema {
  return {
    id: record.id,
    ownerAddress: record.ownerAddress,
    name: record.name,
    dialect: record.dialect,
    definitionUrl: record.definitionUrl,
    scope: record.scope,
    addedAt: record.addedAt
  }
}

export function toDpRpcBody (record: SchemaRecord, proof: { source?: DpRpcProof['source']; extra?: Record<string, unknown> } = {}): DpRpcBody {
  return {
    data: toDpRpcSchema(record),
    proof: {
      ...proof.extra,
      source: proof.source ?? 'hearth-cache',
      schemaId: record.id,
      definitionUrl: record.definitionUrl,
      local: isLocalSchemaId(record.id)
    }
  }
}

/**
 * A service's `data` as a SchemaRecord, or the reason it is not one. Ids are opaque strings (the
 * hosted service uses hex, the chain decimal); a numeric id is taken as its decimal spelling.
 * `addedAt` given as a number is read as unix seconds (below 1e11) or milliseconds, and stored ISO.
 */
export function parseDpRpcSchema (value: unknown): { record: SchemaRecord } | { problem: string } {
  if (value === null || typeof value !== 'object' || Array.isArray(value)) return { problem: 'data is not an object' }
  const v = value as Record<string, unknown>
  const id = typeof v.id === 'string' ? v.id : typeof v.id === 'number' && Number.isSafeInteger(v.id) && v.id >= 0 ? String(v.id) : null
  if (id === null || id.length === 0 || id.length > 100) return { problem: 'data.id is not a schema id' }
  for (const field of ['name', 'dialect', 'definitionUrl', 'scope'] as const) {
    if (typeof v[field] !== 'string' || (v[field] as string).length === 0) return { problem: `data.${field} is not a non-empty string` }
  }
  const scopeIssue = scopeProblem(v.scope)
  if (scopeIssue !== null) return { problem: `data.scope ${scopeIssue}` }
  if (v.ownerAddress !== undefined && v.ownerAddress !== null && typeof v.ownerAddress !== 'string') {
    return { problem: 'data.ownerAddress is not a string' }
  }
  return {
    record: {
      id,
      ownerAddress: (v.ownerAddress as string | null | undefined) ?? null,
      name: v.name as string,
      dialect: v.dialect as string,
      definitionUrl: v.definitionUrl as string,
      scope: v.scope as string,
      addedAt: normaliseAddedAt(v.addedAt)
    }
  }
}

function normaliseAddedAt (value: unknown): string | null {
  if (typeof value === 'string' && value.length > 0) return value
  if (typeof value === 'number' && Number.isFinite(value) && value >= 0) {
    const date = new Date(value < 1e11 ? value * 1000 : value)
    return Number.isNaN(date.getTime()) ? null : date.toISOString()
  }
  return null
}

export type DpRpcRoute =
  | { kind: 'byScope'; scope: string }
  | { kind: 'byId'; id: string }
  | { kind: 'bad-request'; reason: string }

/**
 * Which lookup a request asks for, from its path and query (e.g. `req.url`); null when the path is
 * not one of the two endpoints. The scope is checked here so a bad one is a 400, not a 404.
 */
export function dpRpcRoute (pathAndQuery: string): DpRpcRoute | null {
  let url: URL
  try {
    url = new URL(pathAndQuery, 'http://hearth.invalid')
  } catch {
    return null
  }
  const path = url.pathname.replace(/\/+$/, '')
  if (path === '/v1/schemas') {
    const scopes = url.searchParams.getAll('scope')
    if (scopes.length !== 1) return { kind: 'bad-request', reason: 'exactly one scope query parameter is required' }
    const problem = scopeProblem(scopes[0])
    if (problem !== null) return { kind: 'bad-request', reason: `scope ${problem}` }
    return { kind: 'byScope', scope: scopes[0]! }
  }
  const m = /^\/v1\/schemas\/([^/]+)$/.exec(path)
  if (m === null) return null
  let id: string
  try {
    id = decodeURIComponent(m[1]!)
  } catch {
    return { kind: 'bad-request', reason: 'the schema id is not valid percent-encoding' }
  }
  if (id.length === 0 || id.length > 100) return { kind: 'bad-request', reason: 'the schema id must be 1 to 100 characters' }
  return { kind: 'byId', id }
}
