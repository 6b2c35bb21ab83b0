// Whose schemas may decide how a scope's data is validated. Anyone can register a schema on a
// public chain (and a lookup service lists them all), so a scope's schema comes only from:
//   - this device: the shipped schemas and the ones the owner added (`local:` ids, and the chain
//     ids they became when this daemon registered them);
//   - schema owners the owner trusts: the owner's wallet, this daemon's transaction key, and the
//     addresses in `schemas.trustedOwners` (e.g. the curator of a schema registry).
// A schema of anyone else still resolves by its id (a file that names it), but never becomes a
// scope's schema, and its definition is never fetched to find out which scope it is for.
import { isLocalSchemaId, type SchemaRecord } from './types.js'

export interface SchemaTrust {
  /** Whether schemas registered by this address may become a scope's schema. */
  trustsOwner (address: string | null | undefined): boolean
  /** Whether this schema may become its scope's schema. */
  trusts (schema: Pick<SchemaRecord, 'id' | 'ownerAddress'>): boolean
  readonly owners: readonly string[]
}

export function createSchemaTrust (owners: Iterable<string | null | undefined>): SchemaTrust {
  const set = new Set<string>()
  for (const o of owners) if (typeof o === 'string' && /^0x[0-9a-fA-F]{40}$/.test(o)) set.add(o.toLowerCase())
  const trustsOwner = (address: string | null | undefined): boolean => typeof address === 'string' && set.has(address.toLowerCase())
  return {
    trustsOwner,
    trusts: (schema) => isLocalSchemaId(schema.id) || trustsOwner(schema.ownerAddress),
    owners: [...set]
  }
}

/** Trusts every schema: for tools and tests that resolve without an owner. */
export const TRUST_ALL: SchemaTrust = { trustsOwner: () => true, trusts: () => true, owners: [] }
