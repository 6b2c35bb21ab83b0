import assert from 'node:assert/strict'
import { readFile, stat, writeFile } from 'node:fs/promises'
import { test } from 'node:test'
import { privateKeyToAccount } from 'viem/accounts'
import { isHearthError } from '../../src/errors.js'
import { homeLayout } from '../../src/home.js'
import { createIdentity } from '../../src/identity/identity.js'
import { loadOrCreateTxKey, loadTxKey, txKeyFile } from '../../src/identity/tx-key.js'
import { tempDir } from '../support/tmp.js'

test('the transaction key is created once, mode 0600, separate from the owner', async (t) => {
  const paths = homeLayout(await tempDir(t))
  assert.equal(await loadTxKey(paths), null)
  const owner = await createIdentity(paths, { fresh: true })
  const first = await loadOrCreateTxKey(paths)
  assert.equal(privateKeyToAccount(first.privateKey).address, first.address)
  assert.notEqual(first.address, owner.ownerAddress)
  assert.equal((await stat(txKeyFile(paths))).mode & 0o777, 0o600)
  assert.equal((await stat(paths.identity)).mode & 0o777, 0o700)
  const again = await loadOrCreateTxKey(paths)
  assert.equal(again.address, first.address)
  assert.equal(again.privateKey, first.privateKey)
  assert.equal((await loadTxKey(paths))?.address, first.address)
  assert.deepEqual(JSON.parse(JSON.stringify(first)), { address: first.address }, 'the private key is not serialised')

  await createIdentity(paths, { fresh: true }, { force: true })
  assert.equal((await loadOrCreateTxKey(paths)).address, first.address, 'replacing the owner keeps the tx key')
})

test('works without an owner identity, and concurrent first calls agree on one key', async (t) => {
  const paths = homeLayout(await tempDir(t))
  const keys = await Promise.all([loadOrCreateTxKey(paths), loadOrCreateTxKey(paths), loadOrCreateTxKey(paths)])
  assert.equal(new Set(keys.map((k) => k.address)).size, 1)
  const stored = JSON.parse(await readFile(txKeyFile(paths), 'utf8'))
  assert.equal(stored.address, keys[0]!.address)
})

test('a corrupt transaction key file is INVALID_IDENTITY, not replaced', async (t) => {
  const paths = homeLayout(await tempDir(t))
  await loadOrCreateTxKey(paths)
  for (const text of ['{', '{"version":1,"privateKey":"0x12"}', '{"version":2,"privateKey":"0x' + '11'.repeat(32) + '"}']) {
    await writeFile(txKeyFile(paths), text)
    await assert.rejects(loadOrCreateTxKey(paths), (e: unknown) => isHearthError(e, 'INVALID_IDENTITY'))
    assert.equal(await readFile(txKeyFile(paths), 'utf8'), text)
  }
})
