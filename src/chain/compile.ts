// Compiles the Solidity sources in contracts/ with the npm `solc` package (standard JSON) for the
// dev chain and the tests. Loading solc costs seconds, so the output is cached per process and in
// node_modules/.cache keyed by the hash of compiler version + input (a stale cache is impossible:
// any change to a source or setting is a new key). `solc` is a dev dependency, loaded only when a
// dev chain is actually started without a cached build.
import { createHash } from 'node:crypto'
import { mkdir, readFile, rename, writeFile } from 'node:fs/promises'
import { createRequire } from 'node:module'
import type { Abi, Hex } from 'viem'
import { HearthError } from '../errors.js'

export const CONTRACT_NAMES = ['DataRefinerRegistry', 'DataRegistry', 'Multicall3', 'DataPortabilityGrantees', 'DataPortabilityPermissions'] as const
export type ContractName = typeof CONTRACT_NAMES[number]

export interface CompiledContract {
  abi: Abi
  bytecode: Hex
}

export type CompiledContracts = Record<ContractName, CompiledContract>

const SOURCES_DIR = new URL('../../contracts/', import.meta.url)
const CACHE_DIR = new URL('../../node_modules/.cache/hearth-contracts/', import.meta.url)

let cached: Promise<CompiledContracts> | undefined

/** The compiled dev-chain contracts; compiled once per process. */
export async function compileContracts (): Promise<CompiledContracts> {
  cached ??= compile().catch((err: unknown) => { cached = undefined; throw err })
  return await cached
}

interface SolcOutput {
  errors?: Array<{ severity: string; formattedMessage: string }>
  contracts?: Record<string, Record<string, { abi: Abi; evm: { bytecode: { object: string } } }>>
}

async function compile (): Promise<CompiledContracts> {
  const sources: Record<string, { content: string }> = {}
  for (const name of CONTRACT_NAMES) {
    sources[`${name}.sol`] = { content: await readFile(new URL(`${name}.sol`, SOURCES_DIR), 'utf8') }
  }
  const input = {
    language: 'Solidity',
    sources,
    settings: {
      optimizer: { enabled: true, runs: 200 },
      // Paris predates PUSH0/MCOPY, so the bytecode also runs on chains that lag behind mainnet.
      evmVersion: 'paris',
      outputSelection: { '*': { '*': ['abi', 'evm.bytecode.object'] } }
    }
  }
  const inputJson = JSON.stringify(input)
  const cacheFile = new URL(`${createHash('sha256').update(solcVersion()).update('\0').update(inputJson).digest('hex')}.json`, CACHE_DIR)
  const cachedOutput = await readFile(cacheFile, 'utf8').catch(() => null)
  if (cachedOutput !== null) return JSON.parse(cachedOutput) as CompiledContracts
  const solc = await loadSolc()
  const output = JSON.parse(solc.compile(inputJson)) as SolcOutput
  const errors = (output.errors ?? []).filter((e) => e.severity === 'error')
  if (errors.length > 0) {
    throw new HearthError('INTERNAL', 'contract compilation failed', { errors: errors.map((e) => e.formattedMessage) })
  }
  const compiled: Partial<CompiledContracts> = {}
  for (const name of CONTRACT_NAMES) {
    const contract = output.contracts?.[`${name}.sol`]?.[name]
    if (contract === undefined) throw new HearthError('INTERNAL', `contract ${name} missing from compiler output`)
    compiled[name] = { abi: contract.abi, bytecode: `0x${contract.evm.bytecode.object}` }
  }
  await writeCache(cacheFile, compiled as CompiledContracts)
  return compiled as CompiledContracts
}

function solcVersion (): string {
  try {
    return (createRequire(import.meta.url)('solc/package.json') as { version: string }).version
  } catch {
    return 'unknown'
  }
}

/** Best effort: a read-only install just compiles every time. Rename keeps parallel writers atomic. */
async function writeCache (file: URL, compiled: CompiledContracts): Promise<void> {
  try {
    await mkdir(CACHE_DIR, { recursive: true })
    const tmp = new URL(`${file.pathname.split('/').pop() ?? 'out'}.${process.pid}.tmp`, CACHE_DIR)
    await writeFile(tmp, JSON.stringify(compiled))
    await rename(tmp, file)
  } catch {
    // no cache
  }
}

async function loadSolc (): Promise<{ compile: (input: string) => string }> {
  try {
    const mod = await import('solc')
    return mod.default
  } catch (err) {
    throw new HearthError('INTERNAL', 'the dev chain needs the solc package (a dev dependency); install it with npm install', undefined, { cause: err })
  }
}
