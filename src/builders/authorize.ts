// Who a signed request may read (docs/protocol.md §3.8), after its signature checked out:
// the signer is a registered grantee (the local registry, or the chain), then the grant exists,
// was given by this owner, is not revoked, not expired, names the signer — and finally covers the
// scope. Each failure has its own code. Chain answers are cached: registrations are permanent,
// a chain-only permission is re-read after a short while so an on-chain revocation is honoured.
import type { Address } from 'viem'
import { HearthError } from '../errors.js'
import type { Logger } from '../log.js'
import type { PermissionsChain } from '../chain/permissions.js'
import type { BuilderRegistry } from './builder-registry.js'
import type { GrantStore } from './grant-store.js'
import { parseGrant, sameAddress } from './grant.js'
import { ID_PATTERN, PERMISSION_ID_PATTERN } from './ids.js'
import { coveringPattern } from '../protocol/scope-pattern.js'

/** A grant as the read checks see it, wherever it came from. */
export interface ActiveGrant {
  /** The id the builder used (local grant id or permission id). */
  grantId: string
  scopes: string[]
  expiresAt: number
  source: 'local' | 'chain'
}

export interface Authorizer {
  /**
   * Whether `signer` is a registered grantee. `askChain: false` answers from the local registry
   * and what the chain already said, without a chain request (an unknown key's first look).
   */
  isRegistered (signer: Address, opts?: { askChain?: boolean }): Promise<boolean>
  /** The grant `grantId` names for `signer`, or (no id) the signer's active local grants. */
  grantsFor (signer: Address, grantId: string | undefined): Promise<ActiveGrant[]>
  /** The grant of `grants` covering `scope`; SCOPE_NOT_GRANTED when none does. */
  coveringGrant (grants: readonly ActiveGrant[], scope: string): ActiveGrant
}

const CHAIN_PERMISSION_TTL_MS = 15_000
const NEGATIVE_REGISTRATION_TTL_MS = 10_000

export function createAuthorizer (deps: {
  owner: Address
  registry: BuilderRegistry
  grants: GrantStore
  chain: PermissionsChain | null
  logger: Logger
  now?: () => number
}): Authorizer {
  const { owner, registry, grants, chain, logger } = deps
  const nowMs = deps.now ?? Date.now
  const registered = new Map<string, { granteeId: bigint; until: number }>()
  const permissions = new Map<string, { grant: ActiveGrant & { granteeId: bigint; builder: string }; until: number } | { error: HearthError; until: number }>()

  async function chainGranteeId (signer: Address): Promise<bigint> {
    const key = signer.toLowerCase()
    const cached = registered.get(key)
    if (cached !== undefined && cached.until > nowMs()) return cached.granteeId
    if (chain === null) return 0n
    const granteeId = await chain.granteeId(signer)
    registered.set(key, { granteeId, until: granteeId === 0n ? nowMs() + NEGATIVE_REGISTRATION_TTL_MS : Number.MAX_SAFE_INTEGER })
    if (granteeId !== 0n) await registry.setGranteeId(signer, granteeId.toString())
    return granteeId
  }

  const refreshing = new Set<string>()

  /**
   * Whether a local grant that is on chain was revoked there (by another device of the owner).
   * Never waits for the chain: a stale answer is refreshed in the background, so reads stay
   * local and offline-proof, and an on-chain revocation is honoured within the cache time.
   */
  function revokedOnChain (permissionId: string, grantId: string): boolean {
    const cached = permissions.get(permissionId)
    if (chain !== null && (cached === undefined || cached.until <= nowMs()) && !refreshing.has(permissionId)) {
      refreshing.add(permissionId)
      void readChainPermission(permissionId).then(async (entry) => {
        permissions.set(permissionId, entry)
        if ('error' in entry && entry.error?.code === 'GRANT_REVOKED') {
          await grants.update(grantId, (r) => r.revokedAt !== null ? r : { ...r, revokedAt: new Date().toISOString(), chain: 'revoked-on-chain' })
          logger.info({ grantId, permissionId }, 'grant revoked on chain elsewhere; revoked here too')
        }
      }).catch((err: unknown) => { logger.warn({ err, permissionId }, 'cannot refresh a permission from the chain') })
        .finally(() => { refreshing.delete(permissionId) })
    }
    return cached !== undefined && 'error' in cached && cached.error?.code === 'GRANT_REVOKED'
  }

  function expired (expiresAt: number): boolean {
    return expiresAt !== 0 && expiresAt * 1000 <= nowMs()
  }

  async function fromChain (permissionId: string, signer: Address): Promise<ActiveGrant> {
    const cached = permissions.get(permissionId)
    let entry = cached !== undefined && cached.until > nowMs() ? cached : undefined
    if (entry === undefined) {
      entry = await readChainPermission(permissionId)
      permissions.set(permissionId, entry)
    }
    if ('error' in entry) throw entry.error
    const g = entry.grant
    if (expired(g.expiresAt)) throw new HearthError('GRANT_EXPIRED', `grant ${permissionId} expired`, { grantId: permissionId, expiresAt: g.expiresAt })
    if (!sameAddress(g.builder, signer) || g.granteeId !== await chainGranteeId(signer)) {
      throw new HearthError('GRANT_WRONG_BUILDER', `grant ${permissionId} was given to another builder`, { grantId: permissionId })
    }
    return { grantId: g.grantId, scopes: g.scopes, expiresAt: g.expiresAt, source: g.source }
  }

  async function readChainPermission (permissionId: string) {
    const until = nowMs() + CHAIN_PERMISSION_TTL_MS
    const p = await (chain as PermissionsChain).permission(BigInt(permissionId)).catch((err: unknown) => {
      logger.warn({ permissionId, err: (err as Error).message }, 'cannot read a permission from the chain')
      return undefined
    })
    if (p === undefined) return { error: new HearthError('GRANT_NOT_FOUND', `grant ${permissionId} is not known here and the chain is unreachable`, { grantId: permissionId }), until: nowMs() + 1_000 }
    if (p === null) return { error: new HearthError('GRANT_NOT_FOUND', `no grant ${permissionId}`, { grantId: permissionId }), until }
    if (!sameAddress(p.grantor, owner)) return { error: new HearthError('GRANT_WRONG_OWNER', `grant ${permissionId} was given by another owner`, { grantId: permissionId }), until }
    if (p.endBlock !== 0n) return { error: new HearthError('GRANT_REVOKED', `grant ${permissionId} was revoked`, { grantId: permissionId }), until }
    let parsed
    try { parsed = parseGrant(p.grant) } catch {
      return { error: new HearthError('GRANT_NOT_FOUND', `grant ${permissionId} does not hold a grant this daemon understands`, { grantId: permissionId }), until }
    }
    if (!sameAddress(parsed.user, owner)) return { error: new HearthError('GRANT_WRONG_OWNER', `grant ${permissionId} names another owner`, { grantId: permissionId }), until }
    return { grant: { grantId: permissionId, scopes: parsed.scopes, expiresAt: parsed.expiresAt, source: 'chain' as const, granteeId: p.granteeId, builder: parsed.builder }, until }
  }

  return {
    async isRegistered (signer, opts = {}) {
      if (await registry.get(signer) !== null) return true
      if (opts.askChain === false) return (registered.get(signer.toLowerCase())?.granteeId ?? 0n) !== 0n
      try {
        return await chainGranteeId(signer) !== 0n
      } catch (err) {
        logger.warn({ builder: signer, err: (err as Error).message }, 'cannot ask the chain whether a builder is registered')
        return false
      }
    },

    async grantsFor (signer, grantId) {
      if (grantId === undefined) {
        const mine = (await grants.byBuilder(signer)).filter((g) => g.revokedAt === null && !expired(g.expiresAt) && !(g.permissionId !== null && revokedOnChain(g.permissionId, g.grantId)))
        if (mine.length === 0) throw new HearthError('GRANT_NOT_FOUND', 'this builder holds no active grant; ask for access (POST /v1/access-requests) or send grantId')
        return mine.map((g) => ({ grantId: g.grantId, scopes: g.scopes, expiresAt: g.expiresAt, source: 'local' }))
      }
      const local = ID_PATTERN.test(grantId) ? await grants.get(grantId) : PERMISSION_ID_PATTERN.test(grantId) ? await grants.byPermissionId(grantId) : null
      if (local === null) {
        if (chain !== null && PERMISSION_ID_PATTERN.test(grantId)) return [await fromChain(grantId, signer)]
        throw new HearthError('GRANT_NOT_FOUND', `no grant ${grantId}`, { grantId })
      }
      if (local.revokedAt !== null || (local.permissionId !== null && revokedOnChain(local.permissionId, local.grantId))) {
        throw new HearthError('GRANT_REVOKED', `grant ${grantId} was revoked`, { grantId, ...(local.revokedAt !== null ? { revokedAt: local.revokedAt } : {}) })
      }
      if (expired(local.expiresAt)) throw new HearthError('GRANT_EXPIRED', `grant ${grantId} expired`, { grantId, expiresAt: local.expiresAt })
      if (!sameAddress(local.builder, signer)) throw new HearthError('GRANT_WRONG_BUILDER', `grant ${grantId} was given to another builder`, { grantId })
      return [{ grantId: local.grantId, scopes: local.scopes, expiresAt: local.expiresAt, source: 'local' }]
    },

    coveringGrant (list, scope) {
      for (const g of list) if (coveringPattern(g.scopes, scope) !== null) return g
      throw new HearthError('SCOPE_NOT_GRANTED', `no grant of this builder covers ${scope}`, { scope })
    }
  }
}
