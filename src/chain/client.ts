// Hearth's view of the two registries (docs/protocol.md §2.5) over one HTTP RPC: schema and file reads
// (batched through Multicall3 when the network has one), schema registration, file registration
// (file-registration.ts) and log scans. Every failure surfaces as CHAIN_UNAVAILABLE or
// CHAIN_REVERTED; no raw viem error leaves this module.
import {
  createPublicClient, defineChain, encodeFunctionData, http, parseEventLogs,
  type Address, type Hex
} from 'viem'
import { privateKeyToAccount } from 'viem/accounts'
import { HearthError } from '../errors.js'
import type { Logger } from '../log.js'
import { dataRefinerRegistryAbi, dataRegistryAbi } from './abi.js'
import { CANONICAL_MULTICALL3, type ChainConfig } from './config.js'
import { findRevert, toChainError } from './errors.js'
import { createFileRegistrar, type FileToRegister, type RegisterOptions, type RegistrationOutcome } from './file-registration.js'
import { createTxSender, mapLimit, type ChainPublicClient, type TxSender } from './transactions.js'

export type { FileToRegister, RegisterOptions, RegistrationOutcome } from './file-registration.js'

export interface ChainSchema {
  schemaId: bigint
  name: string
  dialect: string
  definitionUrl: string
}

export interface SchemaAddedEvent extends ChainSchema {
  blockNumber: bigint
  txHash: Hex
}

export interface ChainFile {
  fileId: bigint
  ownerAddress: Address
  url: string
  schemaId: bigint
  addedAtBlock: bigint
}

export interface FileAddedEvent {
  fileId: bigint
  ownerAddress: Address
  url: string
  schemaId: bigint
  blockNumber: bigint
  txHash: Hex
}

export interface ChainHealth {
  reachable: boolean
  blockNumber: bigint | null
  /** Why the chain is not usable (unreachable, or an RPC for another chain id). */
  error?: string
}

export interface ChainClient {
  readonly config: ChainConfig
  /** Reads for other contract modules (builders); no transport retries, like every call here. */
  readonly publicClient: ChainPublicClient
  /** Sends from the daemon's transaction key (shared, so nonces never collide). */
  readonly txSender: TxSender
  /** A sender for another local key (the owner's wallet); one per address, shared with the file registrar. */
  senderFor (privateKey: Hex): TxSender
  /** Address of the daemon's transaction key (pays for every transaction). */
  readonly txAddress: Address
  /** Address of the owner's wallet when its key is configured (files are then sent from it). */
  readonly ownerAddress: Address | null
  /** Registers a schema from the tx key; `onSent` learns the hash before the transaction is mined. */
  addSchema (name: string, dialect: string, definitionUrl: string, opts?: { onSent?: (txHash: Hex) => void | Promise<void>; signal?: AbortSignal }): Promise<{ schemaId: bigint; txHash: Hex; blockNumber: bigint }>
  /** The schema, or null when the id is unknown (InvalidSchemaId). */
  getSchema (schemaId: bigint): Promise<ChainSchema | null>
  schemasCount (): Promise<bigint>
  schemaAddedEvents (fromBlock: bigint, toBlock: bigint): Promise<SchemaAddedEvent[]>
  /** 0n when the URL is not registered. */
  fileIdByUrl (url: string): Promise<bigint>
  fileIdsByUrl (urls: string[]): Promise<bigint[]>
  /** The file, or null when no file has this id. */
  getFile (fileId: bigint): Promise<ChainFile | null>
  getFiles (fileIds: bigint[]): Promise<Array<ChainFile | null>>
  filesCount (): Promise<bigint>
  /** Registers each URL at most once; see file-registration.ts for how. */
  registerFiles (files: FileToRegister[], opts?: RegisterOptions): Promise<RegistrationOutcome[]>
  fileAddedEvents (query: { owner?: Address; fromBlock: bigint; toBlock: bigint }): Promise<FileAddedEvent[]>
  blockNumber (): Promise<bigint>
  /** The account that sent a mined transaction (who registered a schema: the contract keeps no owner). */
  transactionSender (txHash: Hex): Promise<Address>
  /** Whether a sent transaction is still waiting in the node's pool, mined, or unknown to it. */
  transactionState (txHash: Hex): Promise<'pending' | 'mined' | 'unknown'>
  health (): Promise<ChainHealth>
}

export interface ChainClientOptions {
  config: ChainConfig
  /** The daemon's own key: pays for transactions; files are registered with the owner named explicitly. */
  txPrivateKey: Hex
  /** The owner's wallet key, when configured: files of this owner are sent with addFileWithSchema. */
  ownerPrivateKey?: Hex
  logger: Logger
  /** Registrations per Multicall3 transaction (default 100; ~150k gas each). */
  maxBatchSize?: number
  /**
   * Estimated-gas ceiling of one batch transaction; bigger batches are split. The limit sent is
   * 20% above the estimate, so keep this under 5/6 of the block gas limit (default 20M for 30M blocks).
   */
  maxBatchGas?: bigint
  /** Per-request RPC timeout (default 10 s). */
  requestTimeoutMs?: number
  /** How long to wait for a sent transaction to be mined (default 120 s). */
  receiptTimeoutMs?: number
  /** Widest block range per eth_getLogs request (default 10,000, a common RPC limit). */
  maxLogRange?: bigint
}

const READ_CONCURRENCY = 8
const MULTICALL_CALLDATA_LIMIT = 100_000

export function createChainClient (opts: ChainClientOptions): ChainClient {
  const { config, logger } = opts
  const chain = defineChain({
    id: config.chainId,
    name: config.preset ?? `chain-${config.chainId}`,
    nativeCurrency: { name: 'VANA', symbol: 'VANA', decimals: 18 },
    rpcUrls: { default: { http: [config.rpcUrl] } }
  })
  // No transport retries: the registration worker owns retrying, with backoff.
  const transport = http(config.rpcUrl, { retryCount: 0, timeout: opts.requestTimeoutMs ?? 10_000 })
  const publicClient = createPublicClient({ chain, transport, cacheTime: 0, pollingInterval: config.pollIntervalMs }) as ChainPublicClient
  const txAccount = privateKeyToAccount(opts.txPrivateKey)
  const ownerAccount = opts.ownerPrivateKey !== undefined ? privateKeyToAccount(opts.ownerPrivateKey) : null
  const senderOptions = { publicClient, chainId: config.chainId, pollIntervalMs: config.pollIntervalMs, receiptTimeoutMs: opts.receiptTimeoutMs ?? 120_000 }
  const txSender = createTxSender({ ...senderOptions, account: txAccount })
  const ownerSender = ownerAccount !== null ? createTxSender({ ...senderOptions, account: ownerAccount }) : null
  const senders = new Map<string, TxSender>([[txAccount.address.toLowerCase(), txSender]])
  if (ownerSender !== null) senders.set(ownerSender.address.toLowerCase(), ownerSender)
  const maxLogRange = opts.maxLogRange ?? 10_000n

  async function attempt<T> (action: string, fn: () => Promise<T>): Promise<T> {
    try {
      return await fn()
    } catch (err) {
      throw toChainError(err, action)
    }
  }

  /** Same read for many arguments: one eth_call through Multicall3, or a few in parallel. */
  async function readMany<A, R> (functionName: 'fileIdByUrl' | 'files', argsList: A[], toResult: (raw: unknown) => R): Promise<R[]> {
    if (argsList.length === 0) return []
    const contracts = argsList.map((arg) => ({ address: config.dataRegistry, abi: dataRegistryAbi, functionName, args: [arg] }) as const)
    if (config.multicall !== undefined) {
      const results = await publicClient.multicall({
        contracts: contracts as never,
        multicallAddress: config.multicall,
        allowFailure: false,
        batchSize: MULTICALL_CALLDATA_LIMIT
      }) as unknown[]
      return results.map(toResult)
    }
    return await mapLimit(contracts, READ_CONCURRENCY, async (c) => toResult(await publicClient.readContract(c as never)))
  }

  const toFile = (raw: unknown): ChainFile | null => {
    const f = raw as { id: bigint; ownerAddress: Address; url: string; schemaId: bigint; addedAtBlock: bigint }
    if (f.ownerAddress === '0x0000000000000000000000000000000000000000') return null
    return { fileId: f.id, ownerAddress: f.ownerAddress, url: f.url, schemaId: f.schemaId, addedAtBlock: f.addedAtBlock }
  }

  async function getLogsChunked<T> (fromBlock: bigint, toBlock: bigint, fetchRange: (from: bigint, to: bigint) => Promise<T[]>): Promise<T[]> {
    const out: T[] = []
    for (let from = fromBlock; from <= toBlock; from += maxLogRange) {
      const to = from + maxLogRange - 1n < toBlock ? from + maxLogRange - 1n : toBlock
      out.push(...await fetchRange(from, to))
    }
    return out
  }

  const client: ChainClient = {
    config,
    publicClient,
    txSender,
    senderFor (privateKey) {
      const account = privateKeyToAccount(privateKey)
      const key = account.address.toLowerCase()
      let sender = senders.get(key)
      if (sender === undefined) {
        sender = createTxSender({ ...senderOptions, account })
        senders.set(key, sender)
      }
      return sender
    },
    txAddress: txAccount.address,
    ownerAddress: ownerAccount?.address ?? null,

    async addSchema (name, dialect, definitionUrl, addOpts = {}) {
      return await attempt('addSchema', async () => {
        const data = encodeFunctionData({ abi: dataRefinerRegistryAbi, functionName: 'addSchema', args: [name, dialect, definitionUrl] })
        const gas = await publicClient.estimateGas({ account: txAccount.address, to: config.dataRefinerRegistry, data })
        const [txHash] = await txSender.sendAll([{ to: config.dataRefinerRegistry, data, gas }], async (hash) => { await addOpts.onSent?.(hash) }) as [Hex]
        const [receipt] = await txSender.waitReceipts([txHash], { signal: addOpts.signal })
        if (receipt === undefined || receipt.status !== 'success') throw new HearthError('CHAIN_REVERTED', 'addSchema transaction reverted', { txHash })
        const [event] = parseEventLogs({ abi: dataRefinerRegistryAbi, eventName: 'SchemaAdded', logs: receipt.logs })
          .filter((log) => log.address.toLowerCase() === config.dataRefinerRegistry.toLowerCase())
        if (event === undefined) throw new HearthError('CHAIN_REVERTED', 'addSchema emitted no SchemaAdded event', { txHash })
        logger.info({ schemaId: event.args.schemaId.toString(), txHash }, 'schema registered on chain')
        return { schemaId: event.args.schemaId, txHash, blockNumber: receipt.blockNumber }
      })
    },

    async getSchema (schemaId) {
      try {
        const s = await publicClient.readContract({ address: config.dataRefinerRegistry, abi: dataRefinerRegistryAbi, functionName: 'schemas', args: [schemaId] })
        return { schemaId, name: s.name, dialect: s.dialect, definitionUrl: s.definitionUrl }
      } catch (err) {
        if (findRevert(err)?.errorName === 'InvalidSchemaId') return null
        throw toChainError(err, 'reading schema')
      }
    },

    async schemasCount () {
      return await attempt('reading schemasCount', async () =>
        await publicClient.readContract({ address: config.dataRefinerRegistry, abi: dataRefinerRegistryAbi, functionName: 'schemasCount' }))
    },

    async schemaAddedEvents (fromBlock, toBlock) {
      return await attempt('reading SchemaAdded events', async () => await getLogsChunked(fromBlock, toBlock, async (from, to) => {
        const logs = await publicClient.getContractEvents({ address: config.dataRefinerRegistry, abi: dataRefinerRegistryAbi, eventName: 'SchemaAdded', fromBlock: from, toBlock: to, strict: true })
        return logs.map((log) => ({ ...log.args, blockNumber: log.blockNumber, txHash: log.transactionHash }))
      }))
    },

    async fileIdByUrl (url) {
      const [id] = await client.fileIdsByUrl([url])
      return id as bigint
    },

    async fileIdsByUrl (urls) {
      return await attempt('reading fileIdByUrl', async () => await readMany('fileIdByUrl', urls, (raw) => raw as bigint))
    },

    async getFile (fileId) {
      const [file] = await client.getFiles([fileId])
      return file ?? null
    },

    async getFiles (fileIds) {
      return await attempt('reading files', async () => await readMany('files', fileIds, toFile))
    },

    async filesCount () {
      return await attempt('reading filesCount', async () =>
        await publicClient.readContract({ address: config.dataRegistry, abi: dataRegistryAbi, functionName: 'filesCount' }))
    },

    registerFiles: createFileRegistrar({
      config, publicClient, txSender, ownerSender, logger,
      maxBatchSize: opts.maxBatchSize ?? 100,
      maxBatchGas: opts.maxBatchGas ?? 20_000_000n,
      fileIdsByUrl: async (urls) => await client.fileIdsByUrl(urls),
      getFiles: async (ids) => await client.getFiles(ids)
    }),

    async fileAddedEvents ({ owner, fromBlock, toBlock }) {
      return await attempt('reading FileAddedV2 events', async () => await getLogsChunked(fromBlock, toBlock, async (from, to) => {
        const logs = await publicClient.getContractEvents({
          address: config.dataRegistry,
          abi: dataRegistryAbi,
          eventName: 'FileAddedV2',
          ...(owner !== undefined ? { args: { ownerAddress: owner } } : {}),
          fromBlock: from,
          toBlock: to,
          strict: true
        })
        return logs.map((log) => ({ ...log.args, blockNumber: log.blockNumber, txHash: log.transactionHash }))
      }))
    },

    async blockNumber () {
      return await attempt('reading block number', async () => await publicClient.getBlockNumber({ cacheTime: 0 }))
    },

    async transactionSender (txHash) {
      return await attempt('reading transaction', async () => (await publicClient.getTransaction({ hash: txHash })).from)
    },

    async transactionState (txHash) {
      return await attempt('reading transaction', async () => {
        try {
          const tx = await publicClient.getTransaction({ hash: txHash })
          return tx.blockNumber === null ? 'pending' : 'mined'
        } catch (err) {
          if (err instanceof Error && err.name === 'TransactionNotFoundError') return 'unknown'
          throw err
        }
      })
    },

    async health () {
      try {
        const [chainId, blockNumber] = await Promise.all([publicClient.getChainId(), publicClient.getBlockNumber({ cacheTime: 0 })])
        if (chainId !== config.chainId) return { reachable: true, blockNumber, error: `RPC serves chain ${chainId}, expected ${config.chainId}` }
        return { reachable: true, blockNumber }
      } catch (err) {
        return { reachable: false, blockNumber: null, error: toChainError(err, 'health check').message }
      }
    }
  }
  return client
}

/**
 * The config with `multicall` set to the canonical Multicall3 when the network has code there
 * (checked with eth_getCode), unchanged otherwise or when the chain is unreachable.
 */
export async function detectMulticall (config: ChainConfig, opts: { timeoutMs?: number } = {}): Promise<ChainConfig> {
  if (config.multicall !== undefined) return config
  const publicClient = createPublicClient({ transport: http(config.rpcUrl, { retryCount: 0, timeout: opts.timeoutMs ?? 10_000 }) })
  try {
    const code = await publicClient.getCode({ address: CANONICAL_MULTICALL3 })
    return code !== undefined && code !== '0x' ? { ...config, multicall: CANONICAL_MULTICALL3 } : config
  } catch {
    return config
  }
}
