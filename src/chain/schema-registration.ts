// Registers locally added schemas on chain (docs/protocol.md §3.2 "adding a scope"): `hearth schema add`
// pins the definition and queues it here; this job calls addSchema when the chain is reachable
// and then reports local id → chain id so the caller can replace the local id everywhere.
//
// addSchema is not idempotent on chain (every call makes a new id), so before sending, the job
// durably notes the block it started from, and after a restart it first looks for its own
// SchemaAdded event from that block on, and waits for a transaction the node still holds.
import type { Hex } from 'viem'
import type { Kv } from '../db/database.js'
import type { DurableQueue, QueueEntry } from '../db/types.js'
import { HearthError, isHearthError } from '../errors.js'
import type { Logger } from '../log.js'
import type { ChainClient } from './client.js'
import { backoffDelay, createPollLoop, DEFAULT_BACKOFF, type Backoff } from '../lifecycle/poll-loop.js'
import { PARK_MS } from './registration-queue.js'

export interface SchemaRegistrationJob {
  /** The local id (`local:<definition CID>`); also the queue key. */
  localId: string
  name: string
  dialect: string
  definitionUrl: string
}

export type SchemaRegistrationState =
  | { kind: 'sending'; fromBlock: string; txHash?: Hex; sentAt?: number }
  | { kind: 'done'; chainId: string }

export interface SchemaRegistrationOptions {
  queue: DurableQueue<SchemaRegistrationJob>
  /** Durable per-localId progress; `done` entries are the local → chain id map, kept for good. */
  state: Kv<SchemaRegistrationState>
  chain: ChainClient
  /** Called once the schema has its chain id (again after a restart until acknowledged: make it idempotent). */
  onSchemaRegistered: (localId: string, chainId: string) => void | Promise<void>
  logger: Logger
  pollIntervalMs?: number
  backoff?: Backoff
  pendingTxPatienceMs?: number
}

export interface SchemaRegistration {
  /** Queues a schema for registration and wakes the job. */
  add (job: SchemaRegistrationJob): Promise<void>
  /** The chain id a local schema was registered as, or null while it is not (yet). */
  chainIdFor (localId: string): Promise<string | null>
  start (): void
  stop (): Promise<void>
  kick (): void
  runOnce (signal?: AbortSignal): Promise<void>
  status (): Promise<{ pending: number; lastError: string | null; reachable: boolean | null }>
}

const BATCH = 16
const DEFAULT_PENDING_PATIENCE_MS = 10 * 60 * 1000

export function createSchemaRegistration (opts: SchemaRegistrationOptions): SchemaRegistration {
  const { queue, state, chain, logger } = opts
  const backoff = opts.backoff ?? DEFAULT_BACKOFF
  const pollIntervalMs = opts.pollIntervalMs ?? chain.config.pollIntervalMs
  const patienceMs = opts.pendingTxPatienceMs ?? DEFAULT_PENDING_PATIENCE_MS
  let lastError: string | null = null
  let reachable: boolean | null = null

  async function finish (entry: QueueEntry<SchemaRegistrationJob>, chainId: bigint): Promise<void> {
    await state.put(entry.key, { kind: 'done', chainId: chainId.toString() })
    await opts.onSchemaRegistered(entry.item.localId, chainId.toString())
    await queue.ack(entry.key)
    logger.info({ localId: entry.item.localId, schemaId: chainId.toString() }, 'local schema registered on chain')
  }

  /** Our schema's id if an earlier attempt got it on chain; 'pending' while its transaction waits. */
  async function earlierAttempt (job: SchemaRegistrationJob, st: Extract<SchemaRegistrationState, { kind: 'sending' }>): Promise<bigint | 'pending' | null> {
    const head = await chain.blockNumber()
    const events = await chain.schemaAddedEvents(BigInt(st.fromBlock), head)
    const ours = events.find((e) => e.definitionUrl === job.definitionUrl && e.name === job.name && e.dialect === job.dialect)
    if (ours !== undefined) return ours.schemaId
    if (st.txHash !== undefined && Date.now() - (st.sentAt ?? 0) < patienceMs && await chain.transactionState(st.txHash) === 'pending') return 'pending'
    return null
  }

  async function registerOne (entry: QueueEntry<SchemaRegistrationJob>, signal?: AbortSignal): Promise<void> {
    const job = entry.item
    const st = await state.get(entry.key)
    if (st?.kind === 'done') { await finish(entry, BigInt(st.chainId)); return }
    let fromBlock: string
    if (st?.kind === 'sending') {
      const earlier = await earlierAttempt(job, st)
      if (earlier === 'pending') return
      if (earlier !== null) { await finish(entry, earlier); return }
      fromBlock = st.fromBlock
    } else {
      fromBlock = (await chain.blockNumber()).toString()
      await state.put(entry.key, { kind: 'sending', fromBlock })
    }
    const { schemaId } = await chain.addSchema(job.name, job.dialect, job.definitionUrl, {
      ...(signal !== undefined ? { signal } : {}),
      onSent: async (txHash) => { await state.put(entry.key, { kind: 'sending', fromBlock, txHash, sentAt: Date.now() }) }
    })
    await finish(entry, schemaId)
  }

  async function round (signal?: AbortSignal): Promise<number> {
    const due = await queue.due(BATCH)
    let failure: HearthError | null = null
    for (const entry of due) {
      try {
        await registerOne(entry, signal)
        reachable = true
      } catch (err) {
        const error = isHearthError(err) ? err : new HearthError('INTERNAL', err instanceof Error ? err.message : String(err))
        if (signal?.aborted === true) throw error
        lastError = error.message
        if (error.code === 'CHAIN_REVERTED') {
          await queue.retryLater(entry.key, PARK_MS, error.message)
          logger.warn({ localId: entry.item.localId, error: error.message }, 'schema registration rejected; parked')
          continue
        }
        if (error.code === 'CHAIN_UNAVAILABLE') reachable = false
        await queue.retryLater(entry.key, backoffDelay(entry.attempts, backoff), error.message)
        failure = error
        break
      }
    }
    if (failure !== null) throw failure
    return due.length === BATCH ? 0 : pollIntervalMs
  }

  const loop = createPollLoop({
    name: 'schema-registration',
    logger,
    step: round,
    errorDelayMs: (failures) => backoffDelay(failures - 1, backoff)
  })

  return {
    async add (job) {
      if (typeof job.localId !== 'string' || job.localId === '') throw new HearthError('INVALID_ARGUMENT', 'localId is required')
      await queue.enqueue(job.localId, job)
      loop.kick()
    },
    async chainIdFor (localId) {
      const st = await state.get(localId)
      return st?.kind === 'done' ? st.chainId : null
    },
    start: () => { loop.start() },
    stop: async () => { await loop.stop() },
    kick: () => { loop.kick() },
    async runOnce (signal) { await round(signal) },
    async status () { return { pending: await queue.size(), lastError, reachable } }
  }
}
