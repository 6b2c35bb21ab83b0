import assert from 'node:assert/strict'
import { chmod, mkdir, readFile, stat, writeFile } from 'node:fs/promises'
import { test } from 'node:test'
import { privateKeyToAccount } from 'viem/accounts'
import { isHearthError } from '../../src/errors.js'
import { homeLayout } from '../../src/home.js'
import { createIdentity, identityExists, identityFile, loadIdentity } from '../../src/identity/identity.js'
import { masterKeyFromSignature, scopeKeyHex, signMasterKey } from '../../src/protocol/keys.js'
import { tempDir } from '../support/tmp.js'

const PRIVATE_KEY = '0x0123456789abcdef0123456789abcdef0123456789abcdef0123456789abcdef'
const OWNER = '0xFCAd0B19bB29D4674531d6f115237E16AfCE377c'
const INSTAGRAM_PROFILE_KEY = '15bedf470a0d36090b49639ef81470368ee21909a83afeaabe2b092ceb02b767'
// The well-known Hardhat/Anvil development mnemonic and its first account.
const DEV_MNEMONIC = 'test test test test test test test test test test test junk'
const DEV_ADDRESS = '0xf39Fd6e51aad88F6F4ce6aB8827279cffFb92266'
const DEV_PRIVATE_KEY = '0xac0974bec39a17e36ba4a6b4d238ff944bacb478cbed5efcae784d7bf4f2ff80'

async function home (t: Parameters<typeof tempDir>[0]): Promise<ReturnType<typeof homeLayout>> {
  return homeLayout(await tempDir(t))
}

async function modeOf (path: string): Promise<number> {
  return (await stat(path)).mode & 0o777
}

async function assertSecretModes (paths: ReturnType<typeof homeLayout>): Promise<void> {
  assert.equal(await modeOf(paths.identity), 0o700)
  assert.equal(await modeOf(identityFile(paths)), 0o600)
}

test('from a private key: vector owner, scope key, modes 0700/0600, secrets hidden from JSON', async (t) => {
  const paths = await home(t)
  assert.equal(await identityExists(paths), false)
  const created = await createIdentity(paths, { privateKey: PRIVATE_KEY })
  assert.equal(created.ownerAddress, OWNER)
  assert.equal(created.kind, 'private-key')
  assert.equal(await identityExists(paths), true)
  await assertSecretModes(paths)

  const loaded = await loadIdentity(paths)
  assert.equal(loaded.ownerAddress, OWNER)
  assert.equal(loaded.ownerPrivateKey, PRIVATE_KEY)
  assert.equal(scopeKeyHex(loaded.masterKey, 'instagram.profile'), INSTAGRAM_PROFILE_KEY)
  const shown = JSON.stringify(loaded)
  assert.ok(!shown.includes(PRIVATE_KEY.slice(2)), 'private key not serialised')
  assert.ok(!shown.includes('masterKey'), 'master key not serialised')
  assert.deepEqual(JSON.parse(shown), { ownerAddress: OWNER, kind: 'private-key', createdAt: loaded.createdAt, file: identityFile(paths) })

  const stored = JSON.parse(await readFile(identityFile(paths), 'utf8'))
  assert.equal(stored.version, 1)
  assert.equal(stored.ownerAddress, OWNER)
  assert.equal(stored.signature, await signMasterKey(PRIVATE_KEY))
  assert.equal(stored.privateKey, PRIVATE_KEY)
})

test('private key input may omit 0x and use uppercase hex', async (t) => {
  const paths = await home(t)
  const created = await createIdentity(paths, { privateKey: PRIVATE_KEY.slice(2).toUpperCase() })
  assert.equal(created.ownerAddress, OWNER)
  assert.equal((await loadIdentity(paths)).ownerPrivateKey, PRIVATE_KEY)
})

test('bad private keys are refused without writing anything', async (t) => {
  const paths = await home(t)
  for (const privateKey of ['0x1234', 'zz'.repeat(32), '0x' + '00'.repeat(32), '0x' + 'ff'.repeat(32), '']) {
    await assert.rejects(createIdentity(paths, { privateKey }), (e: unknown) => {
      assert.ok(isHearthError(e, 'INVALID_IDENTITY'))
      assert.ok(privateKey.length < 8 || !e.message.includes(privateKey.slice(2, 12)))
      return true
    })
  }
  assert.equal(await identityExists(paths), false)
})

test('from a mnemonic: first account on the default path; whitespace is normalised', async (t) => {
  const paths = await home(t)
  const created = await createIdentity(paths, { mnemonic: `  ${DEV_MNEMONIC.replaceAll(' ', ' \n\t')}\n` })
  assert.equal(created.ownerAddress, DEV_ADDRESS)
  assert.equal(created.kind, 'mnemonic')
  const loaded = await loadIdentity(paths)
  assert.equal(loaded.ownerPrivateKey, DEV_PRIVATE_KEY)
  assert.ok(!(await readFile(identityFile(paths), 'utf8')).includes('junk'), 'the mnemonic itself is not stored')
  await assertSecretModes(paths)
})

test('mnemonics with a bad checksum, unknown word or word count are refused', async (t) => {
  const paths = await home(t)
  const valid12 = Array(11).fill('abandon').join(' ') + ' about'
  const valid24 = Array(23).fill('abandon').join(' ') + ' art'
  for (const mnemonic of [valid12, valid24]) {
    const p = homeLayout(await tempDir(t))
    await createIdentity(p, { mnemonic })
  }
  const cases: Array<[string, RegExp]> = [
    [Array(12).fill('abandon').join(' '), /checksum/],
    [DEV_MNEMONIC.replace('junk', 'test'), /checksum/],
    [DEV_MNEMONIC.replace('junk', 'junky'), /word 12 is not in the English BIP-39 word list/],
    [DEV_MNEMONIC + ' test', /has 13 words/],
    ['test', /has 1 word;/]
  ]
  for (const [mnemonic, reason] of cases) {
    await assert.rejects(createIdentity(paths, { mnemonic }), (e: unknown) => {
      assert.ok(isHearthError(e, 'INVALID_IDENTITY'))
      assert.match(e.message, reason)
      assert.ok(!e.message.includes('junky'), 'the mnemonic is never quoted')
      return true
    })
  }
  assert.equal(await identityExists(paths), false)
})

test('from a master signature: only the signature is stored', async (t) => {
  const paths = await home(t)
  const signature = await signMasterKey(PRIVATE_KEY)
  const created = await createIdentity(paths, { signature })
  assert.equal(created.ownerAddress, OWNER)
  assert.equal(created.kind, 'signature')
  assert.equal(created.ownerPrivateKey, undefined)
  const loaded = await loadIdentity(paths)
  assert.equal(loaded.ownerPrivateKey, undefined)
  assert.equal(scopeKeyHex(loaded.masterKey, 'instagram.profile'), INSTAGRAM_PROFILE_KEY)
  const stored = JSON.parse(await readFile(identityFile(paths), 'utf8'))
  assert.deepEqual(Object.keys(stored).sort(), ['createdAt', 'kind', 'ownerAddress', 'signature', 'version'])
  assert.equal(stored.signature, signature)
  await assertSecretModes(paths)

  await assert.rejects(createIdentity(homeLayout(await tempDir(t)), { signature: signature.slice(0, -4) }), (e: unknown) => isHearthError(e, 'INVALID_IDENTITY'))
})

test('a fresh wallet is generated and stored', async (t) => {
  const paths = await home(t)
  const created = await createIdentity(paths, { fresh: true })
  assert.equal(created.kind, 'fresh')
  const loaded = await loadIdentity(paths)
  assert.ok(loaded.ownerPrivateKey !== undefined)
  assert.equal(privateKeyToAccount(loaded.ownerPrivateKey).address, created.ownerAddress)
  assert.equal((await masterKeyFromSignature(await signMasterKey(loaded.ownerPrivateKey))).ownerAddress, created.ownerAddress)
  await assertSecretModes(paths)
  const other = await createIdentity(homeLayout(await tempDir(t)), { fresh: true })
  assert.notEqual(other.ownerAddress, created.ownerAddress)
})

test('an existing identity is never overwritten without force', async (t) => {
  const paths = await home(t)
  await createIdentity(paths, { privateKey: PRIVATE_KEY })
  const before = await readFile(identityFile(paths), 'utf8')
  for (const source of [{ fresh: true as const }, { privateKey: DEV_PRIVATE_KEY }, { mnemonic: DEV_MNEMONIC }]) {
    await assert.rejects(createIdentity(paths, source), (e: unknown) => isHearthError(e, 'IDENTITY_EXISTS') && e.status === 409)
  }
  assert.equal(await readFile(identityFile(paths), 'utf8'), before)

  const replaced = await createIdentity(paths, { privateKey: DEV_PRIVATE_KEY }, { force: true })
  assert.equal(replaced.ownerAddress, DEV_ADDRESS)
  assert.equal((await loadIdentity(paths)).ownerAddress, DEV_ADDRESS)
  await assertSecretModes(paths)
})

test('concurrent creations: exactly one wins', async (t) => {
  const paths = await home(t)
  const results = await Promise.allSettled([
    createIdentity(paths, { fresh: true }),
    createIdentity(paths, { fresh: true }),
    createIdentity(paths, { privateKey: PRIVATE_KEY })
  ])
  const won = results.filter((r) => r.status === 'fulfilled')
  assert.equal(won.length, 1)
  for (const r of results) if (r.status === 'rejected') assert.ok(isHearthError(r.reason, 'IDENTITY_EXISTS'))
  assert.equal((await loadIdentity(paths)).ownerAddress, (won[0] as PromiseFulfilledResult<{ ownerAddress: string }>).value.ownerAddress)
})

test('modes are 0700/0600 even with a permissive umask or a pre-existing open folder', async (t) => {
  const paths = await home(t)
  await mkdir(paths.identity, { recursive: true })
  await chmod(paths.identity, 0o755)
  const previous = process.umask(0)
  try {
    await createIdentity(paths, { fresh: true })
  } finally {
    process.umask(previous)
  }
  await assertSecretModes(paths)
})

test('loadIdentity: IDENTITY_MISSING when absent, INVALID_IDENTITY when corrupt or inconsistent', async (t) => {
  const paths = await home(t)
  await assert.rejects(loadIdentity(paths), (e: unknown) => isHearthError(e, 'IDENTITY_MISSING'))

  await createIdentity(paths, { privateKey: PRIVATE_KEY })
  const good = JSON.parse(await readFile(identityFile(paths), 'utf8'))
  const otherSignature = await signMasterKey(DEV_PRIVATE_KEY)
  const corruptions: Array<[string, string]> = [
    ['not json', '{"version":1,'],
    ['array', '[]'],
    ['version', JSON.stringify({ ...good, version: 2 })],
    ['no signature', JSON.stringify({ ...good, signature: undefined })],
    ['short signature', JSON.stringify({ ...good, signature: good.signature.slice(0, 40) })],
    ['signature of someone else', JSON.stringify({ ...good, signature: otherSignature })],
    ['address mismatch', JSON.stringify({ ...good, ownerAddress: DEV_ADDRESS })],
    ['private key of someone else', JSON.stringify({ ...good, privateKey: DEV_PRIVATE_KEY })],
    ['private key not hex', JSON.stringify({ ...good, privateKey: 'nope' })]
  ]
  for (const [label, text] of corruptions) {
    await writeFile(identityFile(paths), text)
    await assert.rejects(loadIdentity(paths), (e: unknown) => {
      assert.ok(isHearthError(e, 'INVALID_IDENTITY'), `${label}: ${String(e)}`)
      assert.ok(!e.message.includes(PRIVATE_KEY.slice(2, 20)) && !e.message.includes(DEV_PRIVATE_KEY.slice(2, 20)))
      return true
    }, label)
  }
})
