// The owner's assistants endpoints (docs/protocol.md §3.9), on the owner's listeners and the
// dashboard: connections with their grants (consent labels) and activity, narrowing, revoking,
// and the assistants' requests (a new connection, more scopes) to approve or deny.
import { HearthError } from '../errors.js'
import { ok } from '../api/http.js'
import { intParam, stringParam } from '../api/query.js'
import type { Router } from '../api/router.js'
import type { ConsentItem } from '../connectors/consent.js'
import type { ConnectionStore } from './store.js'
import type { AssistantConnection, AssistantRequest } from './types.js'

export interface AssistantOwnerDeps {
  connections: ConnectionStore
  consent (patterns: readonly string[]): Promise<ConsentItem[]>
  /** The newest access-log entries of a connection. */
  activity (connectionId: string, limit: number): Promise<unknown[]>
  /** A connection was revoked: its tokens go. */
  onRevoked (connectionId: string): Promise<void>
}

async function body (req: { raw: { headers: Record<string, unknown> }; json (): Promise<unknown> }): Promise<Record<string, unknown>> {
  if (req.raw.headers['content-length'] === '0' || req.raw.headers['content-type'] === undefined) return {}
  const value = await req.json()
  if (value === null || typeof value !== 'object' || Array.isArray(value)) throw new HearthError('INVALID_BODY', 'expected a JSON object')
  return value as Record<string, unknown>
}

export function addAssistantOwnerRoutes (router: Router, deps: AssistantOwnerDeps): void {
  const { connections } = deps

  async function connectionView (c: AssistantConnection): Promise<AssistantConnection & { consent: ConsentItem[]; pendingRequest: string | null }> {
    const pending = c.status === 'pending' || c.status === 'active' ? await connections.pendingRequestOf(c.id) : null
    return { ...c, consent: await deps.consent(c.scopes), pendingRequest: pending?.id ?? null }
  }

  async function requestView (r: AssistantRequest): Promise<AssistantRequest & { consent: ConsentItem[]; connection: { id: string; name: string; kind: string; scopes: string[] } | null }> {
    const c = await connections.get(r.connectionId)
    return { ...r, consent: await deps.consent(r.scopes), connection: c === null ? null : { id: c.id, name: c.name, kind: c.kind, scopes: c.scopes } }
  }

  // `requests` before `:id`: the router takes the first match in table order
  router.get('/v1/assistants/requests', async (req) => {
    const status = stringParam(req.url, 'status', 16) ?? 'pending'
    if (!['pending', 'approved', 'denied', 'all'].includes(status)) throw new HearthError('INVALID_ARGUMENT', 'status must be pending, approved, denied or all')
    const list = await connections.listRequests({ limit: intParam(req.url, 'limit', 100, 1000), ...(status !== 'all' ? { status: status as AssistantRequest['status'] } : {}) })
    return ok({ requests: await Promise.all(list.map(requestView)) })
  })
  router.post('/v1/assistants/requests/:id/approve', async (req) => {
    const { scopes } = await body(req)
    const { request, connection } = await connections.decide(req.params.id ?? '', 'approved', scopes)
    return ok({ request: await requestView(request), connection: await connectionView(connection) })
  })
  router.post('/v1/assistants/requests/:id/deny', async (req) => {
    const { request, connection } = await connections.decide(req.params.id ?? '', 'denied')
    if (connection.status === 'denied') await deps.onRevoked(connection.id)
    return ok({ request: await requestView(request), connection: await connectionView(connection) })
  })

  router.get('/v1/assistants', async (req) => {
    const list = await connections.list({ limit: intParam(req.url, 'limit', 200, 1000) })
    return ok({ connections: await Promise.all(list.map(connectionView)) })
  })
  router.get('/v1/assistants/:id', async (req) => {
    const c = await connections.get(req.params.id ?? '')
    if (c === null) throw new HearthError('NOT_FOUND', `no assistant connection ${req.params.id ?? ''}`)
    return ok({ ...await connectionView(c), activity: await deps.activity(c.id, intParam(req.url, 'limit', 50, 1000)) })
  })
  router.post('/v1/assistants/:id/narrow', async (req) => {
    const { scopes } = await body(req)
    return ok(await connectionView(await connections.narrow(req.params.id ?? '', scopes)))
  })
  router.post('/v1/assistants/:id/revoke', async (req) => {
    const revoked = await connections.revoke(req.params.id ?? '')
    await deps.onRevoked(revoked.id)
    return ok(await connectionView(revoked))
  })
}
