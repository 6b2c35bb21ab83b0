// The durable queue of file registrations (docs/protocol.md §3.1 step 5). Entries stay in the queue until
// their registration has the configured confirmations, so a SIGKILL at any point loses nothing:
//   - registered on chain already (by us before the crash, or anyone)? fileIdByUrl finds it;
//   - sent but not mined when we died? the txHash is in `inFlight`; while the node still has the
//     transaction pending we wait for it instead of paying for a second one;
//   - unreachable RPC: each entry backs off (capped), and nothing is dropped;
//   - a registration the contract rejects (e.g. InvalidSchemaId) is parked with its error (due
//     again only after PARK_MS) instead of being retried in a tight loop.
// A URL is never registered twice: the client checks fileIdByUrl and treats FileUrlAlreadyUsed
// as success, and the contract itself refuses a second registration.
import type { Address, Hex } from 'viem'
import type { Kv } from '../db/database.js'
import type { DurableQueue, QueueEntry } from '../db/types.js'
import { HearthError, isHearthError } from '../errors.js'
import type { Logger } from '../log.js'
import type { ChainClient, FileToRegister } from './client.js'
import { backoffDelay, createPollLoop, DEFAULT_BACKOFF, type Backoff } from '../lifecycle/poll-loop.js'

export interface RegistrationJob {
  /** `ipfs://<cid>` of the stored ciphertext. */
  url: string
  /** Decimal on-chain schemaId, '0' for none, or a `local:` id not yet registered on chain. */
  schemaId: string
  /** The file's path in the index (its key there). */
  path: string
}

/** A transaction carrying this entry's registration was sent (durable across restarts). */
export interface InFlightRegistration {
  txHash: Hex
  sentAt: number
}

export interface RegistrationCallbacks {
  /** The file has an id on chain (not yet confirmed). May be called again after a restart. */
  onRegistered (path: string, fileId: string, blockNumber: bigint): void | Promise<void>
  /** The registration has the configured confirmations; the entry leaves the queue after this. */
  onConfirmed (path: string, fileId: string): void | Promise<void>
  /** False when the file was deleted or superseded: its entry is dropped without registering. */
  isStillWanted (path: string): boolean | Promise<boolean>
  /** The contract rejects this registration; the entry is parked with `error`. */
  onParked? (path: string, error: HearthError): void | Promise<void>
  /** The on-chain id of a `local:` schema id, or null while it is not registered yet. */
  resolveSchemaId? (schemaId: string): string | null | Promise<string | null>
}

export interface RegistrationWorkerOptions {
  queue: DurableQueue<RegistrationJob>
  /** Durable record of sent transactions per queue key. */
  inFlight: Kv<InFlightRegistration>
  chain: ChainClient
  /** The address that owns the registered files (the identity's wallet). */
  owner: Address
  callbacks: RegistrationCallbacks
  confirmations: number
  /** Entries per round (one multicall transaction per maxBatchSize of the client). */
  batchSize: number
  logger: Logger
  /** How often to look for due entries and new blocks when idle (default: the chain config's). */
  pollIntervalMs?: number
  backoff?: Backoff
  /** A sent transaction the node still holds is waited for this long before it is sent again. */
  pendingTxPatienceMs?: number
}

export interface RegistrationStatus {
  /** Entries not yet registered (including parked ones). */
  pending: number
  waitingConfirmations: number
  parked: number
  lastError: string | null
  /** Result of the last chain call; null until the first one. */
  reachable: boolean | null
}

export interface RegistrationWorker {
  start (): void
  stop (): Promise<void>
  /** Look at the queue now (e.g. right after an enqueue). */
  kick (): void
  /** One round by hand (tests, or a caller that drives its own schedule). */
  runOnce (signal?: AbortSignal): Promise<void>
  status (): Promise<RegistrationStatus>
}

/** How long a rejected registration waits before it is tried again. */
export const PARK_MS = 24 * 60 * 60 * 1000
const DEFAULT_PENDING_PATIENCE_MS = 10 * 60 * 1000

interface Registered { path: string; url: string; fileId: bigint; blockNumber: bigint }

export function createRegistrationWorker (opts: RegistrationWorkerOptions): RegistrationWorker {
  const { queue, inFlight, chain, callbacks, logger } = opts
  const backoff = opts.backoff ?? DEFAULT_BACKOFF
  const pollIntervalMs = opts.pollIntervalMs ?? chain.config.pollIntervalMs
  const patienceMs = opts.pendingTxPatienceMs ?? DEFAULT_PENDING_PATIENCE_MS
  if (!Number.isSafeInteger(opts.confirmations) || opts.confirmations < 1) throw new HearthError('INVALID_ARGUMENT', 'confirmations must be >= 1')
  if (!Number.isSafeInteger(opts.batchSize) || opts.batchSize < 1) throw new HearthError('INVALID_ARGUMENT', 'batchSize must be >= 1')

  /** Registered, waiting for confirmations; kept out of new rounds. */
  const awaiting = new Map<string, Registered>()
  /** Sent earlier (maybe by a previous process) and still pending in the node: key → txHash. */
  const pendingTx = new Map<string, Hex>()
  let lastError: string | null = null
  let reachable: boolean | null = null

  async function round (signal?: AbortSignal): Promise<number> {
    try {
      const more = await registerDue(signal)
      await confirm()
      return more ? 0 : pollIntervalMs
    } catch (err) {
      const error = isHearthError(err) ? err : new HearthError('INTERNAL', String(err))
      if (signal?.aborted === true) throw error
      lastError = error.message
      if (error.code === 'CHAIN_UNAVAILABLE') reachable = false
      throw error
    }
  }

  /** Registers up to batchSize due entries; true when more may be due right away. */
  async function registerDue (signal?: AbortSignal): Promise<boolean> {
    await recheckPendingTransactions()
    const skip = (key: string): boolean => awaiting.has(key) || pendingTx.has(key)
    const due = (await queue.due(opts.batchSize + awaiting.size + pendingTx.size)).filter((e) => !skip(e.key)).slice(0, opts.batchSize)
    if (due.length === 0) return false
    const work: Array<{ entry: QueueEntry<RegistrationJob>; file: FileToRegister }> = []
    for (const entry of due) {
      const file = await prepare(entry)
      if (file !== null) work.push({ entry, file })
    }
    if (work.length > 0) await register(work, signal)
    return due.length === opts.batchSize
  }

  /** The file to register for an entry, or null when it is settled or deferred otherwise. */
  async function prepare (entry: QueueEntry<RegistrationJob>): Promise<FileToRegister | null> {
    const { path, url } = entry.item
    if (!await callbacks.isStillWanted(path)) {
      await inFlight.del(entry.key)
      await queue.ack(entry.key)
      logger.debug({ path }, 'registration dropped: file no longer wanted')
      return null
    }
    const schemaId = await chainSchemaId(entry.item.schemaId)
    if (schemaId === null) {
      await queue.retryLater(entry.key, backoffDelay(entry.attempts, backoff), 'waiting for the schema to be registered on chain')
      return null
    }
    const sent = await inFlight.get(entry.key)
    if (sent !== undefined && Date.now() - sent.sentAt < patienceMs && await chain.transactionState(sent.txHash) === 'pending') {
      pendingTx.set(entry.key, sent.txHash)
      return null
    }
    return { url, schemaId, owner: opts.owner }
  }

  async function chainSchemaId (schemaId: string): Promise<bigint | null> {
    if (/^[0-9]+$/.test(schemaId)) return BigInt(schemaId)
    if (/^0x[0-9a-fA-F]+$/.test(schemaId)) return BigInt(schemaId)
    const resolved = await callbacks.resolveSchemaId?.(schemaId) ?? null
    return resolved !== null && /^[0-9]+$/.test(resolved) ? BigInt(resolved) : null
  }

  async function register (work: Array<{ entry: QueueEntry<RegistrationJob>; file: FileToRegister }>, signal?: AbortSignal): Promise<void> {
    const keysByUrl = new Map<string, string[]>()
    for (const { entry, file } of work) keysByUrl.set(file.url, [...keysByUrl.get(file.url) ?? [], entry.key])
    let outcomes
    try {
      outcomes = await chain.registerFiles(work.map((w) => w.file), {
        ...(signal !== undefined ? { signal } : {}),
        onSent: async (txHash, urls) => {
          const sentAt = Date.now()
          for (const url of urls) for (const key of keysByUrl.get(url) ?? []) await inFlight.put(key, { txHash, sentAt })
        }
      })
    } catch (err) {
      const message = err instanceof Error ? err.message : String(err)
      for (const { entry } of work) await queue.retryLater(entry.key, backoffDelay(entry.attempts, backoff), message)
      throw err
    }
    reachable = true
    for (const [i, outcome] of outcomes.entries()) {
      const { entry } = work[i] as (typeof work)[number]
      if (outcome.ok) {
        awaiting.set(entry.key, { path: entry.item.path, url: outcome.url, fileId: outcome.fileId, blockNumber: outcome.blockNumber })
        await callbacks.onRegistered(entry.item.path, outcome.fileId.toString(), outcome.blockNumber)
      } else if (outcome.error.code === 'CHAIN_REVERTED') {
        await inFlight.del(entry.key)
        await queue.retryLater(entry.key, PARK_MS, outcome.error.message)
        lastError = outcome.error.message
        logger.warn({ path: entry.item.path, url: outcome.url, error: outcome.error.message }, 'registration rejected by the contract; parked')
        await callbacks.onParked?.(entry.item.path, outcome.error)
      } else {
        await queue.retryLater(entry.key, backoffDelay(entry.attempts, backoff), outcome.error.message)
      }
    }
  }

  /** Transactions we waited for: once the node no longer holds them pending, their entries are due again. */
  async function recheckPendingTransactions (): Promise<void> {
    for (const [key, txHash] of pendingTx) {
      if (await chain.transactionState(txHash) !== 'pending') pendingTx.delete(key)
    }
  }

  /** Entries whose registration block has enough blocks on top: confirmed and acked. */
  async function confirm (): Promise<void> {
    if (awaiting.size === 0) return
    const head = await chain.blockNumber()
    reachable = true
    const ready = [...awaiting].filter(([, r]) => head - r.blockNumber + 1n >= BigInt(opts.confirmations))
    if (ready.length === 0) return
    // Still there? A reorg can undo a registration; such an entry is simply registered again.
    const ids = await chain.fileIdsByUrl(ready.map(([, r]) => r.url))
    for (const [i, [key, r]] of ready.entries()) {
      awaiting.delete(key)
      if (ids[i] !== r.fileId) {
        logger.warn({ path: r.path, fileId: r.fileId.toString() }, 'registration vanished before confirmation; registering again')
        continue
      }
      await callbacks.onConfirmed(r.path, r.fileId.toString())
      await inFlight.del(key)
      await queue.ack(key)
    }
  }

  const loop = createPollLoop({
    name: 'file-registration',
    logger,
    step: async (signal) => await round(signal),
    errorDelayMs: (failures) => backoffDelay(failures - 1, backoff)
  })

  return {
    start: () => { loop.start() },
    stop: async () => { await loop.stop() },
    kick: () => { loop.kick() },
    async runOnce (signal) { await round(signal) },
    async status () {
      const size = await queue.size()
      // Parked entries are the ones pushed far into the future; the queue is local, so a scan is cheap.
      const all = await queue.due(size, Number.MAX_SAFE_INTEGER)
      const parkedAfter = Date.now() + PARK_MS / 2
      const parked = all.filter((e) => e.notBefore > parkedAfter).length
      return { pending: size - awaiting.size, waitingConfirmations: awaiting.size, parked, lastError, reachable }
    }
  }
}
