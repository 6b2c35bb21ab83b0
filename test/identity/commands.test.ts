import assert from 'node:assert/strict'
import { readFile, stat, writeFile } from 'node:fs/promises'
import { join } from 'node:path'
import { PassThrough } from 'node:stream'
import { test } from 'node:test'
import { EXIT, type Command } from '../../src/cli/command.js'
import { initCommand, whoamiCommand } from '../../src/cli/commands/identity.js'
import { homeLayout } from '../../src/home.js'
import { identityFile } from '../../src/identity/identity.js'
import { loadOrCreateTxKey } from '../../src/identity/tx-key.js'
import { signMasterKey } from '../../src/protocol/keys.js'
import { tempDir } from '../support/tmp.js'

const PRIVATE_KEY = '0x0123456789abcdef0123456789abcdef0123456789abcdef0123456789abcdef'
const OWNER = '0xFCAd0B19bB29D4674531d6f115237E16AfCE377c'
const DEV_MNEMONIC = 'test test test test test test test test test test test junk'
const DEV_ADDRESS = '0xf39Fd6e51aad88F6F4ce6aB8827279cffFb92266'

interface Ran { code: number, out: string, err: string }

async function run (command: Command, root: string, args: string[], stdinText?: string, tty = false): Promise<Ran> {
  const stdout = new PassThrough()
  const stderr = new PassThrough()
  const stdin = new PassThrough()
  let out = ''
  let err = ''
  stdout.on('data', (c: Buffer) => { out += c.toString() })
  stderr.on('data', (c: Buffer) => { err += c.toString() })
  if (tty) Object.assign(stdin, { isTTY: true })
  if (stdinText !== undefined) stdin.end(stdinText)
  const code = await command.run({ home: homeLayout(root), args, stdout, stderr, stdin, env: { HEARTH_HOME: root } })
  return { code, out, err }
}

test('init from a private key file, then whoami (text and JSON), without a daemon', async (t) => {
  const root = await tempDir(t)
  const keyFile = join(root, 'key.txt')
  await writeFile(keyFile, PRIVATE_KEY + '\n')
  const init = await run(initCommand, root, ['--private-key-file', keyFile])
  assert.equal(init.code, EXIT.OK, init.err)
  assert.match(init.out, new RegExp(`identity created for owner ${OWNER}`))
  assert.ok(init.out.includes(identityFile(homeLayout(root))))
  assert.ok(!init.out.includes(PRIVATE_KEY.slice(2)) && !init.err.includes(PRIVATE_KEY.slice(2)), 'the key is never printed')
  assert.equal((await stat(identityFile(homeLayout(root)))).mode & 0o777, 0o600)

  const who = await run(whoamiCommand, root, [])
  assert.equal(who.code, EXIT.OK)
  assert.equal(who.out, OWNER + '\n')

  const tx = await loadOrCreateTxKey(homeLayout(root))
  const whoJson = await run(whoamiCommand, root, ['--json'])
  assert.equal(whoJson.code, EXIT.OK)
  const info = JSON.parse(whoJson.out)
  assert.equal(info.ownerAddress, OWNER)
  assert.equal(info.kind, 'private-key')
  assert.equal(info.hasOwnerPrivateKey, true)
  assert.equal(info.txAddress, tx.address)
  assert.ok(!whoJson.out.includes(PRIVATE_KEY.slice(2)))
})

test('init reads a mnemonic or a signature from stdin with "-"', async (t) => {
  const mnemonicRoot = await tempDir(t)
  const m = await run(initCommand, mnemonicRoot, ['--mnemonic', '-', '--json'], DEV_MNEMONIC + '\n')
  assert.equal(m.code, EXIT.OK, m.err)
  assert.deepEqual(JSON.parse(m.out), { ownerAddress: DEV_ADDRESS, kind: 'mnemonic', identityFile: identityFile(homeLayout(mnemonicRoot)), hasOwnerPrivateKey: true })

  const sigRoot = await tempDir(t)
  const s = await run(initCommand, sigRoot, ['--signature=-'], await signMasterKey(PRIVATE_KEY))
  assert.equal(s.code, EXIT.OK, s.err)
  assert.match(s.out, /only the master signature is stored/)
  assert.equal((await run(whoamiCommand, sigRoot, [])).out, OWNER + '\n')
  const stored = JSON.parse(await readFile(identityFile(homeLayout(sigRoot)), 'utf8'))
  assert.equal(stored.privateKey, undefined)
})

test('init with no source makes a fresh wallet; a second init is refused unless --force', async (t) => {
  const root = await tempDir(t)
  const first = await run(initCommand, root, ['--json'])
  assert.equal(first.code, EXIT.OK, first.err)
  const created = JSON.parse(first.out)
  assert.equal(created.kind, 'fresh')
  assert.match(created.ownerAddress, /^0x[0-9a-fA-F]{40}$/)

  const again = await run(initCommand, root, [])
  assert.equal(again.code, EXIT.FAILURE)
  assert.match(again.err, /^error IDENTITY_EXISTS: /)
  assert.equal((await run(whoamiCommand, root, [])).out, created.ownerAddress + '\n')

  const keyFile = join(root, 'key')
  await writeFile(keyFile, PRIVATE_KEY)
  const forced = await run(initCommand, root, ['--private-key-file', keyFile, '--force', '--yes'])
  assert.equal(forced.code, EXIT.OK, forced.err)
  assert.equal((await run(whoamiCommand, root, [])).out, OWNER + '\n')
})

test('init --force asks before replacing an identity and keeps a backup of the replaced one', async (t) => {
  const root = await tempDir(t)
  const paths = homeLayout(root)
  assert.equal((await run(initCommand, root, [])).code, EXIT.OK)
  const original = await readFile(identityFile(paths), 'utf8')
  const keyFile = join(root, 'key')
  await writeFile(keyFile, PRIVATE_KEY)

  // no terminal and no --yes: refused, nothing touched
  const unconfirmed = await run(initCommand, root, ['--private-key-file', keyFile, '--force'])
  assert.equal(unconfirmed.code, EXIT.FAILURE)
  assert.match(unconfirmed.err, /^error IDENTITY_EXISTS: an identity \(owner 0x[0-9a-fA-F]{40}\) exists; replacing it needs confirmation/)
  assert.equal(await readFile(identityFile(paths), 'utf8'), original)

  // a terminal that does not answer "replace": refused
  const declined = await run(initCommand, root, ['--private-key-file', keyFile, '--force'], 'no\n', true)
  assert.equal(declined.code, EXIT.FAILURE)
  assert.match(declined.err, /Type "replace" to go on: error IDENTITY_EXISTS: not replaced/)
  assert.equal(await readFile(identityFile(paths), 'utf8'), original)

  const confirmed = await run(initCommand, root, ['--private-key-file', keyFile, '--force'], 'replace\n', true)
  assert.equal(confirmed.code, EXIT.OK, confirmed.err)
  const backup = /the replaced identity is kept in (\S+) \(mode 0600\)/.exec(confirmed.out)?.[1]
  assert.ok(backup !== undefined, confirmed.out)
  assert.equal(await readFile(backup, 'utf8'), original, 'the old wallet key survives')
  assert.equal((await stat(backup)).mode & 0o777, 0o600)
  assert.equal((await run(whoamiCommand, root, [])).out, OWNER + '\n')
})

test('usage errors: secrets in argv, two sources, unknown flags, positionals', async (t) => {
  const root = await tempDir(t)
  const cases: Array<[string[], RegExp]> = [
    [['--private-key', PRIVATE_KEY], /--private-key takes only "-"/],
    [['--mnemonic', DEV_MNEMONIC], /--mnemonic takes only "-"/],
    [['--private-key', '-', '--mnemonic-file', '/x'], /at most one identity source/],
    [['--bogus'], /error INVALID_ARGUMENT: /],
    [['extra'], /error INVALID_ARGUMENT: /]
  ]
  for (const [args, pattern] of cases) {
    const r = await run(initCommand, root, args)
    assert.equal(r.code, EXIT.USAGE, args.join(' '))
    assert.match(r.err, pattern)
    assert.match(r.err, /usage: hearth init/)
    assert.ok(!r.err.includes(PRIVATE_KEY.slice(2)) && !r.err.includes('junk'), 'the secret is not echoed back')
  }
  assert.equal((await run(whoamiCommand, root, ['--nope'])).code, EXIT.USAGE)
  assert.equal((await run(initCommand, root, ['--help'])).code, EXIT.OK)
})

test('failures are typed: missing identity, unreadable or invalid secret', async (t) => {
  const root = await tempDir(t)
  const who = await run(whoamiCommand, root, [])
  assert.equal(who.code, EXIT.FAILURE)
  assert.match(who.err, /^error IDENTITY_MISSING: .*hearth init/)

  const missing = await run(initCommand, root, ['--private-key-file', join(root, 'nope')])
  assert.equal(missing.code, EXIT.FAILURE)
  assert.match(missing.err, /^error FILE_UNREADABLE: /)

  const bad = await run(initCommand, root, ['--private-key', '-'], 'not a key')
  assert.equal(bad.code, EXIT.FAILURE)
  assert.match(bad.err, /^error INVALID_IDENTITY: /)

  const empty = await run(initCommand, root, ['--signature', '-'], '')
  assert.equal(empty.code, EXIT.USAGE)
  assert.match(empty.err, /^error INVALID_ARGUMENT: /)

  assert.equal((await run(whoamiCommand, root, [])).code, EXIT.FAILURE, 'nothing was created by the failures')
})
