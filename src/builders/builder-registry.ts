// The local registry of builders the owner trusts (docs/protocol.md §3.8). With no chain it is
// the registry; with a chain it also remembers each builder's on-chain grantee id once seen,
// so reads do not ask the chain again.
import type { Address } from 'viem'
import { checksumAddress } from '../protocol/eth.js'
import type { HearthDatabase, Sublevel } from '../db/database.js'
import type { BuilderRecord } from './types.js'

export interface BuilderRegistry {
  get (address: string): Promise<BuilderRecord | null>
  put (record: BuilderRecord): Promise<void>
  setGranteeId (address: Address, granteeId: string): Promise<void>
  list (opts?: { limit?: number }): Promise<BuilderRecord[]>
}

export function openBuilderRegistry (db: HearthDatabase): BuilderRegistry {
  const sub: Sublevel<BuilderRecord> = db.sublevel(['builders', 'registry'])
  const key = (address: string): string => address.toLowerCase()
  return {
    async get (address) { return (await sub.get(key(address))) ?? null },
    async put (record) { await sub.put(key(record.address), { ...record, address: checksumAddress(record.address) }) },
    async setGranteeId (address, granteeId) {
      const r = await sub.get(key(address))
      if (r !== undefined && r.granteeId !== granteeId) await sub.put(key(address), { ...r, granteeId })
    },
    async list (opts = {}) { return await sub.values({ limit: opts.limit ?? 1000 }).all() }
  }
}
