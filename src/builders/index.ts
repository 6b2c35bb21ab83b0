// The builder side of the daemon (docs/protocol.md §3.8), built from its parts: the stores in
// the one database, the chain's builder contracts when configured, the relay queue, the owner's
// routes on the owner listeners and — when `builders.listen` is set — the builder listener. The
// owner's side behind those routes (approving, consent labels, EIP-712 typed data) loads on the
// first request that needs it: an idle daemon keeps its memory (README, "Idle memory").
import type { Address } from 'viem'
import type { HearthDatabase } from '../db/database.js'
import { openKv } from '../db/database.js'
import { createDurableQueue } from '../db/queue.js'
import type { FileIndex } from '../db/file-index.js'
import type { Logger } from '../log.js'
import type { HearthConfig } from '../config/types.js'
import type { OwnerIdentity } from '../identity/identity.js'
import type { ChainClient } from '../chain/client.js'
import type { PermissionsChain } from '../chain/permissions.js'
import type { StorageBackend } from '../storage/types.js'
import type { Router } from '../api/router.js'
import type { ApiServer } from '../api/server.js'
import { scanConnectors } from '../connectors/loader.js'
import { openAccessLog } from './access-log.js'
import { openAccessRequests } from './access-requests.js'
import { openBuilderRegistry } from './builder-registry.js'
import { openGrantStore } from './grant-store.js'
import type { OwnerBuilders } from './owner.js'
import { addOwnerBuilderRoutes } from './owner-routes.js'
import type { GrantRelay, RelayJob, RelayState } from './relay.js'
import { openReplayCache } from './replay-cache.js'

export interface BuildersDeps {
  config: HearthConfig['builders']
  db: HearthDatabase
  index: FileIndex
  storage: StorageBackend
  dataDir: string
  identity: OwnerIdentity
  /** The chain client, when a chain is configured. */
  chain: ChainClient | null
  /** The chain's permission contracts (`createPermissionsChain`), when the configured chain has them. */
  permissions: PermissionsChain | null
  connectorDirs: readonly string[]
  logger: Logger
}

export interface Builders {
  /** The owner's side, loaded on first use. */
  owner (): Promise<OwnerBuilders>
  /** Adds the owner routes and the builder routes to the daemon's router. */
  addRoutes (router: Router): void
  /** Starts the relay and, when configured, the builder listener; returns its port and audience. */
  start (api: ApiServer): Promise<{ port: number | null; audience: string | null }>
  stop (): Promise<void>
  status (): Promise<Record<string, unknown>>
}

const PRUNE_EVERY_MS = 60 * 60_000

type AuthorizerDeps = Parameters<typeof import('./authorize.js')['createAuthorizer']>[0]

/** `host:port` (IPv6 in brackets) → its parts. */
export function parseListen (listen: string): { host: string; port: number } {
  const m = /^(?:\[([^\]]+)\]|([^:]+)):(\d{1,5})$/.exec(listen)
  const port = m === null ? Number.NaN : Number(m[3])
  if (m === null || port > 65535) throw new Error(`builders.listen must be host:port, got ${JSON.stringify(listen)}`)
  return { host: (m[1] ?? m[2]) as string, port }
}

/**
 * The builder side; the builder listener's part (its routes, request signatures with the native
 * libsecp256k1, rate limits, authorization) is loaded only when `builders.listen` is set: without
 * that listener no caller holds `builder` access, so its routes could never be reached.
 */
export async function setUpBuilders (deps: BuildersDeps): Promise<Builders> {
  const { db, identity, logger, config } = deps
  const owner = identity.ownerAddress as Address
  const registry = openBuilderRegistry(db)
  const requests = openAccessRequests(db)
  const grants = openGrantStore(db)
  const log = openAccessLog(db)
  const replay = openReplayCache(db)
  const perms = deps.chain === null ? null : deps.permissions
  const network = perms === null ? null : `${perms.chainId}-${perms.permissions.toLowerCase()}`
  const relay: GrantRelay | null = perms === null || deps.chain === null || network === null
    ? null
    : (await import('./relay.js')).createGrantRelay({
      queue: createDurableQueue<RelayJob>(db, `grant-relay-${network}`),
      state: openKv<RelayState>(db, `grant-relay-${network}`),
      client: deps.chain,
      perms,
      grants,
      registry,
      owner,
      ownerKey: identity.ownerPrivateKey,
      logger
    })
  const listenerSide = config.listen === null ? null : await loadListenerSide(config.listen, { owner, registry, grants, chain: perms, logger })
  let ownerSide: Promise<OwnerBuilders> | null = null
  const ownerBuilders = async (): Promise<OwnerBuilders> => {
    const loading = ownerSide ??= import('./owner.js').then(({ createOwnerBuilders }) => createOwnerBuilders({
      owner,
      ownerKey: identity.ownerPrivateKey,
      registry,
      requests,
      grants,
      meta: openKv<number>(db, 'builders-meta'),
      perms,
      relay: relay === null ? null : async (job) => { await relay.enqueue(job) },
      connectors: async () => (await scanConnectors(deps.connectorDirs)).connectors.map((c) => c.metadata),
      logger
    }))
    // a failed load is tried again by the next request
    return await loading.catch((err: unknown) => { if (ownerSide === loading) ownerSide = null; throw err })
  }
  let timer: NodeJS.Timeout | null = null
  let audience: string | null = null

  /** Grants approved while no chain was configured go on chain now that one is. */
  async function queueLocalGrants (): Promise<void> {
    if (relay === null) return
    for (let before: string | undefined; ;) {
      const page = await grants.list({ limit: 200, ...(before !== undefined ? { before } : {}) })
      if (page.length === 0) break
      for (const g of page) {
        if (g.chain === 'local' && g.revokedAt === null) {
          await grants.update(g.grantId, (r) => ({ ...r, chain: 'queued' }))
          await relay.enqueue({ kind: 'add', grantId: g.grantId })
        }
      }
      before = page[page.length - 1]!.grantId
    }
  }

  return {
    owner: ownerBuilders,
    addRoutes (router) {
      addOwnerBuilderRoutes(router, { owner: ownerBuilders, requests, grants, log })
      if (listenerSide === null) return
      listenerSide.addBuilderRoutes(router, {
        index: deps.index,
        dataDir: deps.dataDir,
        storage: deps.storage,
        masterKey: identity.masterKey,
        requests,
        registry,
        grants,
        authorizer: listenerSide.authorizer,
        log,
        replay,
        maxPendingRequests: config.maxPendingRequests
      })
    },
    async start (api) {
      await replay.load()
      const prune = async (): Promise<void> => {
        await replay.prune()
        const dropped = await log.prune(Date.now() - config.accessLogDays * 86_400_000)
        if (dropped > 0) logger.info({ dropped }, 'old access-log days dropped')
      }
      await prune()
      timer = setInterval(() => { prune().catch((err: unknown) => logger.warn({ err }, 'access-log pruning failed')) }, PRUNE_EVERY_MS)
      timer.unref()
      if (relay !== null) {
        await queueLocalGrants()
        relay.start()
      }
      if (listenerSide === null) return { port: null, audience: null }
      const { host, port } = listenerSide.listen
      const listenerDeps = {
        audience: '',
        maxBodyBytes: config.maxBodyBytes,
        limiter: listenerSide.createRateLimiter(config.rateLimitPerMinute),
        replay,
        log,
        authorizer: listenerSide.authorizer,
        fold: listenerSide.createRefusalFold(log),
        logger
      }
      const listener = listenerSide.builderListener(listenerDeps)
      const loopbackHost = host === 'localhost' || host === '::1' || host.startsWith('127.')
      const bound = await api.listen(listener, { host, port, configKey: 'builders.listen', exposed: !loopbackHost })
      audience = config.publicUrl ?? `http://${host.includes(':') ? `[${host}]` : host}:${bound.port ?? port}`
      listenerDeps.audience = audience
      logger.info({ host, port: bound.port, audience }, 'builder listener ready')
      return { port: bound.port, audience }
    },
    async stop () {
      if (timer !== null) clearInterval(timer)
      await relay?.stop()
    },
    async status () {
      const pending = await requests.list({ status: 'pending', limit: 1000 })
      return {
        listener: audience,
        chain: perms === null ? 'none: builders and grants are local' : { grantees: perms.grantees, permissions: perms.permissions },
        pendingRequests: pending.length,
        relay: relay === null ? null : await relay.status()
      }
    }
  }
}

/**
 * The builder listener's part, loaded once and only with `builders.listen`: where it listens, its
 * routes and listener, rate limits and the authorizer.
 */
async function loadListenerSide (listen: string, authorizing: AuthorizerDeps) {
  const [{ addBuilderRoutes, builderListener }, { createAuthorizer }, { createRateLimiter }, { createRefusalFold }] = await Promise.all([import('./listener.js'), import('./authorize.js'), import('./rate-limit.js'), import('./refusal-fold.js')])
  return { listen: parseListen(listen), addBuilderRoutes, builderListener, createRateLimiter, createRefusalFold, authorizer: createAuthorizer(authorizing) }
}
