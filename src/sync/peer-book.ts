// The devices this engine knows: adding and removing them (persisted addresses, redials, cursors)
// and what `hearth peers` shows about each.
import type { Connection } from '@libp2p/interface'
import type { FileIndex } from '../db/file-index.js'
import { HearthError } from '../errors.js'
import type { Logger } from '../log.js'
import { addressPeerId, type SyncNode } from './node.js'
import { toWireEntry } from './offer.js'
import type { SyncState } from './state.js'
import { newLivePeer, peerStatus, type LivePeer, type PeerStatus } from './status.js'
import { waitingByPeer } from './waiting.js'

export interface PeerBook {
  /** What this process learned about a peer (greetings, pulls); made on first use. */
  live (peerId: string): LivePeer
  addPeer (address: string): Promise<void>
  removePeer (peerOrAddress: string): Promise<{ peerId: string | null; addresses: string[] }>
  peers (): Promise<PeerStatus[]>
}

export function createPeerBook (deps: {
  node: SyncNode
  state: SyncState
  index: Pick<FileIndex, 'currentSeq' | 'changesSince'>
  logger: Logger
  syncing (peerId: string): boolean
}): PeerBook {
  const { node, state, logger } = deps
  const live = new Map<string, LivePeer>()

  function addressesOf (peerId: string, conns: Connection[]): string[] {
    const kept = node.keptAddresses().filter((a) => a.endsWith(`/p2p/${peerId}`))
    const open = conns.filter((c) => c.remotePeer.toString() === peerId && c.status === 'open').map((c) => c.remoteAddr.toString())
    return [...new Set([...kept, ...open])]
  }

  return {
    live (peerId) {
      let p = live.get(peerId)
      if (p === undefined) {
        p = newLivePeer()
        live.set(peerId, p)
      }
      return p
    },
    async addPeer (address) {
      if (addressPeerId(address) === null) {
        throw new HearthError('INVALID_ARGUMENT', `the address must end in /p2p/<peerId> (the other device's peer id, printed by its \`hearth peers\`): ${address}`)
      }
      if (addressPeerId(address) === node.peerId) {
        throw new HearthError('CONFLICT', `${address} names this device's own peer id: if it is another device, both use one identity/peer-key (copied?); on that device remove identity/peer-key and restart it, then add the address it prints`)
      }
      node.keepConnected(address) // validates the multiaddr before anything is stored
      await state.addAddress(address)
    },
    async removePeer (target) {
      const byAddress = target.startsWith('/')
      const peerId = byAddress ? addressPeerId(target) : target
      const stored = await state.addresses()
      const addresses = byAddress
        ? stored.filter((a) => a === target)
        : stored.filter((a) => addressPeerId(a) === peerId)
      const known = peerId !== null && ((await state.knownPeers()).includes(peerId) || live.has(peerId) || node.connectedPeers().includes(peerId))
      if (addresses.length === 0 && !known) throw new HearthError('NOT_FOUND', `no known device ${target} (\`hearth peers\` lists them)`)
      node.forget(addresses)
      for (const a of addresses) await state.removeAddress(a)
      if (peerId !== null) {
        node.forget(node.keptAddresses().filter((a) => addressPeerId(a) === peerId))
        await state.forgetPeer(peerId)
        live.delete(peerId)
        await node.hangUp(peerId).catch((err: Error) => { logger.debug({ peer: peerId, err: err.message }, 'hang-up failed') })
      }
      return { peerId, addresses }
    },
    async peers () {
      const conns = node.libp2p.getConnections()
      const connected = new Set(node.connectedPeers())
      const keptIds = node.keptAddresses().map((a) => /\/p2p\/([^/]+)$/.exec(a)?.[1]).filter((x): x is string => x !== undefined)
      const ids = [...new Set([...await state.knownPeers(), ...connected, ...live.keys(), ...keptIds])].sort()
      const ourHead = await deps.index.currentSeq()
      const waiting = await waitingByPeer(state)
      return await Promise.all(ids.map(async (peerId): Promise<PeerStatus> => peerStatus(peerId, live.get(peerId), {
        waitingForSchema: waiting[peerId] ?? 0,
        addrs: addressesOf(peerId, conns),
        connected: connected.has(peerId),
        syncing: deps.syncing(peerId),
        cursor: await state.cursor(peerId),
        storedLastSyncAt: (await state.peerInfo(peerId))?.lastSyncAt ?? null,
        toSend: await toSend(deps.index, live.get(peerId)?.theirCursor ?? null, ourHead)
      })))
    }
  }
}

/** Changes counted exactly for "to send"; beyond them, the rest of the log is counted by its seqs (an upper bound). */
const COUNTED_CHANGES = 1000

/**
 * What this device would list to a peer that has handled our log up to `theirCursor`: the changes
 * it offers after that point (a file rewritten since counts once, a change it never offers, such
 * as a rejected file, not at all). Null before the peer said how far it is.
 */
async function toSend (index: Pick<FileIndex, 'changesSince'>, theirCursor: number | null, ourHead: number): Promise<number | null> {
  if (theirCursor === null) return null
  if (theirCursor >= ourHead) return 0
  const changes = await index.changesSince(theirCursor, COUNTED_CHANGES)
  const offered = changes.filter((c) => toWireEntry(c) !== null).length
  return changes.length < COUNTED_CHANGES ? offered : offered + Math.max(0, ourHead - changes[changes.length - 1]!.seq)
}
