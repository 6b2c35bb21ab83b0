// Bench of the schema path an ingested file goes through: resolving its scope (registry over the
// LevelDB cache), and validating its data with a cached compiled validator versus compiling per
// file (what a cache-less design would pay). Usage: node --import tsx bench/schemas.ts [N]
import '../src/polyfill.js'
import { mkdtemp, readFile, rm } from 'node:fs/promises'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { performance } from 'node:perf_hooks'
import { openDatabase, openKv } from '../src/db/database.js'
import { createSchemaCache } from '../src/registry/cache.js'
import { createSchemaRegistry } from '../src/registry/resolver.js'
import { createSchemaCompiler, createSchemaValidators } from '../src/registry/validators.js'
import { loadShippedSchemas } from '../src/registry/shipped.js'
import type { ResolvedSchema } from '../src/registry/types.js'

const N = Number(process.argv[2] ?? 20_000)

function rate (label: string, count: number, ms: number): void {
  console.log(`${label.padEnd(48)} ${(count / (ms / 1000)).toFixed(0).padStart(10)} /s   ${(ms * 1000 / count).toFixed(1).padStart(8)} µs each`)
}

async function main (): Promise<void> {
  const dir = await mkdtemp(join(tmpdir(), 'hearth-bench-schemas-'))
  try {
    const shipped = await loadShippedSchemas()
    const db = await openDatabase(join(dir, 'index'))
    const cache = createSchemaCache(openKv(db, 'schemas'))
    const registry = createSchemaRegistry({ cache, sources: [] })
    const resolved: ResolvedSchema[] = []
    for (const definition of shipped) {
      const schema: ResolvedSchema = {
        id: `local:bench-${definition.scope}`, ownerAddress: null, name: definition.name, dialect: 'json',
        definitionUrl: `ipfs://bench-${definition.scope}`, scope: definition.scope, addedAt: null, definition
      }
      await registry.remember(schema, { latest: true })
      resolved.push(schema)
    }
    const samples = await Promise.all(resolved.map(async (s) =>
      JSON.parse(await readFile(new URL(`../test/registry/samples/${s.scope}.json`, import.meta.url), 'utf8')).data as unknown))
    console.log(`${shipped.length} shipped schemas, N = ${N}`)

    // The same records read through a cache without its in-memory LRU: every lookup decodes the
    // stored definition from LevelDB.
    const uncached = createSchemaRegistry({ cache: createSchemaCache(openKv(db, 'schemas'), { memoryEntries: 0 }), sources: [] })
    let t = 0
    for (const [label, r] of [['byScope, LevelDB only (memoryEntries 0)', uncached], ['byScope, LevelDB + record LRU (default)', registry]] as const) {
      t = performance.now()
      for (let i = 0; i < N; i++) await r.byScope(resolved[i % resolved.length]!.scope)
      rate(label, N, performance.now() - t)
    }

    const validators = createSchemaValidators()
    for (const s of resolved) validators.compiled(s)
    t = performance.now()
    for (let i = 0; i < N; i++) {
      const k = i % resolved.length
      if (!validators.validateData(resolved[k]!, samples[k]).ok) throw new Error('sample invalid')
    }
    rate('validate, cached compiled validator', N, performance.now() - t)

    const compiler = createSchemaCompiler()
    const M = Math.max(50, Math.floor(N / 100))
    t = performance.now()
    for (let i = 0; i < M; i++) {
      const k = i % resolved.length
      const compiled = compiler.compile(resolved[k]!.definition.schema)
      if (!compiled.validate(samples[k]).ok) throw new Error('sample invalid')
      compiled.release()
    }
    rate('validate, compiling per file (no cache)', M, performance.now() - t)
    await db.close()
  } finally {
    await rm(dir, { recursive: true, force: true })
  }
}

await main()
