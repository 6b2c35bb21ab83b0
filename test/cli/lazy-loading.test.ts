// The CLI loads only the command that runs: `hearth --version`, `hearth help` and each command
// pay for their own modules, not for the daemon's (libp2p, Helia, viem, OpenPGP, ajv).
import test from 'node:test'
import assert from 'node:assert/strict'
import { fileURLToPath } from 'node:url'
import { join, relative } from 'node:path'
import { COMMANDS } from '../../src/cli/commands/index.js'
import { staticGraph, staticImports } from '../support/import-graph.js'

const SRC = fileURLToPath(new URL('../../src/', import.meta.url))
/** Libraries that cost hundreds of milliseconds or tens of MB to load. */
export const HEAVY = ['helia', '@helia/unixfs', 'libp2p', '@libp2p/tcp', '@libp2p/crypto', 'viem', 'openpgp', 'ajv', 'classic-level', 'kubo-rpc-client', 'blockstore-fs', 'datastore-level', 're2', 'preact', 'secp256k1']

test('the import scanner keeps value imports and leaves type-only and dynamic ones out', () => {
  const code = [
    "import { a } from './a.js'",
    "import type { B } from './b.js'",
    "import { type C, type D } from './c.js'",
    "import { type E, f } from './e.js'",
    "export { g } from './g.js'",
    "export type { H } from './h.js'",
    "import * as i from 'i-lib'",
    "import './side-effect.js'",
    "const j = await import('./j.js')"
  ].join('\n')
  assert.deepEqual(staticImports(code).sort(), ['./a.js', './e.js', './g.js', './side-effect.js', 'i-lib'])
})

test('every command in the table loads the command of that name, with its usage', async () => {
  const names = COMMANDS.map((c) => c.name)
  assert.equal(new Set(names).size, names.length, 'command names are unique')
  for (const entry of COMMANDS) {
    const command = await entry.load()
    assert.equal(command.name, entry.name)
    assert.match(command.usage, new RegExp(`^usage: hearth ${entry.name}\\b`), entry.name)
    assert.ok(entry.summary.length > 0, entry.name)
  }
})

test('the CLI entry loads no command module and no heavy library until a command runs', () => {
  const { files, packages } = staticGraph(join(SRC, 'cli/entry.ts'))
  const commands = [...files].map((f) => relative(SRC, f)).filter((f) => f.startsWith('cli/commands/') && f !== 'cli/commands/index.ts')
  assert.deepEqual(commands, [])
  assert.deepEqual(HEAVY.filter((p) => packages.has(p)), [])
})

test('hearth daemon loads nothing heavy before its listeners answer /health; the parts come behind them', () => {
  const { files, packages } = staticGraph(join(SRC, 'cli/commands/daemon.ts'))
  // the configuration is validated (ajv) before anything starts; everything else waits
  assert.deepEqual(HEAVY.filter((p) => packages.has(p) && p !== 'ajv'), [])
  assert.equal(files.has(join(SRC, 'daemon/parts.ts')), false, 'the parts are imported dynamically')
})

test('the parts load libp2p, Helia, the Kubo client and the gateway DAG walker only when the configuration or a fetch needs them', () => {
  const { packages } = staticGraph(join(SRC, 'daemon/parts.ts'))
  const configured = [...packages].filter((p) => p === 'helia' || p === 'libp2p' || p.startsWith('@libp2p/') || p === '@chainsafe/libp2p-noise' || p === 'kubo-rpc-client' || p === '@helia/unixfs' || p === 'ipfs-unixfs-exporter')
  assert.deepEqual(configured, [])
})

test('the parts load viem only with a configured chain or a grant signed as typed data, and OpenPGP.js only to read a message, never on a default start', () => {
  const { packages } = staticGraph(join(SRC, 'daemon/parts.ts'))
  assert.equal(packages.has('viem'), false, 'owner address, tx key, builder signatures: src/protocol/eth.ts')
  assert.equal(packages.has('openpgp'), false, 'files are written by src/protocol/openpgp-writer.ts')
  assert.equal(staticGraph(join(SRC, 'ingest/encryption-worker.ts')).packages.has('openpgp'), false, 'nor does the encryption worker')
})

test('the parts load the MCP SDK (and zod, hono) only for an MCP request', () => {
  const { packages } = staticGraph(join(SRC, 'daemon/parts.ts'))
  assert.deepEqual(['@modelcontextprotocol/sdk', 'zod', '@hono/node-server'].filter((p) => packages.has(p)), [], 'src/assistants/sessions.ts imports them when a session opens')
})
