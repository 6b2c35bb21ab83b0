// The owner's other devices as a source of missing ciphertexts while this device's daemon is
// stopped (`hearth doctor`): a short-lived sync node with this device's own peer key, in the
// owner's private network, listening on loopback only (no mDNS, nothing of the public network),
// that dials the device addresses this home keeps (`sync.peers` and those added with `hearth
// peers add`) and asks them over the sync protocol (device-source.ts). It is opened only when a
// ciphertext is missing, and closed with every session when the repair is over.
import type { Kv } from '../db/database.js'
import type { FileIndex } from '../db/file-index.js'
import type { Logger } from '../log.js'
import { privateNetworkKey } from '../protocol/keys.js'
import type { BlockSource } from '../storage/block-sources.js'
import { syncState } from './state.js'

export interface OfflineDevicesDeps {
  masterKey: Uint8Array
  ownerAddress: `0x${string}`
  /** This device's peer key (`identity/peer-key`) and its device stamp (identity/device.ts). */
  peerKeyFile: string
  deviceStamp: string
  /** Addresses from the configuration (`sync.peers`); the ones `hearth peers add` kept are read from `kv`. */
  configuredPeers: readonly string[]
  /** The sync part's key-value namespace (kept addresses, cursors). */
  kv: Kv<unknown>
  index: FileIndex
  /** Longest wait for a device's next frame (`restore.requestTimeoutMs`). */
  readTimeoutMs: number
  logger: Logger
}

export interface OfflineDevices {
  /** The addresses dialled (none: no device is known, and nothing was started). */
  readonly addresses: readonly string[]
  /** One source per device: connected ones first, then the others by their address. */
  list (): BlockSource[]
  close (): Promise<void>
}

/** The devices this home knows, reached from a node of this device; none known: nothing starts. */
export async function openOfflineDevices (deps: OfflineDevicesDeps): Promise<OfflineDevices> {
  const state = syncState(deps.kv)
  const addresses = [...new Set([...deps.configuredPeers, ...await state.addresses()])]
  if (addresses.length === 0) return { addresses, list: () => [], close: async () => {} }
  // libp2p loads only when a device is to be asked
  const [{ createSyncNode }, { createDeviceSources }] = await Promise.all([import('./node.js'), import('./device-source.js')])
  const node = await createSyncNode({
    networkKey: privateNetworkKey(deps.masterKey),
    peerKeyFile: deps.peerKeyFile,
    deviceStamp: deps.deviceStamp,
    listen: ['/ip4/127.0.0.1/tcp/0'],
    mdns: false,
    bootstrapPeers: addresses,
    logger: deps.logger
  })
  await node.start()
  const devices = createDeviceSources({ node, ownerAddress: deps.ownerAddress, index: deps.index, state, readTimeoutMs: deps.readTimeoutMs, sessionIdleMs: 30_000 })
  return {
    addresses,
    list: () => devices.list(),
    async close () {
      await devices.close()
      await node.stop()
    }
  }
}
