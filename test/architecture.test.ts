// The folder layout is the architecture: each folder of src/ sits in a layer and imports only
// from its own layer or those below. This reads every import under src/ and fails on one that
// reaches up. A new folder must be placed in LAYERS before anything may import it.
import test from 'node:test'
import assert from 'node:assert/strict'
import { existsSync, readdirSync, readFileSync, statSync } from 'node:fs'
import { dirname, join, relative, resolve } from 'node:path'
import { fileURLToPath } from 'node:url'

const SRC = fileURLToPath(new URL('../src/', import.meta.url))

/** Lowest first. A unit is a folder of src/ or a file directly in it (without extension). */
const LAYERS: string[][] = [
  // pure protocol code, process-wide basics and type declarations: no knowledge of any feature
  ['protocol', 'errors', 'log', 'home', 'polyfill', 'types'],
  // persistence, schema knowledge, keys, configuration, the daemon's HTTP client, and the
  // service shape and event hub
  ['config', 'client', 'db', 'storage', 'registry', 'identity', 'lifecycle'],
  // the features
  ['chain', 'ingest', 'sync', 'proxy', 'connectors', 'search', 'pinning'],
  // the HTTP API and its route sets
  ['api'],
  // parts with a listener of their own on the API server: the builder side, the dashboard
  ['builders', 'ui', 'assistants'],
  // the composition root
  ['daemon'],
  // the command line, the only user of the composition root
  ['cli']
]

/**
 * The features are independent of each other; these are the only imports between them (sync
 * hands received files to the ingest pipeline). Restore reads the chain through an interface
 * of its own, so sync never depends on the chain client.
 */
const FEATURE_LAYER = 2
const FEATURE_EDGES = new Set(['sync → ingest'])

/**
 * Upward imports being removed right now by others (file → imported file, both under src/).
 * Remove an entry once its import is gone; a stale entry is reported.
 */
const EXCEPTIONS = new Set<string>([])

function sourceFiles (dir: string): string[] {
  return readdirSync(dir).flatMap((name) => {
    const path = join(dir, name)
    return statSync(path).isDirectory() ? sourceFiles(path) : (name.endsWith('.ts') ? [path] : [])
  })
}

/** Relative specifiers of static imports, re-exports and dynamic imports. */
export function importSpecifiers (code: string): string[] {
  const found: string[] = []
  const patterns = [
    /^\s*(?:import|export)\s[\w\s{},*$]*?\sfrom\s+['"]([^'"]+)['"]/gm,
    /^\s*import\s+['"]([^'"]+)['"]/gm,
    /\bimport\(\s*['"]([^'"]+)['"]\s*\)/g
  ]
  for (const pattern of patterns) for (const m of code.matchAll(pattern)) found.push(m[1]!)
  return found.filter((s) => s.startsWith('.'))
}

function unitOf (pathFromSrc: string): string {
  const [first] = pathFromSrc.split('/')
  return first!.replace(/\.(ts|js)$/, '')
}

/** Files directly in src/ (errors, log, home, version, ...) are basics unless LAYERS says otherwise. */
function layerOf (unit: string): number {
  const listed = LAYERS.findIndex((layer) => layer.includes(unit))
  if (listed >= 0) return listed
  return existsSync(join(SRC, `${unit}.ts`)) ? 0 : -1
}

function toTs (pathFromSrc: string): string {
  return pathFromSrc.replace(/\.js$/, '.ts')
}

test('the import scanner sees static, type-only, re-exported, multi-line and dynamic imports', () => {
  const code = [
    "import { a } from './a.js'",
    "import type { B } from '../b/b.js'",
    'import {',
    '  c,',
    '  d',
    "} from '../c/index.js'",
    "export { e } from './e.js'",
    "export * from '../f.js'",
    "import './side-effect.js'",
    "const g = await import('../g/g.js')",
    "import { pino } from 'pino'",
    "// a comment mentioning from './nothing.js' is not at a statement start",
    'export const x = 1',
    "// nor from './after-export.js'"
  ].join('\n')
  assert.deepEqual(importSpecifiers(code).sort(), ['../b/b.js', '../c/index.js', '../f.js', '../g/g.js', './a.js', './e.js', './side-effect.js'])
})

test('no module under src/ imports from a layer above its own', (t) => {
  const violations: string[] = []
  const unknown = new Set<string>()
  const used = new Set<string>()
  for (const file of sourceFiles(SRC)) {
    const from = relative(SRC, file)
    const fromUnit = unitOf(from)
    if (layerOf(fromUnit) < 0) unknown.add(fromUnit)
    for (const spec of importSpecifiers(readFileSync(file, 'utf8'))) {
      const target = toTs(relative(SRC, resolve(dirname(file), spec)))
      if (target.startsWith('..')) { violations.push(`${from} imports ${spec}, outside src/`); continue }
      const toUnit = unitOf(target)
      if (layerOf(toUnit) < 0) { unknown.add(toUnit); continue }
      if (fromUnit !== toUnit && layerOf(fromUnit) === FEATURE_LAYER && layerOf(toUnit) === FEATURE_LAYER && !FEATURE_EDGES.has(`${fromUnit} → ${toUnit}`)) {
        violations.push(`${from} → ${target} (features import each other only as FEATURE_EDGES lists)`)
        continue
      }
      if (layerOf(toUnit) <= layerOf(fromUnit)) continue
      const edge = `${from} → ${target}`
      if (EXCEPTIONS.has(edge)) { used.add(edge); continue }
      violations.push(`${edge} (${fromUnit} is below ${toUnit})`)
    }
  }
  assert.deepEqual([...unknown], [], 'folders of src/ missing from LAYERS in test/architecture.test.ts')
  assert.deepEqual(violations, [], 'imports from a layer above')
  for (const edge of EXCEPTIONS) if (!used.has(edge)) t.diagnostic(`stale exception, remove it: ${edge}`)
})
