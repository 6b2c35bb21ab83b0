import { test } from 'node:test'
import assert from 'node:assert/strict'
import { createWalletClient, encodeFunctionData, http, type Hex } from 'viem'
import { privateKeyToAccount } from 'viem/accounts'
import { dataRegistryAbi } from '../../src/chain/abi.js'
import type { RegistrationOutcome } from '../../src/chain/client.js'
import { isHearthError } from '../../src/errors.js'
import { addressOf, startTestChain, testChainClient } from '../support/anvil.js'

function okOutcome (o: RegistrationOutcome | undefined): Extract<RegistrationOutcome, { ok: true }> {
  assert.ok(o?.ok === true, `expected a registration, got ${JSON.stringify(o, (_, v) => typeof v === 'bigint' ? v.toString() : v)}`)
  return o
}

async function transactionsSentBy (chain: { rpc: (m: string, p?: unknown[]) => Promise<unknown> }, address: string): Promise<number> {
  return Number(BigInt(await chain.rpc('eth_getTransactionCount', [address, 'latest']) as string))
}

test('batched registration: one multicall transaction per batch, sequential ids, each URL once', async (t) => {
  const chain = await startTestChain(t)
  const client = testChainClient(chain, { maxBatchSize: 40 })
  const owner = addressOf(chain.accounts[2] as Hex)
  await client.addSchema('s', 'json', 'ipfs://schema')

  const files = Array.from({ length: 100 }, (_, i) => ({ url: `ipfs://bafy-${i}`, schemaId: 1n, owner }))
  const sent: Array<{ txHash: Hex; urls: string[] }> = []
  const outcomes = await client.registerFiles(files, { onSent: (txHash, urls) => { sent.push({ txHash, urls }) } })

  assert.equal(sent.length, 3, 'three aggregate3 transactions for 100 files in batches of 40')
  assert.deepEqual(sent.map((s) => s.urls.length).sort(), [20, 40, 40])
  assert.deepEqual(outcomes.map((o) => okOutcome(o).fileId), files.map((_, i) => BigInt(i + 1)))
  assert.equal(okOutcome(outcomes[0]).txHash, sent[0]?.txHash)
  assert.equal(await client.filesCount(), 100n)
  const file = await client.getFile(42n)
  assert.deepEqual(file, { fileId: 42n, ownerAddress: owner, url: 'ipfs://bafy-41', schemaId: 1n, addedAtBlock: okOutcome(outcomes[41]).blockNumber })
  assert.equal(await client.getFile(101n), null)
  assert.equal(await transactionsSentBy(chain, client.txAddress), 4, 'addSchema + 3 batches')

  // Again, plus duplicates in the input: nothing is sent, existing ids come back.
  const again = await client.registerFiles([...files.slice(0, 5), files[0] as typeof files[number]], { onSent: () => { assert.fail('nothing should be sent') } })
  assert.deepEqual(again.map((o) => okOutcome(o).fileId), [1n, 2n, 3n, 4n, 5n, 1n])
  assert.equal(okOutcome(again[0]).txHash, null)
  assert.equal(await client.filesCount(), 100n)

  const events = await client.fileAddedEvents({ owner, fromBlock: 0n, toBlock: await client.blockNumber() })
  assert.equal(events.length, 100)
  assert.deepEqual(await client.fileAddedEvents({ owner: client.txAddress, fromBlock: 0n, toBlock: await client.blockNumber() }), [])
})

test('one transaction per file without multicall, and with the owner key through addFileWithSchema', async (t) => {
  const chain = await startTestChain(t)
  const ownerKey = chain.accounts[3] as Hex
  const owner = addressOf(ownerKey)
  const plain = testChainClient(chain, { config: { multicall: undefined } })
  const files = Array.from({ length: 12 }, (_, i) => ({ url: `ipfs://single-${i}`, schemaId: 0n, owner }))
  const sent: string[] = []
  const outcomes = await plain.registerFiles(files, { onSent: (txHash) => { sent.push(txHash) } })
  assert.equal(new Set(sent).size, 12)
  assert.deepEqual(outcomes.map((o) => okOutcome(o).fileId), files.map((_, i) => BigInt(i + 1)))
  assert.equal((await plain.getFile(3n))?.ownerAddress, owner)

  const withOwner = testChainClient(chain, { ownerPrivateKey: ownerKey })
  assert.equal(withOwner.ownerAddress, owner)
  const other = addressOf(chain.accounts[4] as Hex)
  const mixed = await withOwner.registerFiles([
    { url: 'ipfs://owned-a', schemaId: 0n, owner },
    { url: 'ipfs://owned-b', schemaId: 0n, owner },
    { url: 'ipfs://someone-else', schemaId: 0n, owner: other }
  ])
  assert.deepEqual(mixed.map((o) => okOutcome(o).fileId), [13n, 14n, 15n])
  assert.equal(await transactionsSentBy(chain, owner), 2, 'the owner signed its own two files')
  assert.equal((await withOwner.getFile(15n))?.ownerAddress, other)
  assert.equal((await withOwner.getFile(13n))?.ownerAddress, owner)
})

test('an unknown schemaId is reported as CHAIN_REVERTED (InvalidSchemaId) and nothing is sent for it', async (t) => {
  const chain = await startTestChain(t)
  const owner = addressOf(chain.accounts[2] as Hex)
  for (const client of [testChainClient(chain), testChainClient(chain, { config: { multicall: undefined } })]) {
    const tag = client.config.multicall === undefined ? 'single' : 'batched'
    const before = await transactionsSentBy(chain, client.txAddress)
    const outcomes = await client.registerFiles([
      { url: `ipfs://good-${tag}`, schemaId: 0n, owner },
      { url: `ipfs://bad-${tag}`, schemaId: 7n, owner }
    ])
    okOutcome(outcomes[0])
    const bad = outcomes[1]
    assert.ok(bad !== undefined && !bad.ok)
    assert.equal(bad.error.code, 'CHAIN_REVERTED')
    assert.equal(bad.error.details?.errorName, 'InvalidSchemaId')
    assert.deepEqual(bad.error.details?.args, ['7'])
    assert.equal(await client.fileIdByUrl(`ipfs://bad-${tag}`), 0n)
    assert.equal(await transactionsSentBy(chain, client.txAddress), before + 1)
  }
})

test('FileUrlAlreadyUsed from a registration that raced ours counts as success with the existing id', async (t) => {
  const chain = await startTestChain(t)
  const owner = addressOf(chain.accounts[2] as Hex)
  const rival = createWalletClient({ account: privateKeyToAccount(chain.accounts[5] as Hex), transport: http(chain.rpcUrl) })
  for (const ours of [testChainClient(chain), testChainClient(chain, { config: { multicall: undefined } })]) {
    const url = `ipfs://contested-${ours.config.multicall === undefined ? 'single' : 'batched'}`
    // Our transaction waits in the pool; a rival registers the same URL with a higher tip, so
    // both land in one block with the rival's first and ours hitting FileUrlAlreadyUsed.
    await chain.rpc('evm_setAutomine', [false])
    let resolveSent!: (hash: Hex) => void
    const sent = new Promise<Hex>((resolve) => { resolveSent = resolve })
    const oursDone = ours.registerFiles([{ url, schemaId: 0n, owner }], { onSent: (h) => { resolveSent(h) } })
    const ourTx = await Promise.race([sent, oursDone.then(() => { throw new Error('registered without waiting in the pool') })])
    await rival.sendTransaction({
      chain: null,
      to: chain.contracts.dataRegistry,
      data: encodeFunctionData({ abi: dataRegistryAbi, functionName: 'addFileWithSchema', args: [url, 0n] }),
      gas: 500_000n,
      maxFeePerGas: 100_000_000_000n,
      maxPriorityFeePerGas: 50_000_000_000n
    })
    await chain.rpc('evm_setAutomine', [true])
    await chain.mine(1)
    const [mine] = await oursDone
    const fileId = await ours.fileIdByUrl(url)
    assert.equal((await ours.getFile(fileId))?.ownerAddress, rival.account.address, 'the rival registered it')
    assert.equal(okOutcome(mine).fileId, fileId)
    assert.equal(okOutcome(mine).txHash, null, 'our transaction did not register it')
    const receipt = await chain.rpc('eth_getTransactionReceipt', [ourTx]) as { logs: unknown[]; blockNumber: string }
    assert.equal(receipt.logs.length, 0)
    assert.equal(BigInt(receipt.blockNumber), okOutcome(mine).blockNumber, 'same block as the rival')
  }
  assert.equal(await testChainClient(chain).filesCount(), 2n)
})

test('an unreachable RPC is CHAIN_UNAVAILABLE with a short message, never a raw viem error', async (t) => {
  const chain = await startTestChain(t)
  const client = testChainClient(chain, { requestTimeoutMs: 2_000 })
  const owner = addressOf(chain.accounts[2] as Hex)
  await chain.kill()
  for (const call of [
    async () => await client.registerFiles([{ url: 'ipfs://x', schemaId: 0n, owner }]),
    async () => await client.addSchema('n', 'json', 'ipfs://d'),
    async () => await client.getSchema(1n),
    async () => await client.blockNumber()
  ]) {
    await assert.rejects(call(), (err: unknown) => isHearthError(err, 'CHAIN_UNAVAILABLE') && err.message.length < 200 && !err.message.includes('\n'))
  }
  assert.deepEqual({ ...await client.health(), error: undefined }, { reachable: false, blockNumber: null, error: undefined })
  await assert.rejects(client.registerFiles([{ url: '', schemaId: 0n, owner }]), (err: unknown) => isHearthError(err, 'INVALID_ARGUMENT'))
})
