// The records of the builder side (docs/protocol.md §3.8), as stored and as the owner's API shows them.
import type { Address, Hex } from 'viem'

/** A builder the owner trusts (local registry), or one seen registered on chain. */
export interface BuilderRecord {
  address: Address
  publicKey: string
  appUrl: string | null
  /** Who registered the grantee (the address given to registerGrantee). */
  owner: Address
  registeredAt: string
  /** The DataPortabilityGrantees id once known on chain (decimal), else null. */
  granteeId: string | null
}

export type AccessRequestStatus = 'pending' | 'approved' | 'denied'

export interface AccessRequest {
  id: string
  builder: Address
  /** Scope patterns the builder asked for. */
  scopes: string[]
  /** Unix seconds the builder asked the grant to end at; 0 = never. */
  expiresAt: number
  appUrl: string | null
  purpose: string | null
  createdAt: string
  status: AccessRequestStatus
  decidedAt: string | null
  grantId: string | null
}

/** Where a grant stands on chain. */
export type GrantChainState =
  | 'local'          // no chain configured (or it has no permissions contract): a local record only
  | 'queued'         // waiting in the relay queue
  | 'on-chain'       // addPermission mined: permissionId known
  | 'revoke-queued'  // revoked locally, revokePermission waiting in the queue
  | 'revoked-on-chain'
  | 'never'          // revoked before it was ever relayed: it never goes on chain

export interface GrantRecord {
  grantId: string
  requestId: string | null
  builder: Address
  scopes: string[]
  expiresAt: number
  /** The exact grant string signed (and relayed). */
  grant: string
  nonce: string
  granteeId: string
  /** The owner's EIP-712 signature over (nonce, granteeId, grant, []). */
  signature: Hex
  /** `local` (name and version only) or `<chainId>:<permissions contract>` the signature is bound to. */
  domain: string
  createdAt: string
  revokedAt: string | null
  permissionId: string | null
  chain: GrantChainState
  chainError: string | null
}

export type AccessAction = 'list' | 'read' | 'versions' | 'request-access' | 'request-status' | 'denied'

export interface AccessLogEntry {
  logId: string
  /** ISO 8601 UTC. */
  at: string
  builder: Address | null
  grantId: string | null
  scope: string | null
  action: AccessAction
  /** HTTP status answered. */
  status: number
  errorCode: string | null
  /** Response body bytes served. */
  bytes: number
  ip: string | null
  userAgent: string | null
  /**
   * Further refusals folded into this entry: the same refusal of the same budget key (a client
   * address, or a builder over its rate limit) within a minute, past its budget.
   */
  repeats?: number
}
