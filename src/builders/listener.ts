// The builder listener (docs/protocol.md §3.8): signed requests only, CORS open for exactly these
// routes (auth is the signature, never a cookie), a per-builder rate limit, small bodies, and
// every read and every refusal in the access log. Authentication checks the signature, the
// request facts it covers, replays and the builder's registration; the routes then check the
// grant and the scope. Only grant-allowed reads and the access-request routes exist here.
import type { IncomingMessage } from 'node:http'
import type { Address } from 'viem'
import type { BatchOp } from '../db/database.js'
import type { FileIndex } from '../db/file-index.js'
import { HearthError, toErrorBody } from '../errors.js'
import type { Logger } from '../log.js'
import type { ApiRequest, Reply } from '../api/http.js'
import { ok } from '../api/http.js'
import type { Router } from '../api/router.js'
import type { Listener } from '../api/server.js'
import { intParam, stringParam } from '../api/query.js'
import { findVersion, listVersions, versionReply } from '../api/routes/data.js'
import { assertScope } from '../protocol/scope.js'
import type { StorageBackend } from '../storage/types.js'
import type { AccessLog, NewAccessLogEntry } from './access-log.js'
import type { AccessRequestStore } from './access-requests.js'
import type { Authorizer } from './authorize.js'
import type { BuilderRegistry } from './builder-registry.js'
import type { GrantStore } from './grant-store.js'
import { checkExpiresAt } from './grant.js'
import { ID_PATTERN } from './ids.js'
import { addressBudgetKey, type RateLimiter } from './rate-limit.js'
import type { RefusalFold } from './refusal-fold.js'
import type { ReplayCache } from './replay-cache.js'
import { checkPatterns, coveringPattern } from '../protocol/scope-pattern.js'
import type { AccessAction } from './types.js'
import { acceptedUntilMs, checkSignedFacts, parseAuthorization, recoverSigner, replayKey, type SignedPayload } from './web3-signed.js'

export const BUILDER_ACCESS = ['builder'] as const

/** What authentication learned about a request, for its route and its log entry. */
interface SignedContext {
  signer: Address | null
  payload: SignedPayload | null
  replayKey: string | null
  claimed: boolean
  /** The budget the request was counted against: its client address, or a registered builder. */
  budgetKey: string
  /** Whether its access-log entry was written. */
  logged: boolean
}

export interface BuilderListenerDeps {
  audience: string
  maxBodyBytes: number
  limiter: RateLimiter
  replay: ReplayCache
  log: AccessLog
  authorizer: Authorizer
  fold: RefusalFold
  logger: Logger
}

export interface BuilderRouteDeps {
  index: FileIndex
  dataDir: string
  storage: StorageBackend
  masterKey: Uint8Array
  requests: AccessRequestStore
  registry: BuilderRegistry
  grants: GrantStore
  authorizer: Authorizer
  log: AccessLog
  replay: ReplayCache
  maxPendingRequests: number
}

const contexts = new WeakMap<IncomingMessage, SignedContext>()
const CORS_EXPOSE = 'x-hearth-collected-at, x-hearth-url, x-hearth-state, x-hearth-file-id, retry-after'

function clientIp (req: IncomingMessage): string | null {
  return req.socket.remoteAddress ?? null
}

function userAgent (req: IncomingMessage): string | null {
  const ua = req.headers['user-agent']
  return typeof ua === 'string' ? ua.slice(0, 256) : null
}

/** One request's access-log entry, from what its authentication learned and how it ended. */
function entryOf (req: IncomingMessage, fields: { action: AccessAction; status: number; errorCode: string | null; bytes: number; grantId: string | null; scope: string | null }): NewAccessLogEntry {
  return { builder: contexts.get(req)?.signer ?? null, ...fields, ip: clientIp(req), userAgent: userAgent(req) }
}

/** The log entry of one request (and the writes that go with it: replay claim, read counter). */
async function record (deps: { log: AccessLog; replay: ReplayCache; grants?: GrantStore }, req: IncomingMessage, entry: NewAccessLogEntry, countRead = false): Promise<void> {
  const ctx = contexts.get(req)
  if (ctx !== undefined) ctx.logged = true
  await deps.log.append(entry, async () => {
    const ops: BatchOp[] = []
    if (ctx?.claimed === true && ctx.replayKey !== null && ctx.payload !== null) ops.push(deps.replay.persistOp(ctx.replayKey, acceptedUntilMs(ctx.payload)))
    if (countRead && entry.grantId !== null && deps.grants !== undefined && ID_PATTERN.test(entry.grantId)) ops.push(await deps.grants.readOp(entry.grantId))
    return ops
  })
}

/**
 * Who the request is and which budget it spends: a registered builder its own, whoever shares its
 * address (a reverse proxy); anything else — no valid signature, or an unknown key, which a caller
 * can make afresh for every request — its client address, before the chain is asked about it.
 */
async function authenticateSigned (deps: BuilderListenerDeps, req: IncomingMessage, signed: SignedContext, bytes: () => Promise<Buffer>): Promise<Address> {
  let encoded: string
  let payload: SignedPayload
  let signer: Address
  try {
    const parsed = parseAuthorization(req.headers.authorization)
    encoded = parsed.encoded
    payload = signed.payload = parsed.payload
    signer = signed.signer = await recoverSigner(parsed.encoded, parsed.signature, parsed.payload.iss)
  } catch (err) {
    deps.limiter.take(signed.budgetKey)
    throw err
  }
  const key = signed.replayKey = replayKey(encoded, signer)
  let registered = await deps.authorizer.isRegistered(signer, { askChain: false })
  if (!registered) {
    deps.limiter.take(signed.budgetKey)
    registered = await deps.authorizer.isRegistered(signer)
  }
  if (registered) {
    signed.budgetKey = signer
    deps.limiter.take(signer)
  }
  checkSignedFacts(payload, { method: req.method ?? 'GET', uri: req.url ?? '/', body: await bytes(), now: Math.floor(Date.now() / 1000) }, deps.audience)
  if (!registered) throw new HearthError('BUILDER_NOT_REGISTERED', `${signer} is not a registered builder (DataPortabilityGrantees, or the owner's local registry)`)
  // only a registered builder's requests are remembered: a stranger's are refused every time anyway
  if (!deps.replay.claim(key, acceptedUntilMs(payload))) throw new HearthError('SIGNATURE_REPLAYED', 'this signature was used already; sign every request anew')
  signed.claimed = true
  return signer
}

export function builderListener (deps: BuilderListenerDeps): Listener {
  return {
    name: 'builder',
    serves: BUILDER_ACCESS,
    maxBodyBytes: deps.maxBodyBytes,
    headers: () => ({ 'access-control-allow-origin': '*', 'access-control-expose-headers': CORS_EXPOSE, vary: 'origin' }),
    intercept (req) {
      if (req.method !== 'OPTIONS') return null
      return {
        status: 204,
        headers: {
          'access-control-allow-methods': 'GET, POST, OPTIONS',
          'access-control-allow-headers': 'authorization, content-type',
          'access-control-max-age': '600'
        }
      }
    },
    async authenticate (req, ctx) {
      const signed: SignedContext = { signer: null, payload: null, replayKey: null, claimed: false, budgetKey: addressBudgetKey(clientIp(req)), logged: false }
      contexts.set(req, signed)
      return { access: BUILDER_ACCESS, id: await authenticateSigned(deps, req, signed, ctx.bytes) }
    },
    // every refusal is logged here, wherever it happened (before authentication, in it, or a
    // route this listener does not have), unless its route logged it already
    async refused (req, error) {
      const ctx = contexts.get(req)
      if (ctx?.logged === true) return
      const entry = entryOf(req, { action: 'denied', status: error.error.code, errorCode: error.error.errorCode, bytes: 0, grantId: ctx?.payload?.grantId ?? null, scope: null })
      if (ctx === undefined) {
        // refused before authentication (a dot-segment path): counted against its address like any unsigned request
        const key = addressBudgetKey(clientIp(req))
        try { deps.limiter.take(key) } catch { await deps.fold.note(key, entry); return }
        await record(deps, req, entry)
        return
      }
      if (error.error.errorCode === 'RATE_LIMITED') await deps.fold.note(ctx.budgetKey, entry)
      else await record(deps, req, entry)
    }
  }
}

/** Runs a builder route; logs what it served or why it refused. */
function logged (deps: BuilderRouteDeps, action: AccessAction, handler: (req: ApiRequest, ctx: SignedContext, note: { grantId: string | null; scope: string | null }) => Promise<Reply>) {
  return async (req: ApiRequest): Promise<Reply> => {
    const ctx = contexts.get(req.raw) as SignedContext
    const note: { grantId: string | null; scope: string | null } = { grantId: ctx.payload?.grantId ?? null, scope: null }
    try {
      const reply = await handler(req, ctx, note)
      const bytes = reply.body === undefined ? 0 : Buffer.byteLength(JSON.stringify(reply.body))
      await record(deps, req.raw, entryOf(req.raw, { action, status: reply.status, errorCode: null, bytes, grantId: note.grantId, scope: note.scope }), action !== 'request-access' && action !== 'request-status')
      return reply
    } catch (err) {
      const body = toErrorBody(err)
      await record(deps, req.raw, entryOf(req.raw, { action, status: body.error.code, errorCode: body.error.errorCode, bytes: 0, grantId: note.grantId, scope: note.scope }))
      throw err
    }
  }
}

export function addBuilderRoutes (router: Router, deps: BuilderRouteDeps): void {
  const access = { access: BUILDER_ACCESS }

  router.get('/v1/data', logged(deps, 'list', async (req, ctx, note) => {
    const grants = await deps.authorizer.grantsFor(ctx.signer as Address, ctx.payload?.grantId)
    note.grantId = grants.length === 1 ? grants[0]!.grantId : null
    const patterns = grants.flatMap((g) => g.scopes)
    const prefix = stringParam(req.url, 'scopePrefix', 128) ?? ''
    const limit = intParam(req.url, 'limit', 100, 1000)
    const offset = intParam(req.url, 'offset', 0, 1_000_000_000)
    const covered = []
    for (let page = 0; ; page++) {
      const scopes = await deps.index.scopes({ prefix, limit: 1000, offset: page * 1000 })
      for (const s of scopes) if (coveringPattern(patterns, s.scope) !== null) covered.push(s)
      if (scopes.length < 1000 || covered.length >= offset + limit) break
    }
    return ok({ scopes: covered.slice(offset, offset + limit), limit, offset })
  }), access)

  /** The scope of the path and the grant covering it, noted for the log entry. */
  async function coveredScope (req: ApiRequest, ctx: SignedContext, note: { grantId: string | null; scope: string | null }) {
    const scope = assertScope(req.params.scope)
    note.scope = scope
    const grant = deps.authorizer.coveringGrant(await deps.authorizer.grantsFor(ctx.signer as Address, ctx.payload?.grantId), scope)
    note.grantId = grant.grantId
    return { scope, grant }
  }

  router.get('/v1/data/:scope', logged(deps, 'read', async (req, ctx, note) => {
    const { scope, grant } = await coveredScope(req, ctx, note)
    const record = await findVersion(deps.index, scope, req.url, (other) => new HearthError('FILE_NOT_IN_SCOPE', `that fileId is not a file of ${scope}`, { scope, covered: coveringPattern(grant.scopes, other.scope) !== null }))
    return await versionReply(deps, record)
  }), access)

  router.get('/v1/data/:scope/versions', logged(deps, 'versions', async (req, ctx, note) => {
    const { scope } = await coveredScope(req, ctx, note)
    const page = await listVersions(deps.index, scope, req.url)
    // a builder sees the versions, not where the owner keeps them
    const versions = (page.versions as Array<Record<string, unknown>>).filter((v) => v.state === 'stored' || v.state === 'registered')
      .map(({ collectedAt, schemaId, url, fileId, state, size }) => ({ collectedAt, schemaId, url, fileId, state, size }))
    return ok({ ...page, versions })
  }), access)

  router.post('/v1/access-requests', logged(deps, 'request-access', async (req, ctx) => {
    const body = await req.json()
    if (body === null || typeof body !== 'object' || Array.isArray(body)) throw new HearthError('INVALID_BODY', 'expected {scopes, expiresAt?, appUrl?, purpose?}')
    const b = body as Record<string, unknown>
    const unknown = Object.keys(b).filter((k) => !['scopes', 'expiresAt', 'appUrl', 'purpose'].includes(k))
    if (unknown.length > 0) throw new HearthError('INVALID_BODY', `unknown fields: ${unknown.slice(0, 5).join(', ')}`)
    const scopes = checkPatterns(b.scopes)
    const expiresAt = checkExpiresAt(b.expiresAt)
    const appUrl = b.appUrl ?? null
    if (appUrl !== null && (typeof appUrl !== 'string' || !/^https?:\/\/\S+$/.test(appUrl) || appUrl.length > 2048)) throw new HearthError('INVALID_BODY', 'appUrl must be an http(s) URL')
    const purpose = b.purpose ?? null
    if (purpose !== null && (typeof purpose !== 'string' || purpose.length > 1000)) throw new HearthError('INVALID_BODY', 'purpose must be a string of at most 1000 characters')
    const created = await deps.requests.create({ builder: ctx.signer as Address, scopes, expiresAt, appUrl: appUrl ?? (await deps.registry.get(ctx.signer as Address))?.appUrl ?? null, purpose }, { maxPendingPerBuilder: deps.maxPendingRequests })
    return ok({ id: created.id, status: created.status, scopes: created.scopes, expiresAt: created.expiresAt }, 201)
  }), access)

  router.get('/v1/access-requests/:id', logged(deps, 'request-status', async (req, ctx, note) => {
    const r = await deps.requests.get(req.params.id ?? '')
    // another builder's request does not exist for this one
    if (r === null || r.builder !== ctx.signer) throw new HearthError('NOT_FOUND', `no access request ${req.params.id ?? ''}`)
    const grant = r.grantId !== null ? await deps.grants.get(r.grantId) : null
    note.grantId = r.grantId
    return ok({ id: r.id, status: r.status, scopes: r.scopes, grantId: r.grantId, permissionId: grant?.permissionId ?? null, grantScopes: grant?.scopes ?? null, expiresAt: grant?.expiresAt ?? r.expiresAt })
  }), access)
}
