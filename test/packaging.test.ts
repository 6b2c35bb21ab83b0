// package.json tells the truth: every runtime dependency is used by the code that ships, what only
// tests and benches use is a devDependency, `engines` holds for the installed tree on every Node
// line Hearth supports, and the native addons run on the Node running the test.
import assert from 'node:assert/strict'
import { readFileSync } from 'node:fs'
import { createRequire } from 'node:module'
import { join } from 'node:path'
import { test } from 'node:test'
import semver from 'semver'
import { REPO_ROOT } from './support/daemon.js'
import { tempDir } from './support/tmp.js'
import { codeFiles } from './support/code-files.js'
import { loadSodium } from '../src/sync/sodium.js'
import { SearchStore } from '../src/search/store.js'
import { checkQuery } from '../src/search/query.js'
import { findHits } from '../src/search/find.js'

const pkg = JSON.parse(readFileSync(join(REPO_ROOT, 'package.json'), 'utf8'))
const lock = JSON.parse(readFileSync(join(REPO_ROOT, 'package-lock.json'), 'utf8'))

function sources (dir: string): string[] {
  return codeFiles(dir).map((p) => readFileSync(p, 'utf8'))
}

function mentions (texts: string[], name: string): boolean {
  const quoted = new RegExp(`['"\`]${name.replace(/[.*+?^${}()|[\]\\/]/g, '\\$&')}(/[^'"\`]*)?['"\`]`)
  return texts.some((t) => quoted.test(t))
}

test('runtime dependencies are used by what ships; test- and bench-only ones are devDependencies', () => {
  const shipped = [...sources(join(REPO_ROOT, 'src')), ...sources(join(REPO_ROOT, 'plugins'))]
  const elsewhere = [...sources(join(REPO_ROOT, 'test')), ...sources(join(REPO_ROOT, 'bench')), ...sources(join(REPO_ROOT, 'scripts'))]
  for (const name of Object.keys(pkg.dependencies)) {
    assert.ok(mentions(shipped, name), `${name} is a dependency but src/ and plugins/ never load it`)
  }
  for (const name of Object.keys(pkg.devDependencies)) {
    if (name.startsWith('@types/') || ['tsx', 'typescript'].includes(name)) continue
    assert.ok(!mentions(shipped, name), `${name} is loaded by src/ or plugins/ but is only a devDependency`)
    assert.ok(mentions(elsewhere, name), `${name} is a devDependency nothing uses`)
  }
  // the dev chain (`hearth daemon --dev-chain`) is a feature of the installed CLI: optional, not dev
  for (const name of ['@foundry-rs/anvil', 'solc']) assert.ok(name in pkg.optionalDependencies, name)
})

/** The oldest release of each Node line `engines` names (`^20.19.4 || ^22.13.0 || ^24.3.0`: 20.19.4, 22.13.0, 24.3.0, the floors of the ecosystem's packages too). */
function floors (range: string): string[] {
  return range.split('||').map((part) => semver.minVersion(part.trim())!.version)
}

test('engines names the Node lines Hearth is tested on, this Node is one of them, and every installed package supports the oldest release of each (no EBADENGINE at install)', () => {
  const lines = floors(pkg.engines.node)
  assert.deepEqual(lines.map((v) => semver.major(v)), [20, 22, 24])
  assert.ok(semver.satisfies(process.versions.node, pkg.engines.node), `this Node ${process.versions.node} is within engines ${pkg.engines.node}`)
  const excluded: string[] = []
  for (const [path, entry] of Object.entries(lock.packages as Record<string, { engines?: { node?: string } | string[], version?: string }>)) {
    const wants = Array.isArray(entry.engines) ? undefined : entry.engines?.node
    if (path === '' || typeof wants !== 'string') continue
    for (const floor of lines) if (!semver.satisfies(floor, wants)) excluded.push(`${path.slice(path.lastIndexOf('node_modules/') + 13)}@${entry.version} wants ${wants} (${floor})`)
  }
  assert.deepEqual(excluded, [], 'a package that leaves out a supported Node is pinned to a version that supports it (package.json overrides)')
})

test('the native addons Hearth uses load and work on this Node, built for its ABI by npm ci (re2, classic-level, secp256k1, sodium-native, better-sqlite3)', async (t) => {
  const require = createRequire(import.meta.url)
  // linear-time schema patterns (NAN: rebuilt for each Node ABI)
  const RE2 = require('re2') as new (p: string) => { test: (s: string) => boolean }
  assert.equal(new RE2('^(a+)+$').test('a'.repeat(40) + '!'), false)
  assert.equal(new RE2('^a+$').test('aaa'), true)
  // the index (N-API)
  const { ClassicLevel } = await import('classic-level')
  const db = new ClassicLevel<string, string>(await tempDir(t, 'hearth-native-'))
  await db.put('k', 'v')
  assert.equal(await db.get('k'), 'v')
  await db.close()
  // builders' signatures: the native binding, not the package's JavaScript fallback
  const secp = require('secp256k1') as { publicKeyCreate: (k: Uint8Array) => Uint8Array }
  assert.equal(secp, require(join(REPO_ROOT, 'node_modules/secp256k1/bindings.js')), 'libsecp256k1 itself')
  assert.equal(secp.publicKeyCreate(new Uint8Array(32).fill(1)).byteLength, 33)
  // sync's ciphers
  const sodium = loadSodium()
  assert.ok(sodium !== null, 'sodium-native loads')
  assert.equal(sodium.crypto_stream_PRIMITIVE, 'xsalsa20')
  // the search index: SQLite with FTS5, through the store (it keeps every native object it makes:
  // one collected would abort Node 24, see src/search/store.ts)
  const store = new SearchStore(await tempDir(t, 'hearth-native-'))
  const id = store.beginVersion({ path: 'a.json', scope: 'test.native', collectedAt: '2026-01-01T00:00:00Z', sha256: '' })
  store.addRows(id, [{ pointer: '', field: 'text', at: null, text: 'native addons' }], () => null)
  assert.equal(findHits(store, checkQuery({ q: 'addon*' }), 5).hits[0]?.path, 'a.json')
  assert.deepEqual(store.check(), [])
  store.close()
})
