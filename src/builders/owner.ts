// The owner's side of builders (docs/protocol.md §3.8): the builders the owner trusts, the
// access requests with their consent labels, approving (the owner's EIP-712 signature, usable
// locally at once, queued for the chain), denying, revoking (enforced locally at once, then on
// chain) and reading the grants.
import type { Address, Hex } from 'viem'
import { checksumAddress, isAddress } from '../protocol/eth.js'
import type { Kv } from '../db/database.js'
import { HearthError } from '../errors.js'
import type { Logger } from '../log.js'
import type { ConnectorMetadata } from '../connectors/types.js'
import type { PermissionsChain } from '../chain/permissions.js'
import type { AccessRequestStore } from './access-requests.js'
import type { BuilderRegistry } from './builder-registry.js'
import { consentFor, type ConsentItem } from '../connectors/consent.js'
import type { GrantStore } from './grant-store.js'
import { checkExpiresAt, grantJson } from './grant.js'
import { timeOrderedId } from './ids.js'
import { domainKey, type RelayJob } from './relay.js'
import { checkPatterns } from '../protocol/scope-pattern.js'
import { permissionTypedData, type PermissionDomainTarget } from './typed-data.js'
import type { AccessRequest, BuilderRecord, GrantRecord } from './types.js'

export const WALLET_KEY_HINT = 'approving a grant is the owner\'s EIP-712 signature, and this identity holds only the master signature, not the wallet key. ' +
  'Stop the daemon and run `hearth init --force --yes --private-key-file <file>` (or `--mnemonic-file`) with the same wallet: the master key stays the same, so no data is lost'

export interface OwnerBuilders {
  registerBuilder (input: { address: string; publicKey: string; appUrl?: string | null }): Promise<BuilderRecord & { onChain: boolean }>
  builders (): Promise<BuilderRecord[]>
  requestView (r: AccessRequest): Promise<AccessRequest & { consent: ConsentItem[]; builderInfo: BuilderRecord | null }>
  approve (requestId: string, opts?: { scopes?: unknown; expiresAt?: unknown }): Promise<{ request: AccessRequest; grant: GrantRecord }>
  deny (requestId: string): Promise<AccessRequest>
  revoke (grantId: string): Promise<GrantRecord>
  grantView (g: GrantRecord): Promise<GrantRecord & { reads: number; state: 'active' | 'revoked' | 'expired' }>
}

export function createOwnerBuilders (deps: {
  owner: Address
  ownerKey: Hex | undefined
  registry: BuilderRegistry
  requests: AccessRequestStore
  grants: GrantStore
  meta: Kv<number>
  perms: PermissionsChain | null
  /** Queues a relay job; null when no chain with builder contracts is configured. */
  relay: ((job: RelayJob) => Promise<void>) | null
  connectors: () => Promise<readonly ConnectorMetadata[]>
  logger: Logger
}): OwnerBuilders {
  const { owner, registry, requests, grants, perms, logger } = deps
  const target: PermissionDomainTarget | null = perms === null ? null : { chainId: perms.chainId, verifyingContract: perms.permissions }

  async function nextNonce (): Promise<bigint> {
    const local = (await deps.meta.get('nextNonce')) ?? 0
    let chainNonce = 0n
    if (perms !== null) chainNonce = await perms.userNonce(owner).catch(() => 0n)
    const nonce = BigInt(local) > chainNonce ? BigInt(local) : chainNonce
    await deps.meta.put('nextNonce', Number(nonce) + 1)
    return nonce
  }

  async function granteeIdOf (builder: Address): Promise<bigint> {
    const local = await registry.get(builder)
    if (local?.granteeId != null) return BigInt(local.granteeId)
    if (perms === null) return 0n
    return await perms.granteeId(builder).catch(() => 0n)
  }

  return {
    async registerBuilder (input) {
      if (typeof input.address !== 'string' || !isAddress(input.address)) throw new HearthError('INVALID_ARGUMENT', 'address must be an EVM address')
      if (typeof input.publicKey !== 'string' || input.publicKey.length === 0 || input.publicKey.length > 1024) throw new HearthError('INVALID_ARGUMENT', 'publicKey must be a non-empty string of at most 1024 characters')
      const appUrl = input.appUrl ?? null
      if (appUrl !== null && (typeof appUrl !== 'string' || !/^https?:\/\/\S+$/.test(appUrl) || appUrl.length > 2048)) throw new HearthError('INVALID_ARGUMENT', 'appUrl must be an http(s) URL')
      const address = checksumAddress(input.address)
      let granteeId: string | null = (await registry.get(address))?.granteeId ?? null
      if (perms !== null) granteeId = (await perms.registerGrantee(owner, address, input.publicKey)).granteeId.toString()
      const record: BuilderRecord = { address, publicKey: input.publicKey, appUrl, owner, registeredAt: new Date().toISOString(), granteeId }
      await registry.put(record)
      logger.info({ builder: address, granteeId }, 'builder registered')
      return { ...record, onChain: granteeId !== null }
    },

    async builders () { return await registry.list() },

    async requestView (r) {
      return { ...r, consent: consentFor(r.scopes, await deps.connectors()), builderInfo: await registry.get(r.builder) }
    },

    async approve (requestId, opts = {}) {
      const request = await requests.pending(requestId)
      if (deps.ownerKey === undefined) throw new HearthError('WALLET_KEY_MISSING', WALLET_KEY_HINT)
      const scopes = opts.scopes === undefined || opts.scopes === null ? request.scopes : checkPatterns(opts.scopes, 'scopes')
      const expiresAt = opts.expiresAt === undefined ? request.expiresAt : checkExpiresAt(opts.expiresAt)
      if (expiresAt !== 0 && expiresAt * 1000 <= Date.now()) throw new HearthError('INVALID_ARGUMENT', 'expiresAt is in the past')
      const nonce = await nextNonce()
      const granteeId = await granteeIdOf(request.builder)
      const grant = grantJson({ user: owner, builder: request.builder, scopes, expiresAt, nonce: Number(nonce) })
      const { privateKeyToAccount } = await import('viem/accounts')
      const signature = await privateKeyToAccount(deps.ownerKey).signTypedData(permissionTypedData(target, { nonce, granteeId, grant, fileIds: [] }))
      const record: GrantRecord = {
        grantId: timeOrderedId('grant'),
        requestId,
        builder: request.builder,
        scopes,
        expiresAt,
        grant,
        nonce: nonce.toString(),
        granteeId: granteeId.toString(),
        signature,
        domain: domainKey(target),
        createdAt: new Date().toISOString(),
        revokedAt: null,
        permissionId: null,
        chain: deps.relay === null ? 'local' : 'queued',
        chainError: null
      }
      await grants.put(record)
      const decided = await requests.decide(requestId, 'approved', record.grantId)
      if (deps.relay !== null) await deps.relay({ kind: 'add', grantId: record.grantId })
      logger.info({ requestId, grantId: record.grantId, builder: request.builder, scopes }, 'access request approved')
      return { request: decided, grant: record }
    },

    async deny (requestId) {
      const decided = await requests.decide(requestId, 'denied', null)
      logger.info({ requestId, builder: decided.builder }, 'access request denied')
      return decided
    },

    async revoke (grantId) {
      const current = await grants.get(grantId)
      if (current === null) throw new HearthError('NOT_FOUND', `no grant ${grantId}`)
      if (current.revokedAt !== null) return current
      const revoked = await grants.update(grantId, (r) => ({
        ...r,
        revokedAt: new Date().toISOString(),
        chain: r.chain === 'local' ? 'never' : (r.permissionId !== null || r.chain === 'queued') ? 'revoke-queued' : r.chain
      })) as GrantRecord
      if (deps.relay !== null && revoked.chain === 'revoke-queued') await deps.relay({ kind: 'revoke', grantId })
      logger.info({ grantId, builder: revoked.builder }, 'grant revoked')
      return revoked
    },

    async grantView (g) {
      const state = g.revokedAt !== null ? 'revoked' : g.expiresAt !== 0 && g.expiresAt * 1000 <= Date.now() ? 'expired' : 'active'
      return { ...g, reads: await grants.reads(g.grantId), state }
    }
  }
}
