// The records of the assistants' side (docs/protocol.md §3.9): a connection is one MCP client with
// its own grant of scope patterns, like a builder's grant but local only (no chain, no signature);
// a request is what the owner is asked to approve (a new connection, or more scopes for one).

/** `stdio`: `hearth mcp` over the owner's socket, named by the client; `http`: an OAuth client on `mcp.listen`. */
export type ConnectionKind = 'stdio' | 'http'

export type ConnectionStatus = 'pending' | 'active' | 'revoked' | 'denied'

export interface AssistantConnection {
  id: string
  kind: ConnectionKind
  /** What the owner sees: the MCP client's name (stdio, with `--name`) or the OAuth client's `client_name`. */
  name: string
  /** The OAuth client id (http), null for stdio. */
  clientId: string | null
  /** The scope patterns granted; empty until the owner approves. */
  scopes: string[]
  status: ConnectionStatus
  createdAt: string
  approvedAt: string | null
  revokedAt: string | null
  lastUsedAt: string | null
}

export type AssistantRequestKind = 'connect' | 'more-scopes'

export interface AssistantRequest {
  id: string
  connectionId: string
  kind: AssistantRequestKind
  /** Scope patterns asked for (may be empty for `connect`: the owner chooses what to grant). */
  scopes: string[]
  /** Why, in the assistant's words (untrusted text, shown as such). */
  purpose: string | null
  status: 'pending' | 'approved' | 'denied'
  createdAt: string
  decidedAt: string | null
}
