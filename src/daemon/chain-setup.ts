// Connects the daemon to the registry contracts (docs/protocol.md §2.5): the dev chain when asked
// for, the client with its transaction key, and the chain schema resolver. What is registered and
// how is the chain registrar's business (src/chain/registrar.ts); with no chain configured none of
// this exists and registrations simply wait in their queue, and the chain's code (viem's ABI and
// RPC client, several MB of heap) is not even loaded: it is imported when the connection starts.
import { join } from 'node:path'
import type { HomeLayout } from '../home.js'
import type { Logger } from '../log.js'
import type { HearthConfig } from '../config/types.js'
import { HearthError } from '../errors.js'
import { openKv, type HearthDatabase } from '../db/database.js'
import type { StorageBackend } from '../storage/types.js'
import type { SchemaTrust } from '../registry/trust.js'
import { definitionFetcherFor, schemaTrustFor } from './schemas-setup.js'
import { parseSchemaDefinition } from '../registry/definition.js'
import { loadOrCreateTxKey } from '../identity/tx-key.js'
import type { OwnerIdentity } from '../identity/identity.js'
import { service, startedValue, type Service } from '../lifecycle/service.js'
import type { ChainClient, ChainConfig, ChainSchemaResolver, DevChain } from '../chain/index.js'
import type { PermissionsChain } from '../chain/permissions.js'

export interface ChainConnection extends Service {
  /** Available once started. */
  readonly client: ChainClient
  readonly resolver: ChainSchemaResolver
  readonly config: ChainConfig
  /** The builder grants' contracts, when this chain has them. */
  readonly permissions: PermissionsChain | null
  /** Whose schemas may become a scope's schema (the owner, this daemon's tx key, configured owners). */
  readonly trust: SchemaTrust
}

/** What the daemon's own key (and the owner's, for revocations) is given on the dev chain: 100 ETH. */
const DEV_TX_KEY_BALANCE = '0x56BC75E2D63100000'

async function chainConfigFrom (config: HearthConfig, dev: DevChain | null): Promise<ChainConfig> {
  const { detectMulticall, resolveChainConfig } = await import('../chain/index.js')
  const c = config.chain
  if (dev !== null) return { ...dev.config, confirmations: c.confirmations, pollIntervalMs: c.pollIntervalMs }
  const preset = c.preset === 'vana' || c.preset === 'moksha' ? c.preset : undefined
  const overrides = Object.fromEntries(Object.entries({
    rpcUrl: c.rpcUrl,
    chainId: c.chainId,
    dataRegistry: c.dataRegistry,
    dataRefinerRegistry: c.dataRefinerRegistry,
    multicall: c.multicall,
    dataPortabilityGrantees: c.dataPortabilityGrantees,
    dataPortabilityPermissions: c.dataPortabilityPermissions
  }).filter(([, v]) => v !== null))
  const resolved = resolveChainConfig({ ...(preset !== undefined ? { preset } : {}), ...overrides, confirmations: c.confirmations, pollIntervalMs: c.pollIntervalMs })
  // adopting the canonical Multicall3 needs the network; offline the config is used as it is
  return c.multicall === null ? await detectMulticall(resolved).catch(() => resolved) : resolved
}

/** The owner's wallet key when it signs registrations itself (`chain.signer` "owner"). */
function ownerSigningKey (config: HearthConfig, identity: OwnerIdentity): `0x${string}` | undefined {
  if (config.chain.signer !== 'owner') return undefined
  if (identity.ownerPrivateKey === undefined) {
    throw new HearthError('CONFIG_INVALID', 'chain.signer is "owner" but this identity holds only the master signature, not the wallet key')
  }
  return identity.ownerPrivateKey
}

/** Null when no chain is configured (`chain.preset` null). */
export function chainConnection (deps: {
  config: HearthConfig
  home: HomeLayout
  db: HearthDatabase
  storage: StorageBackend
  identity: OwnerIdentity
  logger: Logger
  print: (line: string) => void
}): ChainConnection | null {
  const { config, home, db, logger } = deps
  if (config.chain.preset === null) return null
  let dev: DevChain | null = null
  let connected: { client: ChainClient; resolver: ChainSchemaResolver; config: ChainConfig; trust: SchemaTrust; permissions: PermissionsChain | null } | null = null

  const connect = async (): Promise<void> => {
    const { createChainClient, createChainSchemaResolver } = await import('../chain/index.js')
    const { createPermissionsChain } = await import('../chain/permissions.js')
    const chainConfig = await chainConfigFrom(config, dev)
    const txKey = await loadOrCreateTxKey(home)
    if (dev !== null) {
      await dev.rpc('anvil_setBalance', [txKey.address, DEV_TX_KEY_BALANCE])
      // revoking a grant is the grantor's own transaction (docs/protocol.md §3.8)
      if (deps.identity.ownerPrivateKey !== undefined) await dev.rpc('anvil_setBalance', [deps.identity.ownerAddress, DEV_TX_KEY_BALANCE])
    }
    const ownerKey = ownerSigningKey(config, deps.identity)
    const client = createChainClient({ config: chainConfig, txPrivateKey: txKey.privateKey, ...(ownerKey !== undefined ? { ownerPrivateKey: ownerKey } : {}), logger, maxBatchSize: config.chain.batchSize })
    const trust = schemaTrustFor(config, deps.identity.ownerAddress, txKey.address)
    const resolver = createChainSchemaResolver({
      chain: client,
      trust,
      fetchDefinition: definitionFetcherFor(config, deps.storage),
      parseDefinition: (bytes) => parseSchemaDefinition(bytes),
      // schema ids are per network: one namespace per chain id and registry address
      kv: openKv(db, `chain-schemas-${chainConfig.chainId}-${chainConfig.dataRefinerRegistry.toLowerCase()}`),
      logger
    })
    connected = { client, resolver, config: chainConfig, trust, permissions: createPermissionsChain(client) }
  }

  const lifecycle = service('chainConnection', {
    async start () {
      if (config.chain.preset === 'dev') {
        const { startDevChain } = await import('../chain/index.js')
        dev = await startDevChain({ logger, stateDir: join(home.root, 'devchain') })
        deps.print(`dev chain ${dev.rpcUrl} (chain id ${dev.chainId}); DataRegistry ${dev.contracts.dataRegistry}`)
      }
      await connect()
    },
    async stop () {
      connected = null
      await dev?.stop()
      dev = null
    }
  })
  return {
    ...lifecycle,
    get client () { return startedValue(connected, 'the chain connection').client },
    get resolver () { return startedValue(connected, 'the chain connection').resolver },
    get config () { return startedValue(connected, 'the chain connection').config },
    get trust () { return startedValue(connected, 'the chain connection').trust },
    get permissions () { return startedValue(connected, 'the chain connection').permissions }
  }
}
