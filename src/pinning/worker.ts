// One round of work for one pinning service: take up to a batch of due queue entries and move each
// CID's record a step on (docs/protocol.md §3.3, "copies off the device"):
//   queued            → POST /pins with the storage node's addresses as origins → queued/pinning/pinned
//   queued / pinning  → GET /pins?cid=… (ten CIDs a request) → its new state, polled again later
//   pinned (answered) → for a sample, a read through the service's gateway, every block verified
//                       against its CID: served → pinned (and the entry leaves the queue);
//                       not served → failed (PINNING_NOT_SERVED), asked again after a backoff
//   failed            → asked again after a backoff with the API's replace (POST /pins/{id}) — by
//                       add where the request id is the CID (Cluster: a replace would unpin it) —, never
//                       remove + add: between the two the service holds no pin, and a service that
//                       spreads pins over peers (IPFS Cluster) may apply the removal after the new
//                       add on some peer, which then drops content the service reports pinned.
//                       One that was not served is polled and read back again instead.
//   removing          → DELETE /pins/{id} (found by CID when the id is unknown), record dropped
// A service that is unreachable, refuses the token or answers garbage leaves every record as it
// was: the entries are retried with backoff and the error is what the service's status shows.
import { isHearthError, HearthError } from '../errors.js'
import type { DurableQueue, QueueEntry } from '../db/types.js'
import { backoffDelay, type Backoff } from '../lifecycle/poll-loop.js'
import type { BlockSource } from '../storage/block-sources.js'
import { MAX_CIDS_PER_QUERY, type PinningClient, type RemotePin } from './client.js'
import type { PinRecord, PinRecords } from './records.js'

export interface PinWorkerDeps {
  client: PinningClient
  records: PinRecords
  queue: DurableQueue<{ cid: string }>
  /** The storage node's addresses, given to the service as origins (where to fetch the blocks). */
  origins: () => Promise<string[]>
  /** The service's gateway, for the sample reads; null = none (pins are taken at their word). */
  gateway: BlockSource | null
  settings: { batchSize: number; concurrency: number; pollIntervalMs: number; sampleRate: number; maxSampleBytes: number; requestTimeoutMs: number }
  backoff: Backoff
  /** Told the outcome of every request (for the service's status). */
  onOutcome: (error: HearthError | null) => void
  random?: () => number
}

interface Round { signal: AbortSignal; sample: () => boolean }

/** Runs one round; resolves to how many entries it handled (0: nothing was due). */
export async function pinRound (deps: PinWorkerDeps, signal: AbortSignal): Promise<number> {
  // The first "pinned" answer of every round is read back, the others with sampleRate.
  let sampled = false
  const round: Round = {
    signal,
    sample: () => {
      const take = !sampled || (deps.random ?? Math.random)() < deps.settings.sampleRate
      sampled = true
      return take
    }
  }
  const due = await deps.queue.due(deps.settings.batchSize)
  if (due.length === 0) return 0
  const toPoll: Array<{ entry: QueueEntry<{ cid: string }>; record: PinRecord }> = []
  const direct: Array<() => Promise<void>> = []
  // read together, not one await after another (each waits its turn behind the POSTs' writes)
  const records = await Promise.all(due.map(async (entry) => await deps.records.get(entry.key)))
  for (const [i, entry] of due.entries()) {
    const record = records[i]
    if (record === null) { await deps.queue.ack(entry.key); continue }
    if (record.state === 'removing') direct.push(async () => { await guarded(deps, entry, async () => { await removePin(deps, record, round.signal) }) })
    else if (record.requestId === null || (record.state === 'failed' && !notServed(record))) direct.push(async () => { await guarded(deps, entry, async () => { await requestPin(deps, entry, record, round) }) })
    else toPoll.push({ entry, record })
  }
  for (let i = 0; i < toPoll.length; i += MAX_CIDS_PER_QUERY) {
    const group = toPoll.slice(i, i + MAX_CIDS_PER_QUERY)
    direct.push(async () => { await pollGroup(deps, group, round) })
  }
  await runLimited(direct, deps.settings.concurrency, signal)
  return due.length
}

async function requestPin (deps: PinWorkerDeps, entry: QueueEntry<{ cid: string }>, record: PinRecord, round: Round): Promise<void> {
  const { signal } = round
  const origins = await deps.origins()
  const pin = { cid: record.cid, name: `hearth ${record.scope}`.slice(0, 255), origins, meta: { app: 'hearth', scope: record.scope.slice(0, 200) } }
  // a service whose request id is the CID itself (IPFS Cluster) runs a replace as Pin(new) then
  // Unpin(old): with the same CID that removes the pin just asked for, so such a request is asked
  // again by a plain add, which that service treats as the same request
  const answer = record.state === 'failed' && record.requestId !== null && record.requestId !== record.cid
    ? await deps.client.replace(record.requestId, pin, signal)
    : await deps.client.add(pin, signal)
  deps.onOutcome(null)
  await settle(deps, entry, { ...record, requestId: answer.requestId, error: null }, answer, round)
}

async function pollGroup (deps: PinWorkerDeps, group: Array<{ entry: QueueEntry<{ cid: string }>; record: PinRecord }>, round: Round): Promise<void> {
  const { signal } = round
  let answers: RemotePin[]
  try {
    answers = await deps.client.byCids(group.map((g) => g.record.cid), signal)
    deps.onOutcome(null)
  } catch (err) {
    if (signal.aborted) throw err
    for (const { entry } of group) await retryAfterError(deps, entry, err)
    return
  }
  for (const { entry, record } of group) {
    const mine = answers.find((a) => a.requestId === record.requestId) ?? answers.find((a) => sameCid(a.cid, record.cid))
    await guarded(deps, entry, async () => {
      if (mine === undefined) {
        // the service lost our request (or never kept it): ask again
        await deps.records.put({ ...record, state: 'queued', requestId: null, error: null })
        await deps.queue.retryLater(entry.key, 0, 'the service no longer knows the pin request')
        return
      }
      await settle(deps, entry, { ...record, requestId: mine.requestId }, mine, round)
    })
  }
}

/** Records what the service answered, verifying a sample of "pinned" answers. */
async function settle (deps: PinWorkerDeps, entry: QueueEntry<{ cid: string }>, record: PinRecord, answer: RemotePin, round: Round): Promise<void> {
  if (answer.status === 'pinned') {
    // a CID whose bytes were not served before is always read again
    const sample = deps.gateway !== null && (notServed(record) || round.sample())
    if (sample) {
      const served = await sampleRead(deps, record.cid, round.signal)
      if (served !== null) {
        await deps.records.put({ ...record, state: 'failed', verified: false, error: `${served.code}: ${served.message}` })
        await deps.queue.retryLater(entry.key, backoffDelay(entry.attempts, deps.backoff), served.message)
        return
      }
    }
    await deps.records.put({ ...record, state: 'pinned', verified: sample || record.verified, error: null })
    await deps.queue.ack(entry.key)
    return
  }
  if (answer.status === 'failed') {
    await deps.records.put({ ...record, state: 'failed', error: `the service could not pin it${answer.info !== null ? `: ${answer.info}` : ''}` })
    await deps.queue.retryLater(entry.key, backoffDelay(entry.attempts, deps.backoff), 'failed at the service')
    return
  }
  await deps.records.put({ ...record, state: answer.status, error: null })
  await deps.queue.retryLater(entry.key, deps.settings.pollIntervalMs, `${answer.status} at the service`)
}

/** Null when the gateway served the verified bytes; the error otherwise. */
async function sampleRead (deps: PinWorkerDeps, cid: string, signal: AbortSignal): Promise<HearthError | null> {
  const deadline = AbortSignal.any([signal, AbortSignal.timeout(deps.settings.requestTimeoutMs)])
  try {
    const bytes = await deps.gateway!.fetch(cid, { signal: deadline, maxBytes: deps.settings.maxSampleBytes })
    if (bytes !== null) return null
    return new HearthError('PINNING_NOT_SERVED', `the service says ${cid} is pinned but its ${deps.gateway!.name} does not have it`, { cid })
  } catch (err) {
    if (signal.aborted) throw err
    const why = isHearthError(err) ? `${err.code}: ${err.message}` : String(err)
    return new HearthError('PINNING_NOT_SERVED', `the service says ${cid} is pinned but its ${deps.gateway!.name} did not serve it (${why})`.slice(0, 500), { cid })
  }
}

async function removePin (deps: PinWorkerDeps, record: PinRecord, signal: AbortSignal): Promise<void> {
  const ids = record.requestId !== null
    ? [record.requestId]
    : (await deps.client.byCids([record.cid], signal)).filter((a) => sameCid(a.cid, record.cid)).map((a) => a.requestId)
  for (const id of ids) await deps.client.remove(id, signal)
  deps.onOutcome(null)
  await deps.records.del(record.cid)
  await deps.queue.ack(record.cid)
}

/** Runs `fn`; a service error leaves the record as it was and retries the entry with backoff. */
async function guarded (deps: PinWorkerDeps, entry: QueueEntry<{ cid: string }>, fn: () => Promise<void>): Promise<void> {
  try {
    await fn()
  } catch (err) {
    if (!isHearthError(err)) throw err
    await retryAfterError(deps, entry, err)
  }
}

async function retryAfterError (deps: PinWorkerDeps, entry: QueueEntry<{ cid: string }>, err: unknown): Promise<void> {
  if (!isHearthError(err)) throw err
  deps.onOutcome(err)
  const record = await deps.records.get(entry.key)
  if (record !== null) await deps.records.put({ ...record, error: `${err.code}: ${err.message}` })
  await deps.queue.retryLater(entry.key, backoffDelay(entry.attempts, deps.backoff), err.message)
}

function notServed (record: PinRecord): boolean { return record.state === 'failed' && record.error?.startsWith('PINNING_NOT_SERVED') === true }

function sameCid (a: string, b: string): boolean { return a === b || a.toLowerCase() === b.toLowerCase() }

async function runLimited (tasks: Array<() => Promise<void>>, limit: number, signal: AbortSignal): Promise<void> {
  let next = 0
  const lane = async (): Promise<void> => {
    while (next < tasks.length && !signal.aborted) await tasks[next++]()
  }
  await Promise.all(Array.from({ length: Math.min(limit, tasks.length) }, lane))
}
