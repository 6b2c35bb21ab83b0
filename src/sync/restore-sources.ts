// The sources restore fetches a missing ciphertext from, in order: local storage, the owner's
// devices (connected, or with a kept address) over sync, then the configured IPFS gateways
// (`restore.gateways`).
import type { Logger } from '../log.js'
import { createCiphertextFetcher, type BlockSource, type CiphertextFetcher } from '../storage/block-sources.js'
import { createGatewaySource } from '../storage/gateway-source.js'
import type { StorageBackend } from '../storage/types.js'

/** The `restore` section of the configuration. */
export interface RestoreSettings {
  gateways: string[]
  requestTimeoutMs: number
  fileTimeoutMs: number
  maxFileBytes: number
}

export interface RestoreFetcherDeps {
  settings: RestoreSettings
  storage: Pick<StorageBackend, 'get' | 'add' | 'pin' | 'unpin'>
  /** The devices to ask right now (none while sync is off). */
  devices: () => BlockSource[]
  logger: Logger
}

export function gatewaySources (settings: Pick<RestoreSettings, 'gateways' | 'requestTimeoutMs'>): BlockSource[] {
  return settings.gateways.map((baseUrl) => createGatewaySource({ baseUrl, requestTimeoutMs: settings.requestTimeoutMs }))
}

export function restoreFetcher (deps: RestoreFetcherDeps): CiphertextFetcher {
  const gateways = gatewaySources(deps.settings)
  return createCiphertextFetcher({
    storage: deps.storage,
    remote: () => [...deps.devices(), ...gateways],
    maxBytes: deps.settings.maxFileBytes,
    sourceTimeoutMs: deps.settings.fileTimeoutMs,
    logger: deps.logger
  })
}
