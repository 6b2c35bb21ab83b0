// The owner's other devices as a source of a missing ciphertext (for restore): one sync session
// per request (docs/protocol.md §3.4) — greet, `fetch {cid}`, take the `blob` or `missing` answer —
// with a device that is connected or whose address is kept (configured or added). A device serves
// only ciphertext its index offers. Its answer is bounded (announced size, frame size, a deadline
// per frame, the caller's deadline for the whole file) and is checked against the CID by the
// fetcher before anything is stored.
import type { Stream } from '@libp2p/interface'
import { peerIdFromString } from '@libp2p/peer-id'
import { multiaddr } from '@multiformats/multiaddr'
import type { FileIndex } from '../db/file-index.js'
import { HearthError } from '../errors.js'
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
  counters?: WireCounters
}

/** One source per device: the connected ones first, then those with a kept address. */
export function deviceSources (deps: DeviceSourceDeps): BlockSource[] {
  const connected = deps.node.connectedPeers()
  const sources = connected.map((peerId) => deviceSource(deps, peerId, null))
  const kept = new Map<string, string>()
  for (const address of deps.node.keptAddresses()) {
    const peerId = addressPeerId(address)
    if (peerId !== null && peerId !== deps.node.peerId && !connected.includes(peerId) && !kept.has(peerId)) kept.set(peerId, address)
  }
  for (const [peerId, address] of kept) sources.push(deviceSource(deps, peerId, address))
  return sources
}

function deviceSource (deps: DeviceSourceDeps, peerId: string, address: string | null): BlockSource {
  const counters = deps.counters ?? newCounters()
  return {
    kind: 'device',
    name: `device ${peerId}`,
    async fetch (cid, { signal, maxBytes }) {
      const target = address !== null ? multiaddr(address) : peerIdFromString(peerId)
      let stream: Stream
      try {
        stream = await deps.node.libp2p.dialProtocol(target, SYNC_PROTOCOL_ID, { signal })
      } catch (err) {
        if (signal.aborted) throw err
        throw new HearthError('STORAGE_UNAVAILABLE', `device ${peerId} cannot be reached: ${(err as Error)?.message ?? String(err)}`)
      }
      const ch = openChannel(stream, { readTimeoutMs: deps.readTimeoutMs, counters })
      const onAbort = (): void => ch.abort(new HearthError('TIMEOUT', 'the fetch was given up'))
      signal.addEventListener('abort', onAbort, { once: true })
      try {
        await ch.send(await helloMessage({ ownerAddress: deps.ownerAddress, index: deps.index, cursorFor: deps.state.cursor }, peerId))
        checkPeerHello(await answer(ch, peerId, ['hello']), deps.ownerAddress)
        await ch.send({ type: 'fetch', cid })
        const reply = await answer(ch, peerId, ['blob', 'missing'])
        if (reply.cid !== cid) throw new HearthError('SYNC_PROTOCOL_ERROR', `device ${peerId} answered for ${reply.cid}, not ${cid}`)
        if (reply.type === 'missing') {
          await ch.close()
          return null
        }
        if (reply.size > maxBytes) throw new HearthError('FILE_TOO_LARGE', `device ${peerId} offers ${reply.size} bytes for ${cid}, more than the ${maxBytes} accepted`)
        const bytes = await ch.readBlob(reply.size)
        await ch.close()
        return bytes
      } catch (err) {
        ch.abort(err instanceof Error ? err : new Error(String(err)))
        throw err
      } finally {
        signal.removeEventListener('abort', onAbort)
      }
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
