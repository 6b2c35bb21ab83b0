// The builder contracts on a real anvil chain: the compiled stand-ins expose the ABI of the
// deployed ones, grantees register once, a permission needs the grantor's EIP-712 signature with
// the next nonce and an existing grantee, and only the grantor revokes it.
import { test } from 'node:test'
import assert from 'node:assert/strict'
import type { Abi, Hex } from 'viem'
import { privateKeyToAccount } from 'viem/accounts'
import { dataPortabilityGranteesAbi, dataPortabilityPermissionsAbi } from '../../src/chain/abi.js'
import { compileContracts } from '../../src/chain/compile.js'
import { CHAIN_PRESETS } from '../../src/chain/config.js'
import { createPermissionsChain } from '../../src/chain/permissions.js'
import { isHearthError } from '../../src/errors.js'
import { permissionTypedData } from '../../src/builders/typed-data.js'
import { startTestChain, testChainClient } from '../support/anvil.js'
import { abiSignatures } from '../support/abi-signatures.js'

test('the compiled builder contracts expose the ABI Hearth uses, and the presets carry their addresses', async () => {
  const compiled = await compileContracts()
  for (const [name, expected] of [['DataPortabilityGrantees', dataPortabilityGranteesAbi], ['DataPortabilityPermissions', dataPortabilityPermissionsAbi]] as const) {
    const actual = abiSignatures(compiled[name].abi)
    for (const sig of abiSignatures(expected as Abi)) assert.ok(actual.includes(sig), `${name} lacks ${sig}\nhas ${actual.join('\n')}`)
  }
  for (const preset of [CHAIN_PRESETS.vana, CHAIN_PRESETS.moksha]) {
    assert.equal(preset.dataPortabilityGrantees, '0x8325C0A0948483EdA023A1A2Fd895e62C5131234')
    assert.equal(preset.dataPortabilityPermissions, '0xD54523048AdD05b4d734aFaE7C68324Ebb7373eF')
  }
})

test('grantees, owner-signed permissions and grantor-only revocation on the dev chain', async (t) => {
  const chain = await startTestChain(t)
  const client = testChainClient(chain)
  const perms = createPermissionsChain(client)
  assert.ok(perms !== null)
  const owner = privateKeyToAccount(chain.accounts[2] as Hex)
  const builder = privateKeyToAccount(chain.accounts[3] as Hex)
  const stranger = privateKeyToAccount(chain.accounts[4] as Hex)

  assert.equal(await perms.granteeId(builder.address), 0n)
  assert.equal(await perms.grantee(1n), null)
  const reg = await perms.registerGrantee(builder.address, builder.address, 'pubkey-1')
  assert.equal(reg.granteeId, 1n)
  assert.deepEqual(await perms.registerGrantee(builder.address, builder.address, 'again'), { granteeId: 1n, txHash: null })
  assert.deepEqual(await perms.grantee(1n), { owner: builder.address, granteeAddress: builder.address, publicKey: 'pubkey-1' })

  const target = { chainId: chain.chainId, verifyingContract: perms.permissions }
  const grant = JSON.stringify({ user: owner.address, builder: builder.address, scopes: ['instagram.*'], expiresAt: 0, nonce: 0 })
  const input = { nonce: 0n, granteeId: 1n, grant, fileIds: [] as bigint[] }
  const signature = await owner.signTypedData(permissionTypedData(target, input))
  const reverts = async (p: Promise<unknown>, name: string): Promise<void> => {
    await assert.rejects(p, (e: unknown) => isHearthError(e, 'CHAIN_REVERTED') && e.details?.errorName === name, name)
  }
  await reverts(perms.addPermission({ ...input, nonce: 1n }, await owner.signTypedData(permissionTypedData(target, { ...input, nonce: 1n }))), 'InvalidNonce')
  await reverts(perms.addPermission({ ...input, granteeId: 9n }, await owner.signTypedData(permissionTypedData(target, { ...input, granteeId: 9n }))), 'GranteeNotFound')
  await reverts(perms.addPermission(input, `0x${'00'.repeat(65)}`), 'InvalidSignature')

  const added = await perms.addPermission(input, signature)
  assert.equal(added.permissionId, 1n)
  assert.equal(await perms.userNonce(owner.address), 1n)
  await reverts(perms.addPermission(input, signature), 'InvalidNonce')
  const p = await perms.permission(1n)
  assert.equal(p?.grantor, owner.address)
  assert.equal(p?.grant, grant)
  assert.equal(p?.endBlock, 0n)
  assert.equal(await perms.permission(2n), null)
  assert.deepEqual((await perms.permissionsAddedBy(owner.address, 0n)).map((e) => [e.permissionId, e.grant]), [[1n, grant]])

  await reverts(perms.revokePermission(1n, client.senderFor(chain.accounts[4] as Hex)), 'NotPermissionGrantor')
  assert.equal(stranger.address.length, 42)
  const revoked = await perms.revokePermission(1n, client.senderFor(chain.accounts[2] as Hex))
  assert.ok(revoked.txHash !== null)
  assert.ok(((await perms.permission(1n))?.endBlock ?? 0n) > 0n)
  // revoking again is a no-op, not a failure
  assert.deepEqual(await perms.revokePermission(1n, client.senderFor(chain.accounts[2] as Hex)), { txHash: null })
})
