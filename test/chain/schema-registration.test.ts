import { test, type TestContext } from 'node:test'
import assert from 'node:assert/strict'
import type { ChainClient } from '../../src/chain/client.js'
import {
  createSchemaRegistration, type SchemaRegistrationJob, type SchemaRegistrationState
} from '../../src/chain/schema-registration.js'
import { openDatabase, openKv } from '../../src/db/database.js'
import { createDurableQueue } from '../../src/db/queue.js'
import { silentLogger } from '../../src/log.js'
import { startTestChain, testChainClient } from '../support/anvil.js'
import { tempDir } from '../support/tmp.js'

const job: SchemaRegistrationJob = { localId: 'local:bafy-def', name: 'Instagram Profile', dialect: 'json', definitionUrl: 'ipfs://bafy-def' }

async function setup (t: TestContext) {
  const db = await openDatabase(await tempDir(t))
  t.after(async () => { await db.close() })
  const queue = createDurableQueue<SchemaRegistrationJob>(db, 'schema-registrations')
  const state = openKv<SchemaRegistrationState>(db, 'schema-registrations')
  const registered: Array<[string, string]> = []
  const make = (client: ChainClient) => {
    const job = createSchemaRegistration({
      queue, state, chain: client, logger: silentLogger(), pollIntervalMs: 50, backoff: { initialMs: 50, maxMs: 400 },
      onSchemaRegistered: (localId, chainId) => { registered.push([localId, chainId]) }
    })
    t.after(async () => { await job.stop() })
    return job
  }
  return { queue, state, registered, make }
}

test('a schema added while the chain is down is registered when it returns', async (t) => {
  const chain = await startTestChain(t)
  const client = testChainClient(chain, { requestTimeoutMs: 2_000 })
  await client.addSchema('someone else', 'json', 'ipfs://other')
  const s = await setup(t)
  const registration = s.make(client)
  await chain.kill()
  registration.start()
  await registration.add(job)
  while ((await registration.status()).reachable !== false) await new Promise((resolve) => setTimeout(resolve, 25))
  assert.equal(await registration.chainIdFor(job.localId), null)
  assert.equal((await registration.status()).pending, 1)

  await chain.restart()
  // The callback comes before the entry leaves the queue (so a crash in between repeats the callback).
  while (s.registered.length === 0 || (await registration.status()).pending > 0) await new Promise((resolve) => setTimeout(resolve, 25))
  assert.deepEqual(s.registered, [[job.localId, '2']])
  assert.equal(await registration.chainIdFor(job.localId), '2')
  assert.deepEqual(await client.getSchema(2n), { schemaId: 2n, name: job.name, dialect: job.dialect, definitionUrl: job.definitionUrl })
  assert.equal((await registration.status()).pending, 0)
})

test('after a crash between sending and recording, the schema is found on chain, not added twice', async (t) => {
  const chain = await startTestChain(t)
  const client = testChainClient(chain)
  const s = await setup(t)
  // The state a process leaves when it dies right after its addSchema was sent.
  await s.queue.enqueue(job.localId, job)
  await s.state.put(job.localId, { kind: 'sending', fromBlock: (await client.blockNumber()).toString() })
  const sent = await client.addSchema(job.name, job.dialect, job.definitionUrl)

  await s.make(client).runOnce()
  assert.deepEqual(s.registered, [[job.localId, sent.schemaId.toString()]])
  assert.equal(await client.schemasCount(), 1n)
  assert.equal(await s.queue.size(), 0)

  // Adding the same local schema again reports the known id without a transaction.
  const again = s.make(client)
  await again.add(job)
  await again.runOnce()
  assert.deepEqual(s.registered.at(-1), [job.localId, '1'])
  assert.equal(await client.schemasCount(), 1n)
})

test('a schema transaction still waiting in the pool after a restart is waited for', async (t) => {
  const chain = await startTestChain(t)
  const client = testChainClient(chain)
  const s = await setup(t)
  await chain.rpc('evm_setAutomine', [false])
  const first = s.make(client)
  first.start()
  await first.add(job)
  while ((await s.state.get(job.localId))?.kind !== 'sending' || (await s.state.get(job.localId) as { txHash?: string }).txHash === undefined) {
    await new Promise((resolve) => setTimeout(resolve, 25))
  }
  await first.stop()

  const second = s.make(client)
  await new Promise((resolve) => setTimeout(resolve, 100))
  await second.runOnce()
  assert.equal(s.registered.length, 0)
  await chain.rpc('evm_setAutomine', [true])
  await chain.mine(1)
  await second.runOnce()
  assert.deepEqual(s.registered, [[job.localId, '1']])
  assert.equal(await client.schemasCount(), 1n)
})
