// The owner's other devices as a source of a missing ciphertext (for restore), over the sync
// protocol (docs/protocol.md §3.4): greet once, then `fetch {cid}` → `blob` or `missing`, on one
// session per device that is kept open between fetches for `sessionIdleMs` (a restore asks
// one device for file after file) and closed after it. Devices are asked when connected or when
// their address is kept (configured or added). A device serves only ciphertext its index offers.
// Its answer is bounded (announced size, frame size, a deadline per frame, the caller's deadline
// for the whole file) and is checked against the CID by the fetcher before anything is stored.
import type { Stream } from '@libp2p/interface'
import { peerIdFromString } from '@libp2p/peer-id'
import { multiaddr } from '@multiformats/multiaddr'
import type { FileIndex } from '../db/file-index.js'
import { HearthError, isHearthError } from '../errors.js'
import type { BlockSource } from '../storage/block-sources.js'
import { addressPeerId, type SyncNode } from './node.js'
import { SYNC_PROTOCOL_ID, checkPeerHello, type SyncMessage } from './protocol.js'
import { helloMessage } from './serve.js'
import type { SyncState } from './state.js'
import { newCounters, openChannel, type Channel, type WireCounters } from './wire.js'

export interface DeviceSourceDeps {
  node: Pick<SyncNode, 'libp2p' | 'peerId' | 'connectedPeers' | 'keptAddresses'>
  ownerAddress: string
  index: FileIndex
  state: Pick<SyncState, 'cursor'>
  /** Longest wait for the device's next frame (its first answer included). */
  readTimeoutMs: number
  /** How long a session stays open after a fetch for the next one (0: closed at once). Default 10 s. */
  sessionIdleMs?: number
  counters?: WireCounters
}

export interface DeviceSources {
  /** One source per device: the connected ones first, then those with a kept address. */
  list (): BlockSource[]
  /** Close every open session. */
  close (): Promise<void>
}

interface Session { ch: Channel; idle: NodeJS.Timeout | null }

export function createDeviceSources (deps: DeviceSourceDeps): DeviceSources {
  const counters = deps.counters ?? newCounters()
  const sessions = new Map<string, Session>()
  // one fetch at a time per device: answers on a session come in order, and a restore is sequential
  const queues = new Map<string, Promise<unknown>>()

  function drop (peerId: string, session: Session, err?: Error): void {
    if (session.idle !== null) clearTimeout(session.idle)
    if (sessions.get(peerId) === session) sessions.delete(peerId)
    if (err !== undefined) session.ch.abort(err)
    else session.ch.close().catch(() => {})
  }

  async function open (peerId: string, address: string | null, signal: AbortSignal): Promise<Session> {
    const target = address !== null ? multiaddr(address) : peerIdFromString(peerId)
    let stream: Stream
    try {
      stream = await deps.node.libp2p.dialProtocol(target, SYNC_PROTOCOL_ID, { signal })
    } catch (err) {
      if (signal.aborted) throw err
      throw new HearthError('STORAGE_UNAVAILABLE', `device ${peerId} cannot be reached: ${(err as Error)?.message ?? String(err)}`)
    }
    const ch = openChannel(stream, { readTimeoutMs: deps.readTimeoutMs, counters })
    try {
      await ch.send(await helloMessage({ ownerAddress: deps.ownerAddress, index: deps.index, cursorFor: deps.state.cursor }, peerId))
      checkPeerHello(await answer(ch, peerId, ['hello']), deps.ownerAddress)
    } catch (err) {
      ch.abort(err instanceof Error ? err : new Error(String(err)))
      throw err
    }
    return { ch, idle: null }
  }

  async function fetchOn (session: Session, peerId: string, cid: string, maxBytes: number): Promise<Uint8Array | null> {
    await session.ch.send({ type: 'fetch', cid })
    const reply = await answer(session.ch, peerId, ['blob', 'missing'])
    if (reply.cid !== cid) throw new HearthError('SYNC_PROTOCOL_ERROR', `device ${peerId} answered for ${reply.cid}, not ${cid}`)
    if (reply.type === 'missing') return null
    if (reply.size > maxBytes) throw new HearthError('FILE_TOO_LARGE', `device ${peerId} offers ${reply.size} bytes for ${cid}, more than the ${maxBytes} accepted`)
    return await session.ch.readBlob(reply.size)
  }

  async function fetchFrom (peerId: string, address: string | null, cid: string, signal: AbortSignal, maxBytes: number): Promise<Uint8Array | null> {
    const cached = sessions.get(peerId)
    if (cached?.idle != null) clearTimeout(cached.idle)
    // a kept session may have been closed by the device meanwhile: then one fresh session is tried
    for (const reused of cached !== undefined ? [true, false] : [false]) {
      const session = reused ? cached! : await open(peerId, address, signal)
      sessions.set(peerId, session)
      const onAbort = (): void => drop(peerId, session, new HearthError('TIMEOUT', 'the fetch was given up'))
      signal.addEventListener('abort', onAbort, { once: true })
      try {
        const bytes = await fetchOn(session, peerId, cid, maxBytes)
        const idleMs = deps.sessionIdleMs ?? 10_000
        if (idleMs <= 0) drop(peerId, session)
        else {
          session.idle = setTimeout(() => drop(peerId, session), idleMs)
          session.idle.unref()
        }
        return bytes
      } catch (err) {
        drop(peerId, session, err instanceof Error ? err : new Error(String(err)))
        // a closed or reset stream is worth one fresh session; a device that is slow or too big is not
        if (!reused || signal.aborted || (isHearthError(err) && err.code !== 'SYNC_PROTOCOL_ERROR')) throw err
      } finally {
        signal.removeEventListener('abort', onAbort)
      }
    }
    throw new HearthError('INTERNAL', 'unreachable')
  }

  function source (peerId: string, address: string | null): BlockSource {
    return {
      kind: 'device',
      name: `device ${peerId}`,
      async fetch (cid, { signal, maxBytes }) {
        const previous = queues.get(peerId) ?? Promise.resolve()
        const mine = previous.catch(() => {}).then(async () => await fetchFrom(peerId, address, cid, signal, maxBytes))
        queues.set(peerId, mine)
        try {
          return await mine
        } finally {
          if (queues.get(peerId) === mine) queues.delete(peerId)
        }
      }
    }
  }

  return {
    list () {
      const connected = deps.node.connectedPeers()
      const sources = connected.map((peerId) => source(peerId, null))
      const kept = new Map<string, string>()
      for (const address of deps.node.keptAddresses()) {
        const peerId = addressPeerId(address)
        if (peerId !== null && peerId !== deps.node.peerId && !connected.includes(peerId) && !kept.has(peerId)) kept.set(peerId, address)
      }
      for (const [peerId, address] of kept) sources.push(source(peerId, address))
      return sources
    },
    async close () {
      await Promise.allSettled([...queues.values()])
      for (const [peerId, session] of [...sessions]) drop(peerId, session)
    }
  }
}

async function answer<T extends SyncMessage['type']> (ch: Channel, peerId: string, types: T[]): Promise<Extract<SyncMessage, { type: T }>> {
  const message = await ch.read()
  if (message === null) throw new HearthError('SYNC_PROTOCOL_ERROR', `device ${peerId} closed the stream while ${types.join('/')} was expected`)
  if (message.type === 'error') throw new HearthError(message.code === 'PEER_REJECTED' ? 'PEER_REJECTED' : 'SYNC_PROTOCOL_ERROR', `device ${peerId} answered: ${message.message}`)
  if (!(types as string[]).includes(message.type)) throw new HearthError('SYNC_PROTOCOL_ERROR', `device ${peerId} sent ${message.type}, expected ${types.join('/')}`)
  return message as Extract<SyncMessage, { type: T }>
}
