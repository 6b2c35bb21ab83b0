import { test, type TestContext } from 'node:test'
import assert from 'node:assert/strict'
import type { Address, Hex } from 'viem'
import type { ChainClient } from '../../src/chain/client.js'
import type { DevChain } from '../../src/chain/dev-chain.js'
import {
  createRegistrationWorker, type InFlightRegistration, type RegistrationJob, type RegistrationWorkerOptions
} from '../../src/chain/registration-queue.js'
import { openDatabase, openKv } from '../../src/db/database.js'
import { createDurableQueue } from '../../src/db/queue.js'
import type { HearthError } from '../../src/errors.js'
import { silentLogger } from '../../src/log.js'
import { addressOf, startTestChain, testChainClient } from '../support/anvil.js'
import { tempDir } from '../support/tmp.js'

async function waitFor (what: string, check: () => boolean | Promise<boolean>, timeoutMs = 60_000): Promise<void> {
  const deadline = Date.now() + timeoutMs
  while (!await check()) {
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}`)
    await new Promise((resolve) => setTimeout(resolve, 25))
  }
}

const sleep = async (ms: number): Promise<void> => { await new Promise((resolve) => setTimeout(resolve, ms)) }

async function txCount (chain: DevChain, address: Address, tag: 'latest' | 'pending' = 'latest'): Promise<number> {
  return Number(BigInt(await chain.rpc('eth_getTransactionCount', [address, tag]) as string))
}

/** A queue + in-flight store in a real LevelDB, and callbacks that record what the worker reports. */
async function setup (t: TestContext, chain: DevChain) {
  const db = await openDatabase(await tempDir(t))
  t.after(async () => { await db.close() })
  const queue = createDurableQueue<RegistrationJob>(db, 'registrations')
  const inFlight = openKv<InFlightRegistration>(db, 'registrations-in-flight')
  const owner = addressOf(chain.accounts[2] as Hex)
  const registered = new Map<string, string>()
  const confirmed: Array<[string, string]> = []
  const parked: Array<[string, HearthError]> = []
  const unwanted = new Set<string>()
  const schemaIds = new Map<string, string>()
  const make = (client: ChainClient, overrides: Partial<RegistrationWorkerOptions> = {}) => {
    const worker = createRegistrationWorker({
      queue,
      inFlight,
      chain: client,
      owner,
      callbacks: {
        onRegistered: (path, fileId) => { registered.set(path, fileId) },
        onConfirmed: (path, fileId) => { confirmed.push([path, fileId]) },
        isStillWanted: (path) => !unwanted.has(path),
        onParked: (path, error) => { parked.push([path, error]) },
        resolveSchemaId: (id) => schemaIds.get(id) ?? null
      },
      confirmations: 1,
      batchSize: 10,
      logger: silentLogger(),
      pollIntervalMs: 50,
      backoff: { initialMs: 50, maxMs: 400 },
      ...overrides
    })
    t.after(async () => { await worker.stop() })
    return worker
  }
  const enqueue = async (from: number, to: number, schemaId = '0'): Promise<void> => {
    for (let i = from; i < to; i++) await queue.enqueue(`f${i}`, { url: `ipfs://bafy-file-${i}`, schemaId, path: `test.scope/f${i}.json` })
  }
  return { queue, inFlight, owner, registered, confirmed, parked, unwanted, schemaIds, make, enqueue }
}

test('files queued while the chain is down drain exactly once when it returns', async (t) => {
  const chain = await startTestChain(t)
  const client = testChainClient(chain, { requestTimeoutMs: 2_000 })
  const s = await setup(t, chain)
  const worker = s.make(client)
  await s.enqueue(0, 25)
  worker.start()
  await waitFor('the first batch', () => s.confirmed.length >= 10)

  await chain.kill()
  await s.enqueue(25, 50)
  worker.kick()
  await waitFor('the worker to notice', async () => (await worker.status()).reachable === false)
  const down = await worker.status()
  assert.ok(down.pending > 0, 'entries stay queued while the chain is down')
  assert.match(down.lastError ?? '', /unreachable/)
  await sleep(300) // several backoff rounds against a closed port
  assert.ok(s.confirmed.length < 50)

  await chain.restart()
  await waitFor('all 50 files', async () => s.confirmed.length === 50 && await s.queue.size() === 0)
  assert.equal(await client.filesCount(), 50n, 'one registration per URL')
  assert.equal(new Set(s.confirmed.map(([path]) => path)).size, 50, 'each file confirmed once')
  assert.deepEqual(s.confirmed.map(([, id]) => Number(id)).sort((a, b) => a - b), Array.from({ length: 50 }, (_, i) => i + 1))
  for (const [path, fileId] of s.confirmed) {
    const file = await client.getFile(BigInt(fileId))
    assert.equal(file?.url, `ipfs://bafy-file-${path.slice('test.scope/f'.length, -'.json'.length)}`)
    assert.equal(file?.ownerAddress, s.owner)
  }
  const status = await worker.status()
  assert.deepEqual({ ...status, lastError: null }, { pending: 0, waitingConfirmations: 0, parked: 0, lastError: null, reachable: true })
})

test('a restarted worker waits for its sent, unmined transaction instead of sending another', async (t) => {
  const chain = await startTestChain(t)
  const client = testChainClient(chain)
  const s = await setup(t, chain)
  await s.enqueue(0, 5)
  await chain.rpc('evm_setAutomine', [false])
  const first = s.make(client)
  first.start()
  await waitFor('the transaction to be sent', async () => {
    let n = 0
    for await (const _ of s.inFlight.entries()) n++
    return n === 5
  })
  await first.stop() // as if the daemon died while the transaction waited in the pool
  assert.equal(await txCount(chain, client.txAddress, 'pending') - await txCount(chain, client.txAddress), 1)

  const second = s.make(client)
  await sleep(100) // the interrupted entries' backoff
  await second.runOnce()
  assert.equal(await txCount(chain, client.txAddress, 'pending'), 1, 'nothing resent while the first is pending')
  assert.equal(s.confirmed.length, 0)

  await chain.rpc('evm_setAutomine', [true])
  await chain.mine(1)
  await second.runOnce()
  assert.equal(s.confirmed.length, 5)
  assert.equal(await client.filesCount(), 5n)
  assert.equal(await txCount(chain, client.txAddress), 1, 'one transaction in all')
  assert.equal(await s.queue.size(), 0)
  for await (const _ of s.inFlight.entries()) assert.fail('in-flight records are cleared once confirmed')
})

test('a restarted worker resends a transaction the node dropped, still registering each URL once', async (t) => {
  const chain = await startTestChain(t)
  const client = testChainClient(chain)
  const s = await setup(t, chain)
  await s.enqueue(0, 5)
  await chain.rpc('evm_setAutomine', [false])
  const first = s.make(client)
  first.start()
  await waitFor('the transaction to be sent', async () => (await s.inFlight.get('f4')) !== undefined)
  await first.stop()
  await chain.rpc('anvil_dropAllTransactions')
  await chain.rpc('evm_setAutomine', [true])

  const second = s.make(client)
  await sleep(100)
  await second.runOnce()
  assert.equal(s.confirmed.length, 5)
  assert.equal(await client.filesCount(), 5n)
  assert.equal(await txCount(chain, client.txAddress), 1)
})

test('a registration is confirmed only after the configured number of blocks', async (t) => {
  const chain = await startTestChain(t)
  const client = testChainClient(chain)
  const s = await setup(t, chain)
  const worker = s.make(client, { confirmations: 3 })
  await s.enqueue(0, 2)

  await worker.runOnce()
  assert.equal(s.registered.size, 2)
  assert.equal(s.confirmed.length, 0)
  assert.equal((await worker.status()).waitingConfirmations, 2)
  await chain.mine(1)
  await worker.runOnce()
  assert.equal(s.confirmed.length, 0, 'two blocks are not three confirmations')
  await chain.mine(1)
  await worker.runOnce()
  assert.deepEqual(s.confirmed.map(([path]) => path).sort(), ['test.scope/f0.json', 'test.scope/f1.json'])
  assert.equal(await s.queue.size(), 0)
  assert.equal(await client.filesCount(), 2n, 'waiting for confirmations sends nothing again')
})

test('a reverted registration (unknown schemaId) is parked with its error, not retried', async (t) => {
  const chain = await startTestChain(t)
  const client = testChainClient(chain)
  const s = await setup(t, chain)
  const worker = s.make(client)
  await s.enqueue(0, 1, '0')
  await s.enqueue(1, 2, '9')

  await worker.runOnce()
  assert.deepEqual(s.confirmed.map(([path]) => path), ['test.scope/f0.json'])
  assert.equal(s.parked.length, 1)
  const [path, error] = s.parked[0] as [string, HearthError]
  assert.equal(path, 'test.scope/f1.json')
  assert.equal(error.code, 'CHAIN_REVERTED')
  assert.equal(error.details?.errorName, 'InvalidSchemaId')
  const entry = await s.queue.get('f1')
  assert.match(entry?.lastError ?? '', /InvalidSchemaId/)
  assert.ok((entry?.notBefore ?? 0) > Date.now() + 60 * 60 * 1000)
  assert.equal((await worker.status()).parked, 1)

  const sent = await txCount(chain, client.txAddress)
  await worker.runOnce()
  await worker.runOnce()
  assert.equal(await txCount(chain, client.txAddress), sent, 'a parked entry sends nothing')
  assert.equal(s.parked.length, 1)
})

test('unwanted files are dropped and local schema ids wait for their chain id', async (t) => {
  const chain = await startTestChain(t)
  const client = testChainClient(chain)
  const s = await setup(t, chain)
  const worker = s.make(client)
  await s.enqueue(0, 1, 'local:bafy-definition')
  await s.enqueue(1, 2, '0')
  s.unwanted.add('test.scope/f1.json')

  await worker.runOnce()
  assert.equal(await s.queue.get('f1'), null, 'dropped')
  assert.match((await s.queue.get('f0'))?.lastError ?? '', /schema/)
  assert.equal(await client.filesCount(), 0n)

  const { schemaId } = await client.addSchema('s', 'json', 'ipfs://bafy-definition')
  s.schemaIds.set('local:bafy-definition', schemaId.toString())
  await sleep(100)
  await worker.runOnce()
  assert.deepEqual(s.confirmed, [['test.scope/f0.json', '1']])
  assert.equal((await client.getFile(1n))?.schemaId, schemaId)
})
