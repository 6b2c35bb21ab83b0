// A local EVM for development and tests: the `anvil` binary from @foundry-rs/anvil on
// 127.0.0.1, with the two registries, a Multicall3 and the two builder-permission contracts deployed, so the whole protocol runs on one
// machine. The chain can be killed and restarted on the same port with the same state (tests use
// this to make the RPC really unreachable in between).
import { pbkdf2Sync } from 'node:crypto'
import { createRequire } from 'node:module'
import { mkdtemp, rm, mkdir } from 'node:fs/promises'
import { createServer } from 'node:net'
import { tmpdir } from 'node:os'
import { dirname, join } from 'node:path'
import {
  createPublicClient, createWalletClient, getContractAddress, http, toHex,
  type Address, type Hex
} from 'viem'
import { HDKey, hdKeyToAccount, privateKeyToAccount } from 'viem/accounts'
import { HearthError } from '../errors.js'
import { silentLogger, type Logger } from '../log.js'
import { compileContracts, type ContractName } from './compile.js'
import { endStaleAnvil, removePidFile, spawnGuardedAnvil, terminateAnvil, writePidFile, type AnvilProcess } from './dev-chain-process.js'
import type { ChainConfig } from './config.js'

/** Anvil's well-known test mnemonic: deterministic accounts and contract addresses. */
export const DEV_MNEMONIC = 'test test test test test test test test test test test junk'
export const DEV_CHAIN_ID = 31337
const ACCOUNT_COUNT = 10
const HOST = '127.0.0.1'
const READY_TIMEOUT_MS = 20_000

export interface DevChainContracts {
  dataRegistry: Address
  dataRefinerRegistry: Address
  multicall: Address
  dataPortabilityGrantees: Address
  dataPortabilityPermissions: Address
}

export interface DevChain {
  rpcUrl: string
  chainId: number
  contracts: DevChainContracts
  /** Funded private keys; account 0 deployed the contracts. */
  accounts: Hex[]
  /** A ChainConfig pointing at this chain. */
  config: ChainConfig
  /** Whether the anvil process is up (false between kill() and restart()). */
  readonly running: boolean
  /** Stops anvil, saving its state; the RPC port is closed until restart(). */
  kill (): Promise<void>
  /** Starts anvil again on the same port from the state saved by kill(). */
  restart (): Promise<void>
  /** Mines `blocks` empty blocks (for confirmation tests; the chain automines transactions). */
  mine (blocks?: number): Promise<void>
  /** A raw JSON-RPC call (anvil_* / evm_* test methods such as evm_setAutomine). */
  rpc (method: string, params?: unknown[]): Promise<unknown>
  /** Stops anvil for good and removes its state unless it lives in a caller-given stateDir. */
  stop (): Promise<void>
}

export interface StartDevChainOptions {
  logger?: Logger
  /** 0 (default) = any free port. */
  port?: number
  /**
   * Keep the chain state in this folder (loaded at start, saved on stop and every few seconds),
   * so a dev daemon finds its registrations again after a restart. Default: a temp folder that
   * stop() removes. The anvil's pid is kept there too (`anvil.pid`): a start ends an anvil an
   * earlier run on this folder left behind.
   */
  stateDir?: string
  /** Also mine a block every this many seconds (default: only when a transaction arrives). */
  blockTimeSeconds?: number
}

export async function startDevChain (opts: StartDevChainOptions = {}): Promise<DevChain> {
  const logger = opts.logger ?? silentLogger()
  const ownsStateDir = opts.stateDir === undefined
  const stateDir = opts.stateDir ?? await mkdtemp(join(tmpdir(), 'hearth-anvil-'))
  await mkdir(stateDir, { recursive: true })
  const stateFile = join(stateDir, 'anvil-state.json')
  const accounts = devAccounts()

  const args = (port: number): string[] => [
    '--host', HOST, '--port', String(port), '--quiet',
    '--mnemonic', DEV_MNEMONIC, '--accounts', String(ACCOUNT_COUNT), '--chain-id', String(DEV_CHAIN_ID),
    '--state', stateFile, '--state-interval', '5',
    ...(opts.blockTimeSeconds !== undefined ? ['--block-time', String(opts.blockTimeSeconds), '--mixed-mining'] : [])
  ]

  let port = opts.port ?? 0
  let child: AnvilProcess | undefined
  const started = async (): Promise<void> => { if (!ownsStateDir && child !== undefined) await writePidFile(stateDir, child.pid) }
  const ended = async (): Promise<void> => { if (!ownsStateDir) await removePidFile(stateDir) }
  try {
    if (!ownsStateDir) await endStaleAnvil(stateDir, stateFile, logger)
    ;({ child, port } = await launch(args, port, logger))
    await started()
  } catch (err) {
    if (ownsStateDir) await rm(stateDir, { recursive: true, force: true })
    throw err
  }
  const rpcUrl = `http://${HOST}:${port}`
  let contracts: DevChainContracts
  try {
    contracts = await deployContracts(rpcUrl, accounts[0] as Hex)
  } catch (err) {
    await terminateAnvil(child)
    await ended()
    if (ownsStateDir) await rm(stateDir, { recursive: true, force: true })
    throw err
  }
  logger.info({ rpcUrl, ...contracts }, 'dev chain ready')

  const rpc = async (method: string, params: unknown[] = []): Promise<unknown> => {
    if (child === undefined) throw new HearthError('CHAIN_UNAVAILABLE', 'dev chain is not running')
    const res = await fetch(rpcUrl, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify({ jsonrpc: '2.0', id: 1, method, params })
    })
    const body = await res.json() as { result?: unknown; error?: { message: string } }
    if (body.error !== undefined) throw new HearthError('CHAIN_REVERTED', body.error.message)
    return body.result
  }

  return {
    rpcUrl,
    chainId: DEV_CHAIN_ID,
    contracts,
    accounts,
    config: { rpcUrl, chainId: DEV_CHAIN_ID, ...contracts, confirmations: 1, pollIntervalMs: 100 },
    get running () { return child !== undefined },
    async kill () {
      if (child === undefined) return
      const c = child
      child = undefined
      await terminateAnvil(c)
      await ended()
      logger.info({ rpcUrl }, 'dev chain stopped')
    },
    async restart () {
      if (child !== undefined) return
      ;({ child } = await launch(args, port, logger))
      await started()
      logger.info({ rpcUrl }, 'dev chain restarted')
    },
    async mine (blocks = 1) {
      await rpc('anvil_mine', [toHex(blocks)])
    },
    rpc,
    async stop () {
      const c = child
      child = undefined
      if (c !== undefined) await terminateAnvil(c)
      await ended()
      if (ownsStateDir) await rm(stateDir, { recursive: true, force: true, maxRetries: 3 })
    }
  }
}

/**
 * The funded keys anvil derives from DEV_MNEMONIC. The BIP-39 seed is computed once with native
 * PBKDF2 (viem's per-account derivation redoes it in JS: ~100 ms per key).
 */
function devAccounts (): Hex[] {
  const seed = pbkdf2Sync(DEV_MNEMONIC.normalize('NFKD'), 'mnemonic', 2048, 64, 'sha512')
  const master = HDKey.fromMasterSeed(seed)
  return Array.from({ length: ACCOUNT_COUNT }, (_, addressIndex) =>
    toHex(hdKeyToAccount(master, { addressIndex }).getHdKey().privateKey as Uint8Array))
}

/** The anvil binary shipped by the platform package that @foundry-rs/anvil depends on. */
export function anvilBinaryPath (): string {
  const require = createRequire(import.meta.url)
  const platformPackage = `@foundry-rs/anvil-${process.platform}-${process.arch === 'x64' ? 'amd64' : process.arch}`
  try {
    const pkgJson = require.resolve(`${platformPackage}/package.json`)
    return join(dirname(pkgJson), 'bin', process.platform === 'win32' ? 'anvil.exe' : 'anvil')
  } catch (err) {
    throw new HearthError('INTERNAL', `the dev chain needs ${platformPackage} (installed with @foundry-rs/anvil)`, undefined, { cause: err })
  }
}

async function launch (args: (port: number) => string[], port: number, logger: Logger): Promise<{ child: AnvilProcess; port: number }> {
  const binary = anvilBinaryPath()
  let lastError: unknown
  // A port found free can be taken before anvil binds it; a restart on a fixed port may race
  // with the old socket closing. Either way, a few attempts settle it.
  for (let attempt = 0; attempt < 5; attempt++) {
    const tryPort = port === 0 ? await freePort() : port
    let stderr = ''
    let child: AnvilProcess | undefined
    try {
      child = await spawnGuardedAnvil(binary, args(tryPort))
      child.child.stderr?.on('data', (chunk: Buffer) => { if (stderr.length < 4_000) stderr += chunk.toString() })
      await waitReady(`http://${HOST}:${tryPort}`, child.child)
      return { child, port: tryPort }
    } catch (err) {
      lastError = new HearthError('CHAIN_UNAVAILABLE', 'anvil did not start', { stderr: stderr.trim().slice(0, 1_000) }, { cause: err })
      logger.warn({ port: tryPort, attempt, stderr: stderr.trim().slice(0, 300) }, 'anvil failed to start, retrying')
      if (child !== undefined) await terminateAnvil(child)
      await new Promise((resolve) => setTimeout(resolve, 200 * (attempt + 1)))
    }
  }
  throw lastError
}

async function waitReady (rpcUrl: string, child: AnvilProcess['child']): Promise<void> {
  const deadline = Date.now() + READY_TIMEOUT_MS
  while (Date.now() < deadline) {
    if (child.exitCode !== null || child.signalCode !== null) throw new Error(`anvil exited (${child.exitCode ?? child.signalCode})`)
    try {
      const res = await fetch(rpcUrl, {
        method: 'POST',
        headers: { 'content-type': 'application/json' },
        body: JSON.stringify({ jsonrpc: '2.0', id: 1, method: 'eth_chainId', params: [] }),
        signal: AbortSignal.timeout(1_000)
      })
      if (res.ok) return
    } catch {
      // not listening yet
    }
    await new Promise((resolve) => setTimeout(resolve, 50))
  }
  throw new Error('anvil did not answer in time')
}

async function freePort (): Promise<number> {
  return await new Promise((resolve, reject) => {
    const server = createServer()
    server.once('error', reject)
    server.listen(0, HOST, () => {
      const address = server.address()
      const port = typeof address === 'object' && address !== null ? address.port : 0
      server.close(() => { resolve(port) })
    })
  })
}

/**
 * Deploys the contracts from account 0 unless a loaded state already has them. The addresses
 * follow from the deployer's nonces 0..4, so they are the same on every fresh dev chain. A state
 * saved before the builder contracts existed (nonces 0..2 used) gets them at nonces 3..4.
 */
async function deployContracts (rpcUrl: string, deployerKey: Hex): Promise<DevChainContracts> {
  const account = privateKeyToAccount(deployerKey)
  const transport = http(rpcUrl, { retryCount: 0, timeout: 10_000 })
  const chain = { id: DEV_CHAIN_ID, name: 'hearth-dev', nativeCurrency: { name: 'Ether', symbol: 'ETH', decimals: 18 }, rpcUrls: { default: { http: [rpcUrl] } } }
  const publicClient = createPublicClient({ transport, chain })
  const walletClient = createWalletClient({ transport, chain, account })
  const at = (nonce: number): Address => getContractAddress({ from: account.address, nonce: BigInt(nonce) })
  const contracts: DevChainContracts = {
    dataRefinerRegistry: at(0),
    dataRegistry: at(1),
    multicall: at(2),
    dataPortabilityGrantees: at(3),
    dataPortabilityPermissions: at(4)
  }
  const order: Array<[keyof DevChainContracts, ContractName, unknown[]]> = [
    ['dataRefinerRegistry', 'DataRefinerRegistry', []],
    ['dataRegistry', 'DataRegistry', [contracts.dataRefinerRegistry]],
    ['multicall', 'Multicall3', []],
    ['dataPortabilityGrantees', 'DataPortabilityGrantees', []],
    ['dataPortabilityPermissions', 'DataPortabilityPermissions', [contracts.dataPortabilityGrantees]]
  ]
  const sent = await publicClient.getTransactionCount({ address: account.address })
  if (sent >= order.length) {
    const code = await publicClient.getCode({ address: contracts.dataPortabilityPermissions })
    if (code !== undefined && code !== '0x') return contracts
  }
  if (sent !== 0 && sent !== 3) {
    throw new HearthError('CONFIG_INVALID', 'the dev chain state was used by something else: its deployer account has sent transactions but the contracts are missing')
  }
  const compiled = await compileContracts()
  for (const [key, name, args] of order.slice(sent)) {
    const hash = await walletClient.deployContract({ abi: compiled[name].abi, bytecode: compiled[name].bytecode, args })
    const receipt = await publicClient.waitForTransactionReceipt({ hash, pollingInterval: 50 })
    if (receipt.status !== 'success' || receipt.contractAddress?.toLowerCase() !== contracts[key].toLowerCase()) {
      throw new HearthError('INTERNAL', `deploying ${name} failed`, { status: receipt.status, address: receipt.contractAddress })
    }
  }
  return contracts
}
