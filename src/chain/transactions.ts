// Signs and sends transactions from one local key without extra round trips per transaction for
// the nonce, fees and chain id: one nonce read per batch, one fee estimate, then one raw send per
// transaction. A lock keeps two batches (e.g. a schema and a file batch) from picking the same
// nonces.
import type { Account, Address, Chain, Hex, PublicClient, TransactionReceipt, Transport } from 'viem'
import { HearthError } from '../errors.js'
import { toChainError } from './errors.js'

/** A public client bound to one chain (so fee estimation needs no chain argument). */
export type ChainPublicClient = PublicClient<Transport, Chain>

export interface TxRequest {
  to: Address
  data: Hex
  /** Gas estimate; a margin is added on top. */
  gas: bigint
}

export interface TxSender {
  readonly address: Address
  /** Signs and sends the requests in order (consecutive nonces); returns their hashes. */
  sendAll (requests: TxRequest[], onSent?: (hash: Hex, index: number) => void | Promise<void>): Promise<Hex[]>
  /** Receipts for the hashes; resolves once all are mined, throws CHAIN_UNAVAILABLE on timeout or abort. */
  waitReceipts (hashes: Hex[], opts?: { timeoutMs?: number; signal?: AbortSignal }): Promise<TransactionReceipt[]>
}

const RECEIPT_CONCURRENCY = 16
const GAS_MARGIN_PERCENT = 20n

export function createTxSender (deps: {
  publicClient: ChainPublicClient
  account: Account & { signTransaction: NonNullable<Account['signTransaction']> }
  chainId: number
  pollIntervalMs: number
  receiptTimeoutMs: number
}): TxSender {
  const { publicClient, account, chainId } = deps
  let lock: Promise<unknown> = Promise.resolve()

  async function fees (): Promise<{ maxFeePerGas: bigint; maxPriorityFeePerGas: bigint } | { gasPrice: bigint }> {
    try {
      const { maxFeePerGas, maxPriorityFeePerGas } = await publicClient.estimateFeesPerGas({ type: 'eip1559' })
      return { maxFeePerGas, maxPriorityFeePerGas }
    } catch (err) {
      // Chains without a base fee (pre-London) take legacy transactions.
      if (err instanceof Error && err.name === 'Eip1559FeesNotSupportedError') return { gasPrice: await publicClient.getGasPrice() }
      throw err
    }
  }

  async function sendAllLocked (requests: TxRequest[], onSent?: (hash: Hex, index: number) => void | Promise<void>): Promise<Hex[]> {
    if (requests.length === 0) return []
    const [nonce, fee] = await Promise.all([
      publicClient.getTransactionCount({ address: account.address, blockTag: 'pending' }),
      fees()
    ])
    // Strictly in nonce order, one after the other: a node that sees nonce n+1 before n may
    // hold it back (or reject it), and anvil leaves such a transaction unmined.
    const hashes: Hex[] = []
    for (const [index, request] of requests.entries()) {
      const gas = request.gas + request.gas * GAS_MARGIN_PERCENT / 100n
      const common = { to: request.to, data: request.data, gas, nonce: nonce + index, chainId }
      const signed = 'gasPrice' in fee
        ? await account.signTransaction({ ...common, type: 'legacy', gasPrice: fee.gasPrice })
        : await account.signTransaction({ ...common, type: 'eip1559', ...fee })
      const hash = await publicClient.sendRawTransaction({ serializedTransaction: signed })
      hashes.push(hash)
      await onSent?.(hash, index)
    }
    return hashes
  }

  return {
    address: account.address,
    async sendAll (requests, onSent) {
      const run = lock.then(async () => await sendAllLocked(requests, onSent))
      lock = run.catch(() => undefined)
      try {
        return await run
      } catch (err) {
        throw toChainError(err, 'sending transaction')
      }
    },
    async waitReceipts (hashes, opts = {}) {
      const receipts = new Map<Hex, TransactionReceipt>()
      const deadline = Date.now() + (opts.timeoutMs ?? deps.receiptTimeoutMs)
      for (;;) {
        if (opts.signal?.aborted === true) throw new HearthError('CHAIN_UNAVAILABLE', 'stopped while waiting for transactions to be mined')
        const missing = hashes.filter((h) => !receipts.has(h))
        await mapLimit(missing, RECEIPT_CONCURRENCY, async (hash) => {
          try {
            receipts.set(hash, await publicClient.getTransactionReceipt({ hash }))
          } catch (err) {
            if (!(err instanceof Error && err.name === 'TransactionReceiptNotFoundError')) throw toChainError(err, 'reading receipt')
          }
        })
        if (receipts.size === new Set(hashes).size) return hashes.map((h) => receipts.get(h) as TransactionReceipt)
        if (Date.now() >= deadline) {
          throw new HearthError('CHAIN_UNAVAILABLE', 'transaction not mined in time', { pending: hashes.length - receipts.size })
        }
        await new Promise((resolve) => setTimeout(resolve, deps.pollIntervalMs))
      }
    }
  }
}

/** Runs `fn` over `items` with at most `limit` in flight; the first error rejects. */
export async function mapLimit<T, R> (items: readonly T[], limit: number, fn: (item: T, index: number) => Promise<R>): Promise<R[]> {
  const results = new Array<R>(items.length)
  let next = 0
  const worker = async (): Promise<void> => {
    while (next < items.length) {
      const index = next++
      results[index] = await fn(items[index] as T, index)
    }
  }
  await Promise.all(Array.from({ length: Math.min(limit, items.length) }, worker))
  return results
}
