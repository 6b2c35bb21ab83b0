// The schema definitions shipped in <repo>/schemas, installed as local schemas so a fresh install
// validates the common scopes offline. Installing is idempotent: a definition's canonical bytes
// give one CID, so every later start finds each one already known and changes nothing; the daemon
// skips even that while the home holds what the same files installed (shipped-installed.ts).
import { readdir, readFile } from 'node:fs/promises'
import { join } from 'node:path'
import { fileURLToPath } from 'node:url'
import { HearthError, isHearthError } from '../errors.js'
import type { StorageBackend } from '../storage/types.js'
import { parseSchemaDefinition, serializeDefinition } from './definition.js'
import type { AddLocalResult, SchemaRegistry } from './resolver.js'
import type { SchemaDefinition } from './types.js'
import { heldAsInstalled, noteInstalled, shippedDigest, type InstalledRecordKv, type ShippedFileBytes } from './shipped-installed.js'
import { HEARTH_VERSION } from '../version.js'

/** `<repo>/schemas/`, the same from src/registry (tsx) and dist/registry (built). */
export function shippedSchemasDir (): string {
  return fileURLToPath(new URL('../../schemas/', import.meta.url))
}

export interface ShippedSchema {
  file: string
  definition: SchemaDefinition
}

/**
 * Every `*.json` in `dir`, parsed, ordered by scope and then by version, oldest first (a scope's
 * current definition is `<scope>.json`, an older one still shipped so its files stay readable
 * offline is `<scope>@<version>.json`). A broken file is a packaging bug, so it fails loudly,
 * naming the file; two files for one scope and version are refused too.
 */
export async function loadShippedSchemaFiles (dir = shippedSchemasDir()): Promise<ShippedSchema[]> {
  return parseShippedFiles(await readShippedFiles(dir))
}

/** Every `*.json` in `dir` as read, in name order. */
async function readShippedFiles (dir: string): Promise<ShippedFileBytes[]> {
  let names: string[]
  try {
    names = (await readdir(dir)).filter((n) => n.endsWith('.json')).sort()
  } catch (err) {
    throw new HearthError('FILE_UNREADABLE', `cannot read the shipped schemas folder ${dir}: ${(err as Error).message}`, { dir }, { cause: err })
  }
  return await Promise.all(names.map(async (name) => {
    const file = join(dir, name)
    try {
      return { name, file, bytes: await readFile(file) }
    } catch (err) {
      throw new HearthError('FILE_UNREADABLE', `shipped schema ${name}: ${(err as Error).message}`, { file }, { cause: err })
    }
  }))
}

function parseShippedFiles (files: readonly ShippedFileBytes[]): ShippedSchema[] {
  const out: ShippedSchema[] = []
  const seen = new Map<string, string>()
  for (const { name, file, bytes } of files) {
    let definition: SchemaDefinition
    try {
      // they compile (test/registry/shipped.test.ts compiles each); not checked again at every start
      definition = parseSchemaDefinition(bytes, { checkCompiles: false })
    } catch (err) {
      if (isHearthError(err)) {
        throw new HearthError(err.code, `shipped schema ${name}: ${err.message}`, { ...err.details, file }, { cause: err })
      }
      throw new HearthError('FILE_UNREADABLE', `shipped schema ${name}: ${(err as Error).message}`, { file }, { cause: err })
    }
    const key = `${definition.scope}@${definition.version}`
    const clash = seen.get(key)
    if (clash !== undefined) {
      throw new HearthError('INVALID_SCHEMA_DEFINITION', `shipped schemas ${clash} and ${name} both define ${key}`,
        { file, reasons: [`duplicate of ${clash}`] })
    }
    seen.set(key, name)
    out.push({ file, definition })
  }
  return out.sort((a, b) => a.definition.scope < b.definition.scope ? -1 : a.definition.scope > b.definition.scope ? 1
    : compareVersions(a.definition.version, b.definition.version))
}

/** Semantic versions compared number by number ("1.10.0" after "1.9.0"). */
function compareVersions (a: string, b: string): number {
  const pa = a.split(/[.+-]/).map(Number)
  const pb = b.split(/[.+-]/).map(Number)
  for (let i = 0; i < Math.max(pa.length, pb.length); i++) {
    const d = (Number.isFinite(pa[i]) ? pa[i]! : 0) - (Number.isFinite(pb[i]) ? pb[i]! : 0)
    if (d !== 0) return d
  }
  return 0
}

export async function loadShippedSchemas (dir = shippedSchemasDir()): Promise<SchemaDefinition[]> {
  return (await loadShippedSchemaFiles(dir)).map((s) => s.definition)
}

/** Where the daemon keeps what it installed, so a restart with the same shipped files skips it (shipped-installed.ts). */
export interface InstallOptions {
  dir?: string
  record?: InstalledRecordKv
}

/**
 * Add every shipped definition as a non-sticky local schema: it becomes its scope's latest only
 * where the scope has none yet (or only an older shipped one), never over another chain schema or
 * the owner's own choice. A scope still pointing at an older shipped version after that — that
 * version was registered on chain, so its id is a chain id now — moves to the newest shipped one
 * (older versions stay known, so their files keep validating). With `record`, a home that still
 * holds every definition of the same shipped files is not installed again (what an install would
 * find: each known, nothing added); the pointers are checked either way.
 */
export async function installShippedSchemas (
  registry: Pick<SchemaRegistry, 'addLocalSchema' | 'cache' | 'remember'>, storage: Pick<StorageBackend, 'add' | 'has'>, opts: InstallOptions = {}
): Promise<Array<AddLocalResult & { file: string }>> {
  const files = await readShippedFiles(opts.dir ?? shippedSchemasDir())
  const digest = shippedDigest(files, HEARTH_VERSION)
  const held = opts.record === undefined ? null : await heldAsInstalled(opts.record, digest, registry.cache, storage)
  const results = held !== null
    ? await Promise.all(held.map(async ({ file, schema }) => ({ file, schema, added: false, latest: (await registry.cache.latest(schema.scope))?.id === schema.id })))
    : await installAll(registry, storage, parseShippedFiles(files))
  await moveToNewestShipped(registry, results)
  if (held === null && opts.record !== undefined) await noteInstalled(opts.record, digest, results.map((r) => ({ file: r.file, definitionUrl: r.schema.definitionUrl })))
  return results
}

async function installAll (
  registry: Pick<SchemaRegistry, 'addLocalSchema'>, storage: Pick<StorageBackend, 'add'>, shipped: ShippedSchema[]
): Promise<Array<AddLocalResult & { file: string }>> {
  // their bytes stored all at once (a fresh home's ~40 synced writes share their syncs), then
  // added one by one in order, each finding its bytes stored: the order decides a scope's latest
  await Promise.all(shipped.map(async ({ definition }) => await storage.add(serializeDefinition(definition))))
  const results: Array<AddLocalResult & { file: string }> = []
  for (const { file, definition } of shipped) {
    results.push({ file, ...await registry.addLocalSchema(definition, { storage, sticky: false, checkCompiles: false }) })
  }
  return results
}

/** A scope still pointing at an older shipped version (registered on chain since) moves to its newest shipped one; `results` follow. */
async function moveToNewestShipped (registry: Pick<SchemaRegistry, 'cache' | 'remember'>, results: Array<AddLocalResult & { file: string }>): Promise<void> {
  for (let i = 0; i < results.length; i++) {
    const newest = results[i]!
    const scope = newest.schema.scope
    if (newest.latest || results[i + 1]?.schema.scope === scope) continue
    const older = new Set(results.filter((r) => r.schema.scope === scope && r !== newest).map((r) => r.schema.definitionUrl))
    const pointer = await registry.cache.latest(scope)
    if (older.size === 0 || pointer === null || pointer.sticky) continue
    const current = await registry.cache.byId(pointer.id)
    if (current === null || !older.has(current.definitionUrl)) continue
    await registry.remember(newest.schema, { latest: true })
    for (let j = 0; j < results.length; j++) {
      if (results[j]!.schema.scope === scope) results[j] = { ...results[j]!, latest: j === i }
    }
  }
}
