// Registering data files in DataRegistry without ever registering a URL twice and without a
// round trip per file:
//   1. one batched read of fileIdByUrl: URLs already on chain are done (their existing id);
//   2. a dry run (eth_call on the pending state, so transactions still in the pool count) of
//      every registration: a call that would revert is reported with its decoded error instead
//      of being sent (FileUrlAlreadyUsed there = someone was faster: read the existing id, or
//      retry later while their transaction is not mined yet);
//   3. the rest go out as Multicall3 `aggregate3` transactions of up to maxBatchSize
//      registrations (tx key, owner named explicitly), or as one transaction per file when the
//      network has no multicall or the owner's own key signs (msg.sender must be the owner);
//   4. ids come from the FileAddedV2 events in the receipts; a registration without an event is
//      looked up again by URL.
import { encodeFunctionData, isAddress, parseEventLogs, type Address, type Hex, type TransactionReceipt } from 'viem'
import { HearthError } from '../errors.js'
import type { Logger } from '../log.js'
import { dataRegistryAbi, multicall3Abi } from './abi.js'
import type { ChainConfig } from './config.js'
import { decodeRevert, findRevert, isUnreachable, revertedError, toChainError, type DecodedRevert } from './errors.js'
import { mapLimit, type ChainPublicClient, type TxRequest, type TxSender } from './transactions.js'

export interface FileToRegister {
  /** `ipfs://<cid>` of the stored ciphertext. */
  url: string
  /** 0n = no schema. */
  schemaId: bigint
  owner: Address
}

export interface RegisterOptions {
  /** Called as soon as a transaction carrying these URLs is accepted by the node, before it is mined. */
  onSent?: (txHash: Hex, urls: string[]) => void | Promise<void>
  /** Stops waiting for receipts (the transactions stay sent). */
  signal?: AbortSignal
}

export type RegistrationOutcome =
  /** Registered, by this call (txHash set) or earlier (txHash null); blockNumber = block it was added in. */
  | { url: string; ok: true; fileId: bigint; txHash: Hex | null; blockNumber: bigint }
  /** CHAIN_REVERTED: the registration itself is invalid (e.g. InvalidSchemaId). CHAIN_UNAVAILABLE: try again later. */
  | { url: string; ok: false; error: HearthError }

export interface FileRegistrarDeps {
  config: ChainConfig
  publicClient: ChainPublicClient
  txSender: TxSender
  ownerSender: TxSender | null
  logger: Logger
  maxBatchSize: number
  /** Gas ceiling of one batch transaction; larger batches are split. */
  maxBatchGas: bigint
  fileIdsByUrl: (urls: string[]) => Promise<bigint[]>
  getFiles: (ids: bigint[]) => Promise<Array<{ addedAtBlock: bigint; ownerAddress: Address } | null>>
}

const PREPARE_CONCURRENCY = 8
/** Registrations per dry-run eth_call: well below any RPC's eth_call gas cap. */
const DRY_RUN_CHUNK = 50

interface Call3 { target: Address; allowFailure: boolean; callData: Hex }

export function createFileRegistrar (deps: FileRegistrarDeps): (files: FileToRegister[], opts?: RegisterOptions) => Promise<RegistrationOutcome[]> {
  const { config, publicClient, txSender, ownerSender, logger } = deps
  const registry = config.dataRegistry

  return async function registerFiles (files, opts = {}) {
    for (const f of files) validate(f)
    const unique = [...new Map(files.map((f) => [f.url, f])).values()]
    const outcomes = new Map<string, RegistrationOutcome>()
    const run: Run = { outcomes, opts }

    const ids = await deps.fileIdsByUrl(unique.map((f) => f.url))
    await settleExisting(run, unique.filter((_, i) => (ids[i] ?? 0n) > 0n).map((f) => f.url), ids.filter((id) => id > 0n))
    const todo = unique.filter((_, i) => ids[i] === 0n)

    const ownSigned = ownerSender === null ? [] : todo.filter((f) => f.owner.toLowerCase() === ownerSender.address.toLowerCase())
    const keySigned = todo.filter((f) => !ownSigned.includes(f))
    if (ownSigned.length > 0 && ownerSender !== null) await registerEach(run, ownSigned, ownerSender, true)
    if (keySigned.length > 0) {
      if (config.multicall !== undefined) await registerBatched(run, keySigned, config.multicall)
      else await registerEach(run, keySigned, txSender, false)
    }
    return files.map((f) => outcomes.get(f.url) as RegistrationOutcome)
  }

  interface Run { outcomes: Map<string, RegistrationOutcome>; opts: RegisterOptions }

  function registrationCall (f: FileToRegister, ownerSigns: boolean): Hex {
    return ownerSigns
      ? encodeFunctionData({ abi: dataRegistryAbi, functionName: 'addFileWithSchema', args: [f.url, f.schemaId] })
      : encodeFunctionData({ abi: dataRegistryAbi, functionName: 'addFileWithPermissionsAndSchema', args: [f.url, f.owner, [], f.schemaId] })
  }

  /** One transaction per file; the dry run is the gas estimate itself. */
  async function registerEach (run: Run, items: FileToRegister[], sender: TxSender, ownerSigns: boolean): Promise<void> {
    const rejected: Array<{ url: string; revert: DecodedRevert }> = []
    const prepared = await mapLimit(items, PREPARE_CONCURRENCY, async (f) => {
      const data = registrationCall(f, ownerSigns)
      try {
        return { url: f.url, request: { to: registry, data, gas: await publicClient.estimateGas({ account: sender.address, to: registry, data, blockTag: 'pending' }) } }
      } catch (err) {
        const revert = findRevert(err)
        if (revert === null) throw toChainError(err, 'preparing file registration')
        rejected.push({ url: f.url, revert })
        return null
      }
    })
    await settleRejected(run, rejected)
    const ready = prepared.filter((p) => p !== null)
    await sendAndSettle(run, sender, ready.map((p) => p.request), ready.map((p) => [p.url]))
  }

  /** Up to maxBatchSize registrations per aggregate3 transaction from the tx key. */
  async function registerBatched (run: Run, items: FileToRegister[], multicall: Address): Promise<void> {
    const chunks: FileToRegister[][] = []
    for (let i = 0; i < items.length; i += DRY_RUN_CHUNK) chunks.push(items.slice(i, i + DRY_RUN_CHUNK))
    const rejected: Array<{ url: string; revert: DecodedRevert }> = []
    const accepted: Array<{ url: string; call: Call3 }> = []
    const dryRuns = await mapLimit(chunks, PREPARE_CONCURRENCY, async (chunk) => {
      const calls: Call3[] = chunk.map((f) => ({ target: registry, allowFailure: true, callData: registrationCall(f, false) }))
      try {
        const { result } = await publicClient.simulateContract({
          address: multicall, abi: multicall3Abi, functionName: 'aggregate3', args: [calls], account: txSender.address, blockTag: 'pending'
        })
        return result.map((r, j) => ({ url: (chunk[j] as FileToRegister).url, call: calls[j] as Call3, ...r }))
      } catch (err) {
        throw toChainError(err, 'dry-running file registrations')
      }
    })
    for (const r of dryRuns.flat()) {
      if (r.success) accepted.push({ url: r.url, call: r.call })
      else rejected.push({ url: r.url, revert: decodeRevert(r.returnData) })
    }
    await settleRejected(run, rejected)
    const requests: TxRequest[] = []
    const urlsPerRequest: string[][] = []
    for (let i = 0; i < accepted.length; i += deps.maxBatchSize) {
      for (const batch of await batchTransactions(accepted.slice(i, i + deps.maxBatchSize), multicall)) {
        requests.push(batch.request)
        urlsPerRequest.push(batch.urls)
      }
    }
    await sendAndSettle(run, txSender, requests, urlsPerRequest)
  }

  /**
   * aggregate3 transactions for registrations that passed the dry run, halving any batch whose
   * gas exceeds maxBatchGas (or the node's cap: the estimate then fails without a revert).
   */
  async function batchTransactions (accepted: Array<{ url: string; call: Call3 }>, multicall: Address): Promise<Array<{ request: TxRequest; urls: string[] }>> {
    if (accepted.length === 0) return []
    // Estimated with allowFailure=false: with failures allowed, the estimate could be a gas
    // limit at which some registrations run out of gas while the transaction "succeeds".
    const strict = encodeFunctionData({ abi: multicall3Abi, functionName: 'aggregate3', args: [accepted.map((a) => ({ ...a.call, allowFailure: false }))] })
    let gas: bigint | null
    try {
      gas = await publicClient.estimateGas({ account: txSender.address, to: multicall, data: strict, blockTag: 'pending' })
    } catch (err) {
      if (isUnreachable(err)) throw toChainError(err, 'estimating batch gas')
      if (findRevert(err) !== null || accepted.length === 1) {
        throw new HearthError('CHAIN_UNAVAILABLE', 'estimating batch gas: state changed during preparation; it will be retried')
      }
      gas = null
    }
    if ((gas === null || gas > deps.maxBatchGas) && accepted.length > 1) {
      const half = Math.ceil(accepted.length / 2)
      return [...await batchTransactions(accepted.slice(0, half), multicall), ...await batchTransactions(accepted.slice(half), multicall)]
    }
    const data = encodeFunctionData({ abi: multicall3Abi, functionName: 'aggregate3', args: [accepted.map((a) => a.call)] })
    return [{ request: { to: multicall, data, gas: gas as bigint }, urls: accepted.map((a) => a.url) }]
  }

  async function sendAndSettle (run: Run, sender: TxSender, requests: TxRequest[], urlsPerRequest: string[][]): Promise<void> {
    if (requests.length === 0) return
    const hashes = await sender.sendAll(requests, async (hash, index) => { await run.opts.onSent?.(hash, urlsPerRequest[index] ?? []) })
    const receipts = await sender.waitReceipts(hashes, { signal: run.opts.signal })
    const missing: string[] = []
    receipts.forEach((receipt, index) => {
      const added = fileAddedByUrl(receipt)
      for (const url of urlsPerRequest[index] ?? []) {
        const fileId = added.get(url)
        if (fileId !== undefined) run.outcomes.set(url, { url, ok: true, fileId, txHash: receipt.transactionHash, blockNumber: receipt.blockNumber })
        else missing.push(url)
      }
    })
    logger.debug({ transactions: hashes.length, registered: urlsPerRequest.flat().length - missing.length }, 'file registrations mined')
    await recheck(run, missing)
  }

  function fileAddedByUrl (receipt: TransactionReceipt): Map<string, bigint> {
    const events = parseEventLogs({ abi: dataRegistryAbi, eventName: 'FileAddedV2', logs: receipt.logs })
      .filter((log) => log.address.toLowerCase() === registry.toLowerCase())
    return new Map(events.map((e) => [e.args.url, e.args.fileId]))
  }

  async function settleRejected (run: Run, rejected: Array<{ url: string; revert: DecodedRevert }>): Promise<void> {
    const raced: string[] = []
    for (const { url, revert } of rejected) {
      if (revert.errorName === 'FileUrlAlreadyUsed') {
        raced.push(url)
      } else if (revert.data === '0x') {
        // A failure without revert data is out-of-gas or the like, not a verdict on the file.
        run.outcomes.set(url, { url, ok: false, error: new HearthError('CHAIN_UNAVAILABLE', 'registration dry run failed without a reason; it will be retried') })
      } else {
        run.outcomes.set(url, { url, ok: false, error: revertedError('registering file', revert) })
      }
    }
    await recheck(run, raced)
  }

  /** URLs whose registration left no event here: registered by someone else meanwhile, or to retry. */
  async function recheck (run: Run, urls: string[]): Promise<void> {
    if (urls.length === 0) return
    const ids = await deps.fileIdsByUrl(urls)
    await settleExisting(run, urls.filter((_, i) => (ids[i] ?? 0n) > 0n), ids.filter((id) => id > 0n))
    urls.filter((_, i) => ids[i] === 0n).forEach((url) => {
      run.outcomes.set(url, { url, ok: false, error: new HearthError('CHAIN_UNAVAILABLE', 'registration was not applied; it will be retried') })
    })
  }

  async function settleExisting (run: Run, urls: string[], ids: bigint[]): Promise<void> {
    if (urls.length === 0) return
    const found = await deps.getFiles(ids)
    urls.forEach((url, i) => {
      const file = found[i]
      const fileId = ids[i] as bigint
      if (file === null || file === undefined) {
        run.outcomes.set(url, { url, ok: false, error: new HearthError('CHAIN_UNAVAILABLE', `file ${fileId} not readable yet; it will be retried`) })
      } else {
        run.outcomes.set(url, { url, ok: true, fileId, txHash: null, blockNumber: file.addedAtBlock })
      }
    })
  }

}

function validate (f: FileToRegister): void {
  if (typeof f.url !== 'string' || f.url.length === 0 || f.url.length > 2048) {
    throw new HearthError('INVALID_ARGUMENT', 'file URL must be a non-empty string of at most 2048 characters')
  }
  if (typeof f.schemaId !== 'bigint' || f.schemaId < 0n) throw new HearthError('INVALID_ARGUMENT', 'schemaId must be a non-negative bigint', { url: f.url })
  if (typeof f.owner !== 'string' || !isAddress(f.owner)) throw new HearthError('INVALID_ARGUMENT', 'owner must be an address', { url: f.url })
}
