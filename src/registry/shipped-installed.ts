// Whether a home still holds the shipped schemas as their last install left them, so a start can
// skip installing them again: ~40 installs, each parsing, serializing and hashing its definition,
// storing its block and looking it up under the registry's write lock, cost a restart ~40–110 ms
// though nothing changed (README, "Benchmarks": start to "ok"). The home remembers the digest of
// the shipped files it installed last (with the Hearth version: a definition's CID comes from the
// code's canonical serialization, which a new version may change) and the URLs of their
// definitions. A start whose shipped files have that digest, whose schema cache still knows every
// one of those definitions and whose storage still holds each one's block finds what a full
// install would: every definition known (nothing to add), every block there (nothing to restore).
// Anything else (a new Hearth, a shipped file changed, added or removed, a schema or block gone)
// installs in full.
import { createHash } from 'node:crypto'
import type { StorageBackend } from '../storage/types.js'
import type { SchemaCache } from './cache.js'
import { LOCAL_SCHEMA_PREFIX, type ResolvedSchema } from './types.js'

/** A shipped definition file as read, before parsing. */
export interface ShippedFileBytes { name: string; file: string; bytes: Uint8Array }

/** Where the home keeps the record (a namespace of its database: `openKv` satisfies it). */
export interface InstalledRecordKv {
  get (key: string): Promise<unknown>
  put (key: string, value: any): Promise<void>
}

/** What the last install left: the digest of the files it read and each definition's URL, in install order. */
interface InstalledRecord { digest: string; schemas: Array<{ file: string; definitionUrl: string }> }

const KEY = 'installed'

/** Digest of the shipped files (names and bytes, in name order) as `version` installs them. */
export function shippedDigest (files: readonly ShippedFileBytes[], version: string): string {
  const hash = createHash('sha256').update(`${version}\0${files.length}\0`)
  for (const f of [...files].sort((a, b) => a.name < b.name ? -1 : a.name > b.name ? 1 : 0)) {
    hash.update(`${f.name}\0${f.bytes.byteLength}\0`).update(f.bytes)
  }
  return hash.digest('hex')
}

/**
 * The schemas of the last install, in its order, each as the cache holds it now (a chain id where
 * the chain registered it), when the record's digest is `digest` and every one is still known with
 * its block stored; otherwise null (install in full).
 */
export async function heldAsInstalled (
  kv: InstalledRecordKv, digest: string, cache: Pick<SchemaCache, 'byDefinitionUrl' | 'byId'>, storage: Pick<StorageBackend, 'has'>
): Promise<Array<{ file: string; schema: ResolvedSchema }> | null> {
  const record = await kv.get(KEY) as InstalledRecord | undefined
  if (record?.digest !== digest || !Array.isArray(record.schemas)) return null
  const held = await Promise.all(record.schemas.map(async ({ file, definitionUrl }) => {
    const cid = definitionUrl.startsWith('ipfs://') ? definitionUrl.slice('ipfs://'.length) : null
    if (cid === null) return null
    // known as an install finds it known: by its URL (a chain id wins), else by its local id
    const schema = await cache.byDefinitionUrl(definitionUrl) ?? await cache.byId(LOCAL_SCHEMA_PREFIX + cid)
    return schema !== null && await storage.has(cid) ? { file, schema } : null
  }))
  return held.every((h) => h !== null) ? held as Array<{ file: string; schema: ResolvedSchema }> : null
}

/** Remember what an install of the files with `digest` left (after it completed: a crash before it installs again). */
export async function noteInstalled (kv: InstalledRecordKv, digest: string, schemas: Array<{ file: string; definitionUrl: string }>): Promise<void> {
  const record: InstalledRecord = { digest, schemas }
  await kv.put(KEY, record)
}
