// Answering the schema lookup endpoints (docs/protocol.md §2.6) from what this daemon knows, so peers and
// local tools can use any daemon as their lookup service. The caller passes a resolver that
// does not itself ask a DP RPC service (the cache, or a registry over cache + chain): two
// daemons configured as each other's lookup service must not bounce a miss back and forth.
import { HearthError, toErrorBody, type ErrorBody } from '../errors.js'
import { dpRpcRoute, toDpRpcBody, type DpRpcBody, type DpRpcProof, type DpRpcRoute } from './dp-rpc-shape.js'
import type { SchemaRecord, SchemaResolver } from './types.js'

export interface DpRpcAnswer {
  status: number
  body: DpRpcBody | ErrorBody
}

export interface DpRpcServeOptions {
  /** Where an answer came from; `hearth-cache` for every record when not given. */
  proofFor?: (record: SchemaRecord) => { source: DpRpcProof['source']; extra?: Record<string, unknown> }
  signal?: AbortSignal
}

/** The answer to `GET <pathAndQuery>`, or null when the path is not a schema lookup endpoint. */
export async function answerDpRpcRequest (
  resolver: Pick<SchemaResolver, 'byScope' | 'byId'>, pathAndQuery: string, opts: DpRpcServeOptions = {}
): Promise<DpRpcAnswer | null> {
  const route = dpRpcRoute(pathAndQuery)
  return route === null ? null : await answerDpRpcRoute(resolver, route, opts)
}

export async function answerDpRpcRoute (
  resolver: Pick<SchemaResolver, 'byScope' | 'byId'>, route: DpRpcRoute, opts: DpRpcServeOptions = {}
): Promise<DpRpcAnswer> {
  if (route.kind === 'bad-request') {
    return failure(new HearthError(/scope/.test(route.reason) ? 'INVALID_SCOPE' : 'INVALID_ARGUMENT', route.reason))
  }
  const record = route.kind === 'byScope'
    ? await resolver.byScope(route.scope, { signal: opts.signal })
    : await resolver.byId(route.id, { signal: opts.signal })
  if (record === null) {
    return failure(route.kind === 'byScope'
      ? new HearthError('NO_SCHEMA_FOR_SCOPE', `no schema is known for scope ${route.scope}`, { scope: route.scope })
      : new HearthError('SCHEMA_NOT_FOUND', `no schema with id ${route.id}`, { id: route.id }))
  }
  return { status: 200, body: toDpRpcBody(record, opts.proofFor?.(record) ?? { source: 'hearth-cache' }) }
}

function failure (err: HearthError): DpRpcAnswer {
  return { status: err.status, body: toErrorBody(err) }
}
