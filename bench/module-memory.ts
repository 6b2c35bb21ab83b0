// What each heavy library and each part costs to load, alone, in a fresh node process with the
// launcher's flags: V8 heap still used after a full GC, memory outside the heap, RSS growth and
// load time. The idle daemon's memory is mostly what its start loads (README, "Idle memory"), so
// this says what a lazy import saves and what a new static import would cost.
// Run: node --import tsx bench/module-memory.ts [SPEC ...]   (package names or dist/ paths; the defaults below)
import { execFileSync } from 'node:child_process'
import { existsSync } from 'node:fs'
import { join } from 'node:path'
import { REPO } from './support/daemon.js'
import { launcherSettings } from './support/launcher.js'

const DEFAULTS = [
  'libp2p', '@libp2p/mdns', '@chainsafe/libp2p-noise', 'viem', 'viem/accounts', 'openpgp', 'ajv/dist/2020.js', 're2', 'classic-level',
  'datastore-level', 'helia', 'pino', '@noble/curves/secp256k1.js',
  'dist/sync/node.js', 'dist/daemon/parts.js', 'dist/builders/index.js', 'dist/proxy/index.js', 'dist/registry/validators.js', 'dist/storage/embedded.js', 'dist/chain/index.js'
]
const specs = process.argv.slice(2).length > 0 ? process.argv.slice(2) : DEFAULTS
if (specs.some((s) => s.startsWith('dist/')) && !existsSync(join(REPO, 'dist/daemon/parts.js'))) throw new Error('dist/ is not built (npm run build)')

// runs inside the measured process, an ES module evaluated with the repository as its base, so
// package names resolve as the daemon's do
const PROBE = `
import { readFileSync } from 'node:fs'
const rss = () => Number(/VmRSS:\\s+(\\d+)/.exec(readFileSync('/proc/self/status', 'utf8'))[1]) * 1024
const spec = process.argv[1]
await import('./dist/polyfill.js')
gc(); gc()
const before = { ...process.memoryUsage(), rss: rss() }
const t = performance.now()
await import(spec.startsWith('dist/') ? './' + spec : spec)
const ms = performance.now() - t
gc(); gc()
const after = { ...process.memoryUsage(), rss: rss() }
console.log(JSON.stringify({ heap: after.heapUsed - before.heapUsed, external: after.external - before.external, rss: after.rss - before.rss, ms }))`

const { flags } = launcherSettings(REPO)
const mb = (n: number): string => (n / 1048576).toFixed(1)
const rows = specs.map((spec) => {
  try {
    const out = execFileSync(process.execPath, [...flags, '--expose-gc', '--input-type=module', '-e', PROBE, spec], { cwd: REPO, encoding: 'utf8', stdio: ['ignore', 'pipe', 'pipe'] })
    const r = JSON.parse(out.trim().split('\n').at(-1)!) as { heap: number, external: number, rss: number, ms: number }
    return { module: spec, 'heap MB (live)': mb(r.heap), 'external MB': mb(r.external), 'RSS MB': mb(r.rss), 'load ms': r.ms.toFixed(0) }
  } catch (err) {
    return { module: spec, 'heap MB (live)': 'error', 'external MB': '', 'RSS MB': '', 'load ms': (err as Error).message.split('\n')[0]!.slice(0, 60) }
  }
})
console.table(rows)
