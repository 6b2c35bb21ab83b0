// The EIP-712 message an owner signs to approve a grant (docs/protocol.md §3.8): domain
// `VanaDataPortabilityPermissions` version 1, type
// `Permission(uint256 nonce,uint256 granteeId,string grant,uint256[] fileIds)`. With no chain the
// domain has only name and version (the approval is a local record); relayed on chain it is
// bound to the chain id and the permissions contract, as the contract checks. Pure.
import type { Address, Hex, TypedDataDomain } from 'viem'

export const PERMISSION_DOMAIN_NAME = 'VanaDataPortabilityPermissions'
export const PERMISSION_DOMAIN_VERSION = '1'

export const PERMISSION_TYPES = {
  Permission: [
    { name: 'nonce', type: 'uint256' },
    { name: 'granteeId', type: 'uint256' },
    { name: 'grant', type: 'string' },
    { name: 'fileIds', type: 'uint256[]' }
  ]
} as const

export interface PermissionMessage {
  nonce: bigint
  granteeId: bigint
  grant: string
  fileIds: bigint[]
}

/** Where a signature is valid: on a chain's permissions contract, or only locally (null). */
export interface PermissionDomainTarget { chainId: number; verifyingContract: Address }

export function permissionDomain (target: PermissionDomainTarget | null): TypedDataDomain {
  return target === null
    ? { name: PERMISSION_DOMAIN_NAME, version: PERMISSION_DOMAIN_VERSION }
    : { name: PERMISSION_DOMAIN_NAME, version: PERMISSION_DOMAIN_VERSION, chainId: target.chainId, verifyingContract: target.verifyingContract }
}

/** The argument of viem's signTypedData / hashTypedData for this permission. */
export function permissionTypedData (target: PermissionDomainTarget | null, message: PermissionMessage) {
  return { domain: permissionDomain(target), types: PERMISSION_TYPES, primaryType: 'Permission' as const, message }
}

// viem's EIP-712 code loads on the first grant checked or signed, not with the daemon
export async function recoverPermissionSigner (target: PermissionDomainTarget | null, message: PermissionMessage, signature: Hex): Promise<Address> {
  const { recoverTypedDataAddress } = await import('viem')
  return await recoverTypedDataAddress({ ...permissionTypedData(target, message), signature })
}
