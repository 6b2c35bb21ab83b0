// Schema objects (docs/protocol.md §2.2, 2.6) and the resolver interface that every source of schema
// knowledge implements: the local cache, a DP RPC service, the chain.

/** The document at a schema's definitionUrl. Immutable (content-addressed). */
export interface SchemaDefinition {
  name: string
  version: string
  scope: string
  dialect: string
  description?: string
  /** JSON Schema (draft 2020-12 unless it has its own $schema) for an envelope's `data`. */
  schema: Record<string, unknown>
}

/**
 * A registered schema. `id` is an opaque string: a decimal uint256 for schemas registered on
 * chain ("1", "2", ...), hex ids from the hosted DP RPC are kept as given, and a schema known only
 * locally (not yet on chain) has the id `local:<definition CID>`.
 */
export interface SchemaRecord {
  id: string
  ownerAddress: string | null
  name: string
  dialect: string
  definitionUrl: string
  scope: string
  addedAt: string | null
}

export interface ResolvedSchema extends SchemaRecord {
  definition: SchemaDefinition
}

export interface SchemaResolver {
  readonly name: string
  /** The newest schema registered for this exact scope, or null when this source knows none. */
  byScope (scope: string, opts?: { signal?: AbortSignal }): Promise<ResolvedSchema | null>
  /** The schema with this id, or null when this source knows none. */
  byId (id: string, opts?: { signal?: AbortSignal }): Promise<ResolvedSchema | null>
}

export const LOCAL_SCHEMA_PREFIX = 'local:'
export function isLocalSchemaId (id: string): boolean { return id.startsWith(LOCAL_SCHEMA_PREFIX) }
