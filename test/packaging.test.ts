// package.json tells the truth: every runtime dependency is used by the code that ships, what only
// tests and benches use is a devDependency, and `engines` holds for the installed tree. Packages
// that declare a newer Node than ours are listed with the proof that they run on it.
import assert from 'node:assert/strict'
import { readdirSync, readFileSync, statSync } from 'node:fs'
import { createRequire } from 'node:module'
import { join } from 'node:path'
import { test } from 'node:test'
import semver from 'semver'
import { REPO_ROOT } from './support/daemon.js'

const pkg = JSON.parse(readFileSync(join(REPO_ROOT, 'package.json'), 'utf8'))
const lock = JSON.parse(readFileSync(join(REPO_ROOT, 'package-lock.json'), 'utf8'))

function sources (dir: string): string[] {
  return readdirSync(dir).flatMap((name) => {
    const p = join(dir, name)
    if (name === 'node_modules') return []
    return statSync(p).isDirectory() ? sources(p) : (/\.(ts|js|mjs)$/.test(name) ? [readFileSync(p, 'utf8')] : [])
  })
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

/**
 * Installed packages whose `engines` excludes Node 20, each with a check that runs what Hearth
 * uses of it on this Node (they use nothing newer than Node 20 has).
 */
const PROVEN_ON_NODE_20: Record<string, () => Promise<void>> = {
  // @libp2p/circuit-relay-v2 (through helia) ids
  nanoid: async () => {
    const req = createRequire(join(REPO_ROOT, 'node_modules/@libp2p/circuit-relay-v2/package.json'))
    const { nanoid } = await import(req.resolve('nanoid')) as { nanoid: () => string }
    assert.match(nanoid(), /^[\w-]{21}$/)
  },
  // libp2p's dial retries
  'p-retry': async () => {
    const req = createRequire(join(REPO_ROOT, 'node_modules/libp2p/package.json'))
    const pRetry = (await import(req.resolve('p-retry'))).default as (fn: () => Promise<number>, o: object) => Promise<number>
    let attempts = 0
    assert.equal(await pRetry(async () => { if (++attempts < 3) throw new Error('again'); return attempts }, { retries: 3, minTimeout: 1 }), 3)
  },
  // linear-time schema patterns: the native addon, built for this Node by npm ci
  re2: async () => {
    const RE2 = createRequire(import.meta.url)('re2') as new (p: string) => { test: (s: string) => boolean }
    assert.equal(new RE2('^(a+)+$').test('a'.repeat(40) + '!'), false)
    assert.equal(new RE2('^a+$').test('aaa'), true)
  }
}

test('engines is true to the installed dependencies; the ones that declare a newer Node run on ours', async () => {
  const floor = semver.minVersion(pkg.engines.node)!.version
  assert.ok(semver.satisfies(process.versions.node, pkg.engines.node), `this Node ${process.versions.node} is within engines ${pkg.engines.node}`)
  const excluded = new Set<string>()
  for (const [path, entry] of Object.entries(lock.packages as Record<string, { engines?: { node?: string }, dev?: boolean, version?: string }>)) {
    if (path === '' || entry.dev === true || typeof entry.engines?.node !== 'string') continue
    const name = path.slice(path.lastIndexOf('node_modules/') + 'node_modules/'.length)
    if (!semver.satisfies(floor, entry.engines.node)) excluded.add(name)
  }
  assert.deepEqual([...excluded].sort(), Object.keys(PROVEN_ON_NODE_20).sort(), 'every package that excludes Node 20 is proven to run on it (or pinned to a version that supports it)')
  for (const [name, proof] of Object.entries(PROVEN_ON_NODE_20)) {
    await proof().catch((err: Error) => { throw new Error(`${name} on Node ${process.versions.node}: ${err.message}`) })
  }
})
