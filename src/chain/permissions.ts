// Hearth's view of the builder contracts (docs/protocol.md §3.8): DataPortabilityGrantees (who
// may be granted) and DataPortabilityPermissions (the owner-signed grants, relayed by anyone;
// revoked only by their grantor). Built on the shared chain client, so transactions from the
// daemon's key and from the owner's key never race for nonces with file registrations.
import { encodeFunctionData, parseEventLogs, type Address, type Hex } from 'viem'
import { HearthError } from '../errors.js'
import { dataPortabilityGranteesAbi, dataPortabilityPermissionsAbi } from './abi.js'
import type { ChainClient } from './client.js'
import { findRevert, toChainError } from './errors.js'
import type { TxSender } from './transactions.js'

/** The Solidity error name of a revert, raw from viem or already mapped to CHAIN_REVERTED. */
function revertName (err: unknown): string | null {
  if (err instanceof HearthError) return typeof err.details?.errorName === 'string' ? err.details.errorName : null
  return findRevert(err)?.errorName ?? null
}

export interface ChainPermission {
  permissionId: bigint
  grantor: Address
  nonce: bigint
  granteeId: bigint
  grant: string
  startBlock: bigint
  endBlock: bigint
  fileIds: bigint[]
}

export interface PermissionInput {
  nonce: bigint
  granteeId: bigint
  grant: string
  fileIds: bigint[]
}

export interface SendOptions {
  onSent?: (txHash: Hex) => void | Promise<void>
  signal?: AbortSignal
}

export interface PermissionsChain {
  readonly chainId: number
  readonly grantees: Address
  readonly permissions: Address
  /** 0n when the address is not a registered grantee. */
  granteeId (address: Address): Promise<bigint>
  grantee (granteeId: bigint): Promise<{ owner: Address; granteeAddress: Address; publicKey: string } | null>
  /** Registers from the daemon's key; an address registered already answers with its id. */
  registerGrantee (owner: Address, grantee: Address, publicKey: string, opts?: SendOptions): Promise<{ granteeId: bigint; txHash: Hex | null }>
  userNonce (user: Address): Promise<bigint>
  /** null when no permission has this id. */
  permission (permissionId: bigint): Promise<ChainPermission | null>
  /** Relays an owner-signed permission from the daemon's key. */
  addPermission (input: PermissionInput, signature: Hex, opts?: SendOptions): Promise<{ permissionId: bigint; txHash: Hex; blockNumber: bigint }>
  /** Revokes from the grantor's own key; a permission already inactive counts as done. */
  revokePermission (permissionId: bigint, grantor: TxSender, opts?: SendOptions): Promise<{ txHash: Hex | null }>
  /** PermissionAdded events of a user from a block on (to find a relay a crash interrupted). */
  permissionsAddedBy (user: Address, fromBlock: bigint): Promise<Array<{ permissionId: bigint; grant: string; blockNumber: bigint }>>
}

/** null when the chain configuration has no builder contracts. */
export function createPermissionsChain (client: ChainClient): PermissionsChain | null {
  const { config, publicClient } = client
  const grantees = config.dataPortabilityGrantees
  const permissions = config.dataPortabilityPermissions
  if (grantees === undefined || permissions === undefined) return null

  async function attempt<T> (action: string, fn: () => Promise<T>): Promise<T> {
    try { return await fn() } catch (err) { throw toChainError(err, action) }
  }

  async function send (sender: TxSender, to: Address, data: Hex, action: string, opts: SendOptions) {
    const gas = await publicClient.estimateGas({ account: sender.address, to, data })
    const [txHash] = await sender.sendAll([{ to, data, gas }], async (hash) => { await opts.onSent?.(hash) }) as [Hex]
    const [receipt] = await sender.waitReceipts([txHash], opts.signal !== undefined ? { signal: opts.signal } : {})
    if (receipt === undefined || receipt.status !== 'success') throw new HearthError('CHAIN_REVERTED', `${action} transaction reverted`, { txHash })
    return { txHash, receipt }
  }

  const chain: PermissionsChain = {
    chainId: config.chainId,
    grantees,
    permissions,

    async granteeId (address) {
      return await attempt('reading granteeAddressToId', async () =>
        await publicClient.readContract({ address: grantees, abi: dataPortabilityGranteesAbi, functionName: 'granteeAddressToId', args: [address] }))
    },

    async grantee (granteeId) {
      try {
        const g = await publicClient.readContract({ address: grantees, abi: dataPortabilityGranteesAbi, functionName: 'grantees', args: [granteeId] })
        return { owner: g.owner, granteeAddress: g.granteeAddress, publicKey: g.publicKey }
      } catch (err) {
        if (revertName(err) === 'GranteeNotFound') return null
        throw toChainError(err, 'reading grantee')
      }
    },

    async registerGrantee (owner, grantee, publicKey, opts = {}) {
      const existing = await chain.granteeId(grantee)
      if (existing !== 0n) return { granteeId: existing, txHash: null }
      return await attempt('registerGrantee', async () => {
        const data = encodeFunctionData({ abi: dataPortabilityGranteesAbi, functionName: 'registerGrantee', args: [owner, grantee, publicKey] })
        try {
          const { txHash, receipt } = await send(client.txSender, grantees, data, 'registerGrantee', opts)
          const [event] = parseEventLogs({ abi: dataPortabilityGranteesAbi, eventName: 'GranteeRegistered', logs: receipt.logs })
          if (event === undefined) throw new HearthError('CHAIN_REVERTED', 'registerGrantee emitted no GranteeRegistered event', { txHash })
          return { granteeId: event.args.granteeId, txHash }
        } catch (err) {
          // registered by someone else between our read and our transaction
          if (revertName(err) === 'GranteeAlreadyRegistered') return { granteeId: await chain.granteeId(grantee), txHash: null }
          throw err
        }
      })
    },

    async userNonce (user) {
      return await attempt('reading userNonce', async () =>
        await publicClient.readContract({ address: permissions, abi: dataPortabilityPermissionsAbi, functionName: 'userNonce', args: [user] }))
    },

    async permission (permissionId) {
      const p = await attempt('reading permission', async () =>
        await publicClient.readContract({ address: permissions, abi: dataPortabilityPermissionsAbi, functionName: 'permissions', args: [permissionId] }))
      if (p.id === 0n) return null
      return { permissionId: p.id, grantor: p.grantor, nonce: p.nonce, granteeId: p.granteeId, grant: p.grant, startBlock: p.startBlock, endBlock: p.endBlock, fileIds: [...p.fileIds] }
    },

    async addPermission (input, signature, opts = {}) {
      return await attempt('addPermission', async () => {
        const data = encodeFunctionData({ abi: dataPortabilityPermissionsAbi, functionName: 'addPermission', args: [input, signature] })
        const { txHash, receipt } = await send(client.txSender, permissions, data, 'addPermission', opts)
        const [event] = parseEventLogs({ abi: dataPortabilityPermissionsAbi, eventName: 'PermissionAdded', logs: receipt.logs })
        if (event === undefined) throw new HearthError('CHAIN_REVERTED', 'addPermission emitted no PermissionAdded event', { txHash })
        return { permissionId: event.args.permissionId, txHash, blockNumber: receipt.blockNumber }
      })
    },

    async revokePermission (permissionId, grantor, opts = {}) {
      return await attempt('revokePermission', async () => {
        const data = encodeFunctionData({ abi: dataPortabilityPermissionsAbi, functionName: 'revokePermission', args: [permissionId] })
        try {
          const { txHash } = await send(grantor, permissions, data, 'revokePermission', opts)
          return { txHash }
        } catch (err) {
          if (revertName(err) === 'InactivePermission') return { txHash: null }
          throw err
        }
      })
    },

    async permissionsAddedBy (user, fromBlock) {
      return await attempt('reading PermissionAdded events', async () => {
        const head = await publicClient.getBlockNumber({ cacheTime: 0 })
        const out: Array<{ permissionId: bigint; grant: string; blockNumber: bigint }> = []
        for (let from = fromBlock; from <= head; from += 10_000n) {
          const to = from + 9_999n < head ? from + 9_999n : head
          const logs = await publicClient.getContractEvents({ address: permissions, abi: dataPortabilityPermissionsAbi, eventName: 'PermissionAdded', args: { user }, fromBlock: from, toBlock: to, strict: true })
          for (const log of logs) out.push({ permissionId: log.args.permissionId, grant: log.args.grant, blockNumber: log.blockNumber })
        }
        return out
      })
    }
  }
  return chain
}
