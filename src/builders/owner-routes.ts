// The owner's builder endpoints on the owner's listeners (docs/protocol.md §3.8): builders,
// access requests (with consent labels), approve/deny, grants, revoke, and the access log. The
// owner's side (owner.ts) is asked for per request: it loads with the first one that needs it.
import { HearthError } from '../errors.js'
import { ok } from '../api/http.js'
import { intParam, stringParam } from '../api/query.js'
import type { Router } from '../api/router.js'
import type { AccessLog } from './access-log.js'
import type { AccessRequestStore } from './access-requests.js'
import type { GrantStore } from './grant-store.js'
import type { OwnerBuilders } from './owner.js'
import type { AccessRequestStatus } from './types.js'

const STATUSES = ['pending', 'approved', 'denied', 'all'] as const

function timeParam (url: URL, name: string): number | undefined {
  const raw = stringParam(url, name, 64)
  if (raw === null || raw === '') return undefined
  const ms = /^\d{1,13}$/.test(raw) ? Number(raw) * (raw.length <= 10 ? 1000 : 1) : Date.parse(raw)
  if (Number.isNaN(ms)) throw new HearthError('INVALID_ARGUMENT', `${name} must be an ISO 8601 time or unix seconds`)
  return ms
}

export function addOwnerBuilderRoutes (router: Router, deps: { owner: () => Promise<OwnerBuilders>; requests: AccessRequestStore; grants: GrantStore; log: AccessLog }): void {
  router.get('/v1/builders', async () => ok({ builders: await (await deps.owner()).builders() }))
  router.post('/v1/builders', async (req) => {
    const body = await req.json() as Record<string, unknown> | null
    if (body === null || typeof body !== 'object') throw new HearthError('INVALID_BODY', 'expected {address, publicKey, appUrl?}')
    return ok(await (await deps.owner()).registerBuilder(body as { address: string; publicKey: string; appUrl?: string }), 201)
  })

  router.get('/v1/access-requests', async (req) => {
    const status = stringParam(req.url, 'status', 16) ?? 'pending'
    if (!(STATUSES as readonly string[]).includes(status)) throw new HearthError('INVALID_ARGUMENT', `status must be one of ${STATUSES.join(', ')}`)
    const limit = intParam(req.url, 'limit', 100, 1000)
    const before = stringParam(req.url, 'before', 64) ?? undefined
    const list = await deps.requests.list({ limit, ...(status !== 'all' ? { status: status as AccessRequestStatus } : {}), ...(before !== undefined ? { before } : {}) })
    const owner = await deps.owner()
    return ok({ requests: await Promise.all(list.map(async (r) => await owner.requestView(r))) })
  })
  router.get('/v1/access-requests/:id', async (req) => {
    const r = await deps.requests.get(req.params.id ?? '')
    if (r === null) throw new HearthError('NOT_FOUND', `no access request ${req.params.id ?? ''}`)
    return ok(await (await deps.owner()).requestView(r))
  })
  router.post('/v1/access-requests/:id/approve', async (req) => {
    const raw = req.raw.headers['content-length'] === '0' || req.raw.headers['content-type'] === undefined ? {} : await req.json()
    const body = (raw ?? {}) as { scopes?: unknown; expiresAt?: unknown }
    const owner = await deps.owner()
    const { request, grant } = await owner.approve(req.params.id ?? '', { scopes: body.scopes, expiresAt: body.expiresAt })
    return ok({ request, grant: await owner.grantView(grant) })
  })
  router.post('/v1/access-requests/:id/deny', async (req) => ok({ request: await (await deps.owner()).deny(req.params.id ?? '') }))

  router.get('/v1/grants', async (req) => {
    const limit = intParam(req.url, 'limit', 100, 1000)
    const before = stringParam(req.url, 'before', 64) ?? undefined
    const list = await deps.grants.list({ limit, ...(before !== undefined ? { before } : {}) })
    const owner = await deps.owner()
    return ok({ grants: await Promise.all(list.map(async (g) => await owner.grantView(g))) })
  })
  router.get('/v1/grants/:id', async (req) => {
    const g = await deps.grants.get(req.params.id ?? '')
    if (g === null) throw new HearthError('NOT_FOUND', `no grant ${req.params.id ?? ''}`)
    return ok(await (await deps.owner()).grantView(g))
  })
  router.post('/v1/grants/:id/revoke', async (req) => {
    const owner = await deps.owner()
    return ok(await owner.grantView(await owner.revoke(req.params.id ?? '')))
  })

  router.get('/v1/access-logs', async (req) => {
    const order = stringParam(req.url, 'order', 4) ?? 'asc'
    if (order !== 'asc' && order !== 'desc') throw new HearthError('INVALID_ARGUMENT', 'order must be asc or desc')
    const builder = stringParam(req.url, 'builder', 42) ?? undefined
    const connection = stringParam(req.url, 'connection', 64) ?? undefined
    const scope = stringParam(req.url, 'scope', 128) ?? undefined
    const cursor = stringParam(req.url, 'cursor', 40) ?? undefined
    const since = timeParam(req.url, 'since')
    const until = timeParam(req.url, 'until')
    const page = await deps.log.query({
      order,
      limit: intParam(req.url, 'limit', 100, 1000),
      ...(builder !== undefined ? { builder } : {}),
      ...(connection !== undefined ? { connection } : {}),
      ...(scope !== undefined ? { scope } : {}),
      ...(cursor !== undefined ? { cursor } : {}),
      ...(since !== undefined ? { since } : {}),
      ...(until !== undefined ? { until } : {})
    })
    return ok(page)
  })
}
