import { test } from 'node:test'
import type { Abi } from 'viem'
import assert from 'node:assert/strict'
import { dataRefinerRegistryAbi, dataRegistryAbi, multicall3Abi } from '../../src/chain/abi.js'
import { compileContracts } from '../../src/chain/compile.js'
import { CHAIN_PRESETS, resolveChainConfig } from '../../src/chain/config.js'
import { isHearthError } from '../../src/errors.js'
import { startTestChain, testChainClient } from '../support/anvil.js'
import { abiSignatures } from '../support/abi-signatures.js'

test('the compiled dev contracts expose exactly the ABIs of the deployed registries', async () => {
  const compiled = await compileContracts()
  // Everything the client uses exists with the same signature, mutability, indexing and outputs.
  for (const [name, expected] of [['DataRefinerRegistry', dataRefinerRegistryAbi], ['DataRegistry', dataRegistryAbi], ['Multicall3', multicall3Abi]] as const) {
    const actual = abiSignatures(compiled[name].abi)
    for (const sig of abiSignatures(expected as Abi)) assert.ok(actual.includes(sig), `${name} lacks ${sig}\nhas ${actual.join('\n')}`)
  }
  assert.deepEqual(abiSignatures(compiled.DataRefinerRegistry.abi), abiSignatures(dataRefinerRegistryAbi as Abi))
  assert.match(compiled.DataRegistry.bytecode, /^0x[0-9a-f]+$/)
})

test('schemas get sequential ids from 1 and unknown ids read as null', async (t) => {
  const chain = await startTestChain(t)
  const client = testChainClient(chain)
  assert.equal(await client.schemasCount(), 0n)
  assert.equal(await client.getSchema(1n), null)
  assert.equal(await client.getSchema(0n), null)

  const first = await client.addSchema('Instagram Profile', 'json', 'ipfs://bafy-one')
  const second = await client.addSchema('Instagram Profile', 'json', 'ipfs://bafy-two')
  assert.equal(first.schemaId, 1n)
  assert.equal(second.schemaId, 2n)
  assert.match(first.txHash, /^0x[0-9a-f]{64}$/)
  assert.equal(await client.schemasCount(), 2n)
  assert.deepEqual(await client.getSchema(2n), { schemaId: 2n, name: 'Instagram Profile', dialect: 'json', definitionUrl: 'ipfs://bafy-two' })
  assert.equal(await client.getSchema(3n), null)

  const events = await client.schemaAddedEvents(0n, await client.blockNumber())
  assert.deepEqual(events.map((e) => [e.schemaId, e.definitionUrl]), [[1n, 'ipfs://bafy-one'], [2n, 'ipfs://bafy-two']])
  assert.equal(events[0]?.blockNumber, first.blockNumber)
})

test('a killed dev chain is unreachable until it restarts on the same port with its state', async (t) => {
  const chain = await startTestChain(t)
  const client = testChainClient(chain)
  await client.addSchema('s', 'json', 'ipfs://s')
  await chain.kill()
  assert.equal(chain.running, false)
  const health = await client.health()
  assert.equal(health.reachable, false)
  await assert.rejects(client.schemasCount(), (err: unknown) => isHearthError(err, 'CHAIN_UNAVAILABLE') && err.message.length < 200)

  await chain.restart()
  assert.equal((await client.health()).reachable, true)
  assert.equal(await client.schemasCount(), 1n)
  assert.equal((await client.getSchema(1n))?.definitionUrl, 'ipfs://s')
  const before = await client.blockNumber()
  await chain.mine(3)
  assert.equal(await client.blockNumber(), before + 3n)
})

test('a stopped dev chain leaves no listener behind', async (t) => {
  const chain = await startTestChain(t)
  await chain.stop()
  await assert.rejects(fetch(chain.rpcUrl, { method: 'POST', body: '{}' }))
})

test('chain config presets and overrides', () => {
  assert.equal(CHAIN_PRESETS.vana.chainId, 1480)
  assert.equal(CHAIN_PRESETS.moksha.chainId, 14800)
  assert.equal(CHAIN_PRESETS.vana.dataRegistry, '0x8C8788f98385F6ba1adD4234e551ABba0f82Cb7C')
  assert.equal(CHAIN_PRESETS.moksha.dataRefinerRegistry, '0x93c3EF89369fDcf08Be159D9DeF0F18AB6Be008c')
  assert.equal(CHAIN_PRESETS.vana.multicall, undefined)

  const custom = resolveChainConfig({ preset: 'moksha', rpcUrl: 'http://127.0.0.1:1', confirmations: 2 })
  assert.equal(custom.chainId, 14800)
  assert.equal(custom.rpcUrl, 'http://127.0.0.1:1')
  assert.equal(custom.confirmations, 2)
  assert.throws(() => resolveChainConfig({ rpcUrl: 'ftp://x', chainId: 0, dataRegistry: '0x1' as `0x${string}` }),
    (err: unknown) => isHearthError(err, 'CONFIG_INVALID') && (err.details?.problems as string[]).length >= 4)
  assert.throws(() => resolveChainConfig({ preset: 'nope' as 'vana' }), (err: unknown) => isHearthError(err, 'CONFIG_INVALID'))
})
