// Relays approvals and revocations to the chain (docs/protocol.md §3.8) through a durable queue,
// like file registrations: an approval is usable locally at once; here it becomes an on-chain
// permission (`addPermission`, signed by the owner, sent by the daemon's key) and a revocation a
// `revokePermission` (sent by the owner's key: only the grantor may revoke).
//   - The signature must carry the chain's next nonce for the owner and the builder's grantee id:
//     when the local approval was signed before either was known (offline, or another device used
//     the nonce), the daemon signs again with the owner's key before relaying.
//   - A builder the owner registered locally but not on chain is registered first.
//   - addPermission is not idempotent, so the block it started from is noted before sending; after
//     a crash the owner's PermissionAdded events from there tell whether it landed.
import type { Address, Hex } from 'viem'
import type { Kv } from '../db/database.js'
import type { DurableQueue, QueueEntry } from '../db/types.js'
import { HearthError, isHearthError } from '../errors.js'
import type { Logger } from '../log.js'
import type { ChainClient } from '../chain/client.js'
import type { PermissionsChain } from '../chain/permissions.js'
import { backoffDelay, createPollLoop, DEFAULT_BACKOFF, type Backoff } from '../lifecycle/poll-loop.js'
import type { BuilderRegistry } from './builder-registry.js'
import type { GrantStore } from './grant-store.js'
import { grantJson, parseGrant } from './grant.js'
import { permissionTypedData, type PermissionDomainTarget } from './typed-data.js'
import type { GrantRecord } from './types.js'

export interface RelayJob { kind: 'add' | 'revoke'; grantId: string }

export type RelayState = { fromBlock: string; grant: string; txHash?: Hex; sentAt?: number }

export interface GrantRelay {
  enqueue (job: RelayJob): Promise<void>
  start (): void
  stop (): Promise<void>
  kick (): void
  runOnce (signal?: AbortSignal): Promise<void>
  status (): Promise<{ pending: number; lastError: string | null; reachable: boolean | null }>
}

const BATCH = 8
const PENDING_PATIENCE_MS = 10 * 60_000

export function domainKey (target: PermissionDomainTarget | null): string {
  return target === null ? 'local' : `${target.chainId}:${target.verifyingContract.toLowerCase()}`
}

export function createGrantRelay (deps: {
  queue: DurableQueue<RelayJob>
  state: Kv<RelayState>
  client: ChainClient
  perms: PermissionsChain
  grants: GrantStore
  registry: BuilderRegistry
  owner: Address
  /** The owner's wallet key; undefined = relaying needs a signature this identity cannot make. */
  ownerKey: Hex | undefined
  logger: Logger
  pollIntervalMs?: number
  backoff?: Backoff
}): GrantRelay {
  const { queue, state, client, perms, grants, registry, owner, logger } = deps
  const backoff = deps.backoff ?? DEFAULT_BACKOFF
  const target: PermissionDomainTarget = { chainId: perms.chainId, verifyingContract: perms.permissions }
  let lastError: string | null = null
  let reachable: boolean | null = null

  function ownerKey (): Hex {
    if (deps.ownerKey === undefined) throw new HearthError('WALLET_KEY_MISSING', 'relaying a grant needs the owner\'s wallet key; this identity holds only the master signature')
    return deps.ownerKey
  }

  async function granteeIdOf (builder: Address): Promise<bigint> {
    const known = await perms.granteeId(builder)
    if (known !== 0n) return known
    const local = await registry.get(builder)
    if (local === null) throw new HearthError('BUILDER_NOT_REGISTERED', `builder ${builder} is registered neither on chain nor locally`)
    const { granteeId } = await perms.registerGrantee(local.owner, local.address, local.publicKey)
    logger.info({ builder, granteeId: granteeId.toString() }, 'builder registered on chain as a grantee')
    return granteeId
  }

  async function finishAdd (g: GrantRecord, permissionId: bigint, key: string): Promise<void> {
    const updated = await grants.update(g.grantId, (r) => ({ ...r, permissionId: permissionId.toString(), chain: r.revokedAt !== null ? 'revoke-queued' : 'on-chain', chainError: null }))
    await state.del(g.grantId)
    await queue.ack(key)
    logger.info({ grantId: g.grantId, permissionId: permissionId.toString() }, 'grant relayed on chain')
    if (updated?.revokedAt != null) await queue.enqueue(`revoke:${g.grantId}`, { kind: 'revoke', grantId: g.grantId })
  }

  async function relayAdd (entry: QueueEntry<RelayJob>): Promise<void> {
    const g = await grants.get(entry.item.grantId)
    if (g === null || g.permissionId !== null) { await queue.ack(entry.key); return }
    const st = await state.get(g.grantId)
    if (st !== undefined) {
      const landed = (await perms.permissionsAddedBy(owner, BigInt(st.fromBlock))).find((e) => e.grant === st.grant)
      if (landed !== undefined) { await finishAdd(g, landed.permissionId, entry.key); return }
      if (st.txHash !== undefined && Date.now() - (st.sentAt ?? 0) < PENDING_PATIENCE_MS && await client.transactionState(st.txHash) === 'pending') return
    }
    if (g.revokedAt !== null) {
      // revoked before it ever reached the chain: it never will
      await grants.update(g.grantId, (r) => ({ ...r, chain: 'never', chainError: null }))
      await state.del(g.grantId)
      await queue.ack(entry.key)
      return
    }
    const granteeId = await granteeIdOf(g.builder)
    await registry.setGranteeId(g.builder, granteeId.toString())
    const nonce = await perms.userNonce(owner)
    let current = g
    if (g.domain !== domainKey(target) || g.nonce !== nonce.toString() || g.granteeId !== granteeId.toString()) {
      const grant = grantJson({ ...parseGrant(g.grant), nonce: Number(nonce) })
      const { privateKeyToAccount } = await import('viem/accounts')
      const account = privateKeyToAccount(ownerKey())
      const signature = await account.signTypedData(permissionTypedData(target, { nonce, granteeId, grant, fileIds: [] }))
      current = await grants.update(g.grantId, (r) => ({ ...r, grant, signature, nonce: nonce.toString(), granteeId: granteeId.toString(), domain: domainKey(target) })) ?? g
    }
    const fromBlock = (await client.blockNumber()).toString()
    await state.put(g.grantId, { fromBlock, grant: current.grant })
    const { permissionId } = await perms.addPermission({ nonce, granteeId, grant: current.grant, fileIds: [] }, current.signature, {
      onSent: async (txHash) => { await state.put(g.grantId, { fromBlock, grant: current.grant, txHash, sentAt: Date.now() }) }
    })
    await finishAdd(current, permissionId, entry.key)
  }

  async function relayRevoke (entry: QueueEntry<RelayJob>): Promise<void> {
    const g = await grants.get(entry.item.grantId)
    if (g === null || g.chain === 'never' || g.chain === 'revoked-on-chain') { await queue.ack(entry.key); return }
    if (g.permissionId === null) {
      // the approval is still on its way (its add entry runs first and then settles this one)
      if (await queue.get(`add:${g.grantId}`) !== null) throw new HearthError('CONFLICT', 'waiting for the grant to reach the chain before revoking it')
      await grants.update(g.grantId, (r) => ({ ...r, chain: 'never', chainError: null }))
      await queue.ack(entry.key)
      return
    }
    await perms.revokePermission(BigInt(g.permissionId), client.senderFor(ownerKey()))
    await grants.update(g.grantId, (r) => ({ ...r, chain: 'revoked-on-chain', chainError: null }))
    await queue.ack(entry.key)
    logger.info({ grantId: g.grantId, permissionId: g.permissionId }, 'grant revoked on chain')
  }

  async function round (signal?: AbortSignal): Promise<number> {
    const due = await queue.due(BATCH)
    let failure: HearthError | null = null
    for (const entry of due) {
      if (signal?.aborted === true) break
      try {
        if (entry.item.kind === 'add') await relayAdd(entry); else await relayRevoke(entry)
        reachable = true
      } catch (err) {
        const error = isHearthError(err) ? err : new HearthError('INTERNAL', err instanceof Error ? err.message : String(err))
        lastError = error.message
        if (error.code === 'CHAIN_UNAVAILABLE') reachable = false
        await grants.update(entry.item.grantId, (r) => ({ ...r, chainError: `${error.code}: ${error.message}` }))
        await queue.retryLater(entry.key, backoffDelay(entry.attempts, backoff), error.message)
        logger.warn({ grantId: entry.item.grantId, kind: entry.item.kind, errorCode: error.code, err: error.message }, 'grant relay step failed; will retry')
        if (error.code === 'CHAIN_UNAVAILABLE') { failure = error; break }
      }
    }
    if (failure !== null) throw failure
    return due.length === BATCH ? 0 : deps.pollIntervalMs ?? client.config.pollIntervalMs
  }

  const loop = createPollLoop({ name: 'grant-relay', logger, step: round, errorDelayMs: (n) => backoffDelay(n - 1, backoff) })

  return {
    async enqueue (job) {
      await queue.enqueue(`${job.kind}:${job.grantId}`, job)
      loop.kick()
    },
    start: () => { loop.start() },
    stop: async () => { await loop.stop() },
    kick: () => { loop.kick() },
    async runOnce (signal) { await round(signal) },
    async status () { return { pending: await queue.size(), lastError, reachable } }
  }
}
