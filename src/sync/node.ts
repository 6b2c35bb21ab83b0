// The libp2p node that carries device-to-device sync (docs/protocol.md §3.4): TCP + pnet + Noise + Yamux +
// identify, optional mDNS, and nothing that reaches the public network (no bootstrap list, no DHT,
// no relay, no autonat/upnp). The private-network key is derived from the owner's master key
// material, so only devices of the same owner complete a connection handshake; a device of
// another owner fails in the pnet layer before any libp2p protocol runs.
//
// The peer id is per DEVICE (a random Ed25519 key persisted in the home folder), not derived from
// the master key: several devices share one identity and each needs its own peer id.
import { mkdir, readFile, rename, writeFile, chmod } from 'node:fs/promises'
import { dirname } from 'node:path'
import { createLibp2p, type Libp2p } from 'libp2p'
import { tcp } from '@libp2p/tcp'
import { noise } from '@chainsafe/libp2p-noise'
import { yamux } from '@chainsafe/libp2p-yamux'
import { identify } from '@libp2p/identify'
import { mdns } from '@libp2p/mdns'
import { generateKeyPair, privateKeyFromProtobuf, privateKeyToProtobuf } from '@libp2p/crypto/keys'
import { multiaddr, type Multiaddr } from '@multiformats/multiaddr'
import type { PrivateKey } from '@libp2p/interface'
import { peerIdFromPrivateKey, peerIdFromString } from '@libp2p/peer-id'
import { HearthError } from '../errors.js'
import type { Logger } from '../log.js'
import { privateNetworkProtector, type PnetCipher } from './pnet.js'
import { sodiumNoiseCrypto } from './noise-crypto.js'

export const DEFAULT_SYNC_LISTEN = ['/ip4/0.0.0.0/tcp/4011']
/** A discovered peer that failed to connect is not dialled again for this long. */
const DISCOVERY_RETRY_MS = 5 * 60_000
/** mDNS service name: Hearth devices answer only each other's queries, never IPFS nodes'. */
export const MDNS_SERVICE_TAG = '_hearth-sync._udp.local'

export interface SyncNodeOptions {
  /** 32 bytes from `privateNetworkKey(masterKey)`; the node never sees the master key itself. */
  networkKey: Uint8Array
  /** Where this device's libp2p private key lives (created on first start, mode 0600). */
  peerKeyFile: string
  /** Binds the peer key to this device (see loadOrCreatePeerKey); from identity/device.ts. */
  deviceStamp?: string
  listen?: string[]
  mdns?: boolean
  /** Configured peer multiaddrs, dialled on start and redialled with backoff while down. */
  bootstrapPeers?: string[]
  logger: Logger
  /** Redial backoff bounds (ms). */
  redial?: { minMs?: number; maxMs?: number }
  /** mDNS query interval (ms); the library default (10 s) suits a LAN. */
  mdnsIntervalMs?: number
  /** The private network's XSalsa20 implementation (default: the fastest available; pnet.ts). */
  pnetCipher?: PnetCipher
  /** Noise's ChaCha20-Poly1305: libsodium (default where it loads; noise-crypto.ts) or Noise's own node:crypto. */
  noiseCrypto?: NoiseCrypto
}

export type NoiseCrypto = 'sodium' | 'node'

export interface SyncNode {
  readonly libp2p: Libp2p
  /** This device's peer id (base58btc string). */
  readonly peerId: string
  start (): Promise<void>
  stop (): Promise<void>
  /** The addresses this node listens on, each ending in /p2p/<peerId>. */
  multiaddrs (): string[]
  /** Dial now and keep redialling with backoff while the node runs. Idempotent per address. */
  keepConnected (address: string): void
  /** Stop keeping these addresses connected (no more redials). */
  forget (addresses: string[]): void
  /** Close every connection to this peer. */
  hangUp (peerId: string): Promise<void>
  /** Addresses being kept connected (configured, added, and learned over mDNS are not included). */
  keptAddresses (): string[]
  /** Peer ids with at least one open connection. */
  connectedPeers (): string[]
  /** Problems a person must know about (a peer id shared with another device), newest last. */
  problems (): string[]
}

/** The derived 32-byte key as a pnet v1 swarm-key file (what go-libp2p/Kubo and @libp2p/pnet read). */
export function swarmKeyFile (networkKey: Uint8Array): Uint8Array {
  if (!(networkKey instanceof Uint8Array) || networkKey.length !== 32) {
    throw new HearthError('INVALID_ARGUMENT', 'the private-network key must be 32 bytes')
  }
  return new TextEncoder().encode(`/key/swarm/psk/1.0.0/\n/base16/\n${Buffer.from(networkKey).toString('hex')}`)
}

/** What loading the peer key found: `replaced` when the key on disk belonged to another device. */
export interface PeerKeyResult { key: PrivateKey; replaced: { oldPeerId: string } | null }

async function writeKeyFile (file: string, bytes: Uint8Array | string): Promise<void> {
  await mkdir(dirname(file), { recursive: true, mode: 0o700 })
  const tmp = `${file}.${process.pid}.tmp`
  await writeFile(tmp, bytes, { mode: 0o600 })
  await chmod(tmp, 0o600)
  await rename(tmp, file)
}

/**
 * Load this device's libp2p key, or create and persist one (0600, written atomically). With a
 * `deviceStamp`, the key is bound to this device (`<file>.device`): a key made on another
 * device (a copied identity/ folder) is set aside as `<file>.copied` and a new one is made, so
 * two devices never share a peer id. A key without a stamp (made before stamps) is adopted.
 */
export async function loadOrCreatePeerKey (file: string, deviceStamp?: string): Promise<PrivateKey>
export async function loadOrCreatePeerKey (file: string, deviceStamp: string, opts: { detail: true }): Promise<PeerKeyResult>
export async function loadOrCreatePeerKey (file: string, deviceStamp?: string, opts?: { detail: true }): Promise<PrivateKey | PeerKeyResult> {
  const stampFile = `${file}.device`
  let key: PrivateKey | null = null
  let replaced: PeerKeyResult['replaced'] = null
  try {
    key = privateKeyFromProtobuf(await readFile(file))
  } catch (err) {
    if ((err as NodeJS.ErrnoException).code !== 'ENOENT') {
      throw new HearthError('INVALID_IDENTITY', `cannot read the peer key ${file}: ${(err as Error).message}`)
    }
  }
  if (key !== null && deviceStamp !== undefined) {
    const stamp = await readFile(stampFile, 'utf8').then((t) => t.trim(), () => null)
    if (stamp === null) await writeKeyFile(stampFile, deviceStamp + '\n')
    else if (stamp !== deviceStamp) {
      replaced = { oldPeerId: peerIdFromPrivateKey(key).toString() }
      await rename(file, `${file}.copied`)
      key = null
    }
  }
  if (key === null) {
    key = await generateKeyPair('Ed25519')
    await writeKeyFile(file, privateKeyToProtobuf(key))
    if (deviceStamp !== undefined) await writeKeyFile(stampFile, deviceStamp + '\n')
  }
  return opts?.detail === true ? { key, replaced } : key
}

/** The peer id a multiaddr ends with (`…/p2p/<id>`), or null. */
export function addressPeerId (address: string): string | null {
  return parseAddress(address).getComponents().findLast((c) => c.name === 'p2p')?.value ?? null
}

/**
 * One line for a failed listen. libp2p's message spans lines and embeds each listener's stack;
 * a person needs the reason, not the trace.
 */
function listenProblem (err: unknown): string {
  const text = String((err as Error)?.message ?? err)
  if (/EADDRINUSE/.test(text)) return 'the port is already in use (another Hearth daemon, or another program)'
  if (/EADDRNOTAVAIL/.test(text)) return 'no interface of this machine has that address'
  if (/EACCES/.test(text)) return 'permission denied (ports below 1024 need privileges)'
  const reason = /Error: ([^\n]+)/.exec(text)?.[1] ?? text.split('\n')[0]!
  return reason.trim()
}

function parseAddress (address: string): Multiaddr {
  try {
    return multiaddr(address)
  } catch (err) {
    throw new HearthError('INVALID_ARGUMENT', `not a multiaddr: ${JSON.stringify(address)}`, { reason: (err as Error).message })
  }
}

/** Noise's options: libsodium's cipher unless Noise's own is asked for or sodium-native cannot load. */
function noiseInit (choice: NoiseCrypto = 'sodium'): Parameters<typeof noise>[0] {
  const crypto = choice === 'sodium' ? sodiumNoiseCrypto() : null
  return crypto !== null ? { crypto } : {}
}

export async function createSyncNode (opts: SyncNodeOptions): Promise<SyncNode> {
  const { logger } = opts
  const problems: string[] = []
  let privateKey: PrivateKey
  if (opts.deviceStamp !== undefined) {
    const loaded = await loadOrCreatePeerKey(opts.peerKeyFile, opts.deviceStamp, { detail: true })
    privateKey = loaded.key
    if (loaded.replaced !== null) {
      const text = `duplicate peer id: ${opts.peerKeyFile} was made on another device (peer ${loaded.replaced.oldPeerId}; an identity/ folder copied whole?). ` +
        `This device now has its own peer id ${peerIdFromPrivateKey(privateKey).toString()}; the copied key is kept as peer-key.copied. ` +
        'Add a device with `hearth identity export --for-device` and `hearth init --from`, which never copy the peer key.'
      problems.push(text)
      logger.warn({ oldPeerId: loaded.replaced.oldPeerId }, text)
    }
  } else privateKey = await loadOrCreatePeerKey(opts.peerKeyFile)
  const listen = opts.listen ?? DEFAULT_SYNC_LISTEN
  const libp2p = await createLibp2p({
    start: false,
    privateKey,
    addresses: { listen },
    transports: [tcp()],
    connectionProtector: privateNetworkProtector(opts.networkKey, logger, opts.pnetCipher !== undefined ? { cipher: opts.pnetCipher } : {}),
    connectionEncrypters: [noise(noiseInit(opts.noiseCrypto))],
    streamMuxers: [yamux()],
    peerDiscovery: opts.mdns === true
      ? [mdns({ serviceTag: MDNS_SERVICE_TAG, ...(opts.mdnsIntervalMs !== undefined ? { interval: opts.mdnsIntervalMs } : {}) })]
      : [],
    services: { identify: identify() },
    connectionManager: { dialTimeout: 10_000 }
  })
  const selfId = libp2p.peerId.toString()
  const minMs = opts.redial?.minMs ?? 1_000
  const maxMs = opts.redial?.maxMs ?? 60_000

  // One redial loop per kept address. A loop sleeps while its peer is connected and wakes on
  // that peer's disconnect; failures back off exponentially up to maxMs, forever.
  interface Kept { address: Multiaddr; peerId: string | null; delay: number; timer: NodeJS.Timeout | null; dialing: boolean }
  const kept = new Map<string, Kept>()
  let running = false

  const isConnected = (peerId: string | null): boolean =>
    peerId !== null && libp2p.getConnections().some((c) => c.remotePeer.toString() === peerId && c.status === 'open')

  function schedule (k: Kept, delay: number): void {
    if (!running) return
    if (k.timer !== null) clearTimeout(k.timer)
    k.timer = setTimeout(() => { k.timer = null; void dialKept(k) }, delay)
    k.timer.unref()
  }

  async function dialKept (k: Kept): Promise<void> {
    if (!running || k.dialing || isConnected(k.peerId)) return
    k.dialing = true
    try {
      const conn = await libp2p.dial(k.address)
      k.peerId = conn.remotePeer.toString()
      k.delay = minMs
      logger.debug({ peer: k.peerId, address: k.address.toString() }, 'sync peer connected')
    } catch (err) {
      logger.debug({ address: k.address.toString(), err: (err as Error).message, retryInMs: k.delay }, 'sync peer dial failed')
      schedule(k, k.delay)
      k.delay = Math.min(k.delay * 2, maxMs)
    } finally {
      k.dialing = false
    }
  }

  libp2p.addEventListener('peer:disconnect', (evt) => {
    const id = evt.detail.toString()
    for (const k of kept.values()) if (k.peerId === id) schedule(k, minMs)
  })

  // mDNS only finds candidates; pnet decides who may stay. A candidate that failed (a device of
  // another owner on the same LAN, typically) is not dialled again on every announcement.
  const discoveredCooldown = new Map<string, number>()
  libp2p.addEventListener('peer:discovery', (evt) => {
    const id = evt.detail.id.toString()
    if (!running || id === selfId || isConnected(id) || (discoveredCooldown.get(id) ?? 0) > Date.now()) return
    libp2p.dial(evt.detail.id).then(
      () => { discoveredCooldown.delete(id); logger.debug({ peer: id }, 'sync peer discovered and connected') },
      (err: Error) => {
        discoveredCooldown.set(id, Date.now() + DISCOVERY_RETRY_MS)
        logger.debug({ peer: id, err: err.message }, 'discovered peer did not connect')
      }
    )
  })

  function reportDuplicate (address: string): void {
    const text = `duplicate peer id: ${address} names this device's own peer id ${selfId}. Another device uses the same identity/peer-key ` +
      '(copied with identity/?): on that device, remove identity/peer-key and restart it to get its own, then add it again.'
    if (problems.includes(text)) return
    problems.push(text)
    logger.error({ address, peerId: selfId }, 'duplicate peer id: another device uses this device\'s peer key')
  }

  function keepConnected (address: string): void {
    const ma = parseAddress(address)
    const key = ma.toString()
    if (kept.has(key)) return
    const declared = ma.getComponents().findLast((c) => c.name === 'p2p')?.value ?? null
    if (declared === selfId) {
      // our own id at an address that is not ours: another device uses this device's peer key
      const ownTcp = new Set(libp2p.getMultiaddrs().map((a) => a.toString().replace(/\/p2p\/.*$/, '')))
      if (!ownTcp.has(key.replace(/\/p2p\/.*$/, ''))) reportDuplicate(address)
      return
    }
    const k: Kept = { address: ma, peerId: declared, delay: minMs, timer: null, dialing: false }
    kept.set(key, k)
    if (running) void dialKept(k)
  }

  for (const a of opts.bootstrapPeers ?? []) keepConnected(a)

  return {
    libp2p,
    peerId: selfId,
    async start () {
      if (running) return
      try {
        await libp2p.start()
      } catch (err) {
        try { await libp2p.stop() } catch { /* nothing was started */ }
        throw new HearthError('CONFIG_INVALID', `cannot listen for sync on ${listen.join(', ')}: ${listenProblem(err)}; ` +
          'set sync.listen (HEARTH_SYNC_LISTEN) to a free address, or sync.enabled false', { listen, setting: 'sync.listen' }, { cause: err })
      }
      running = true
      logger.info({ peerId: selfId, addrs: libp2p.getMultiaddrs().map(String) }, 'sync node listening')
      for (const k of kept.values()) void dialKept(k)
    },
    async stop () {
      running = false
      for (const k of kept.values()) { if (k.timer !== null) clearTimeout(k.timer); k.timer = null }
      await libp2p.stop()
    },
    multiaddrs: () => libp2p.getMultiaddrs().map(String),
    keepConnected,
    forget (addresses) {
      for (const a of addresses) {
        const key = parseAddress(a).toString()
        const k = kept.get(key)
        if (k?.timer != null) clearTimeout(k.timer)
        kept.delete(key)
      }
    },
    async hangUp (peerId) {
      await libp2p.hangUp(peerIdFromString(peerId))
    },
    keptAddresses: () => [...kept.keys()],
    connectedPeers: () => [...new Set(libp2p.getConnections().filter((c) => c.status === 'open').map((c) => c.remotePeer.toString()))],
    problems: () => [...problems]
  }
}
