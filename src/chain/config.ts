// Which chain Hearth talks to. The real networks are named presets (docs/protocol.md §2.5); the dev chain
// (dev-chain.ts) produces a config of the same shape for its freshly deployed contracts.
import { isAddress, type Address } from 'viem'
import { HearthError } from '../errors.js'

export type ChainPreset = 'vana' | 'moksha'

export interface ChainConfig {
  preset?: ChainPreset
  rpcUrl: string
  chainId: number
  dataRegistry: Address
  dataRefinerRegistry: Address
  /**
   * A Multicall3-compatible contract used to batch reads and registrations. Absent means one
   * call (and one transaction) per item.
   */
  multicall?: Address
  /** The builder registry (docs/protocol.md §3.8); absent = builders only in the local registry. */
  dataPortabilityGrantees?: Address
  /** Where approved grants are relayed (docs/protocol.md §3.8); absent = grants stay local. */
  dataPortabilityPermissions?: Address
  /** Blocks on top of the registration block (inclusive) before a file counts as registered. */
  confirmations: number
  pollIntervalMs: number
}

/** Proxies of the deployed registries; the same addresses on mainnet and on Moksha. */
const VANA_DATA_REGISTRY: Address = '0x8C8788f98385F6ba1adD4234e551ABba0f82Cb7C'
const VANA_DATA_REFINER_REGISTRY: Address = '0x93c3EF89369fDcf08Be159D9DeF0F18AB6Be008c'
const VANA_DATA_PORTABILITY_GRANTEES: Address = '0x8325C0A0948483EdA023A1A2Fd895e62C5131234'
const VANA_DATA_PORTABILITY_PERMISSIONS: Address = '0xD54523048AdD05b4d734aFaE7C68324Ebb7373eF'

/**
 * The address the canonical Multicall3 has on most EVM chains. It is not in the presets because
 * we have not verified that it is deployed on Vana; `detectMulticall` adopts it only when
 * `eth_getCode` shows code there.
 */
export const CANONICAL_MULTICALL3: Address = '0xcA11bde05977b3631167028862bE2a173976CA11'

export const CHAIN_PRESETS: Record<ChainPreset, ChainConfig> = {
  vana: {
    preset: 'vana',
    rpcUrl: 'https://rpc.vana.org',
    chainId: 1480,
    dataRegistry: VANA_DATA_REGISTRY,
    dataRefinerRegistry: VANA_DATA_REFINER_REGISTRY,
    dataPortabilityGrantees: VANA_DATA_PORTABILITY_GRANTEES,
    dataPortabilityPermissions: VANA_DATA_PORTABILITY_PERMISSIONS,
    confirmations: 3,
    pollIntervalMs: 4_000
  },
  moksha: {
    preset: 'moksha',
    rpcUrl: 'https://rpc.moksha.vana.org',
    chainId: 14800,
    dataRegistry: VANA_DATA_REGISTRY,
    dataRefinerRegistry: VANA_DATA_REFINER_REGISTRY,
    dataPortabilityGrantees: VANA_DATA_PORTABILITY_GRANTEES,
    dataPortabilityPermissions: VANA_DATA_PORTABILITY_PERMISSIONS,
    confirmations: 3,
    pollIntervalMs: 4_000
  }
}

/**
 * A full config from a preset name plus overrides (e.g. a private RPC URL), or from explicit
 * values alone. Throws CONFIG_INVALID on anything unusable.
 */
export function resolveChainConfig (input: Partial<ChainConfig> & { preset?: ChainPreset }): ChainConfig {
  const base = input.preset !== undefined ? CHAIN_PRESETS[input.preset] : undefined
  if (input.preset !== undefined && base === undefined) {
    throw new HearthError('CONFIG_INVALID', `unknown chain preset "${String(input.preset)}"`, { presets: Object.keys(CHAIN_PRESETS) })
  }
  const config: Partial<ChainConfig> = { confirmations: 1, pollIntervalMs: 1_000, ...base }
  for (const [key, value] of Object.entries(input)) {
    if (value !== undefined) (config as Record<string, unknown>)[key] = value
  }
  const problems: string[] = []
  if (typeof config.rpcUrl !== 'string' || !/^https?:\/\//.test(config.rpcUrl)) problems.push('rpcUrl must be an http(s) URL')
  if (!Number.isSafeInteger(config.chainId) || (config.chainId ?? 0) <= 0) problems.push('chainId must be a positive integer')
  for (const key of ['dataRegistry', 'dataRefinerRegistry'] as const) {
    if (typeof config[key] !== 'string' || !isAddress(config[key])) problems.push(`${key} must be an address`)
  }
  for (const key of ['multicall', 'dataPortabilityGrantees', 'dataPortabilityPermissions'] as const) {
    if (config[key] !== undefined && !isAddress(config[key])) problems.push(`${key} must be an address`)
  }
  if (!Number.isSafeInteger(config.confirmations) || (config.confirmations ?? 0) < 1) problems.push('confirmations must be an integer >= 1')
  if (!Number.isSafeInteger(config.pollIntervalMs) || (config.pollIntervalMs ?? 0) < 1) problems.push('pollIntervalMs must be a positive integer')
  if (problems.length > 0) throw new HearthError('CONFIG_INVALID', 'invalid chain configuration', { problems })
  return config as ChainConfig
}
