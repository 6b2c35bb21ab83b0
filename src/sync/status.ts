// What `hearth peers` shows about each peer (pure): built from what the engine learned in the
// last greetings and pulls, and what it persisted.

export interface PeerStatus {
  peerId: string
  /** Addresses this device dials (configured or added) and the address of any open connection. */
  addrs: string[]
  connected: boolean
  syncing: boolean
  /** ms since epoch of the last pull that reached the end of the peer's log. */
  lastSyncAt: number | null
  /** How far this device has handled the peer's change log. */
  cursor: number
  /** The peer's latest seq as of the last greeting or poke; null before any. */
  remoteHead: number | null
  /**
   * Entries to pull: during a pull, the entries listed but not handled plus the peer's changes
   * beyond the page; otherwise remoteHead − cursor. A rewritten record moves to a new seq and
   * leaves a gap, so outside a pull this is an upper bound; 0 means in sync.
   */
  pendingIn: number | null
  /**
   * The changes this device offers beyond the peer's cursor for our log (each file once; 0 means
   * the peer has everything); null before the peer said how far it is (peer-book.ts).
   */
  pendingOut: number | null
  lastError: string | null
  /** Files received from this peer that wait here for their schema. */
  waitingForSchema: number
}

/** In-memory knowledge about a peer, refreshed by every session with it. */
export interface LivePeer {
  remoteHead: number | null
  /** How far the peer has handled our log (its greeting, changes-requests and acks). */
  theirCursor: number | null
  /** Set while a pull runs. */
  pendingIn: number | null
  lastSyncAt: number | null
  lastError: string | null
}

/**
 * How far a peer has handled our log, as it says. Its pulls (changes-request, ack) are current
 * and may move it back (our log restarted, or it forgot us); a greeting was written when its
 * session began, and an ack on another stream may have overtaken it, so it only moves forward.
 */
export function learnTheirCursor (live: LivePeer, cursor: number, from: 'greeting' | 'pull'): void {
  live.theirCursor = from === 'pull' || live.theirCursor === null ? cursor : Math.max(live.theirCursor, cursor)
}

export function newLivePeer (): LivePeer {
  return { remoteHead: null, theirCursor: null, pendingIn: null, lastSyncAt: null, lastError: null }
}

export interface PeerFacts {
  addrs: string[]
  connected: boolean
  syncing: boolean
  cursor: number
  /** Persisted last sync, used when this process has not synced with the peer yet. */
  storedLastSyncAt: number | null
  /** What the peer has yet to be listed of our log (peer-book.ts), null while its cursor is unknown. */
  toSend: number | null
  waitingForSchema: number
}

export function peerStatus (peerId: string, live: LivePeer | undefined, facts: PeerFacts): PeerStatus {
  const remoteHead = live?.remoteHead ?? null
  return {
    peerId,
    addrs: facts.addrs,
    connected: facts.connected,
    syncing: facts.syncing,
    lastSyncAt: live?.lastSyncAt ?? facts.storedLastSyncAt,
    cursor: facts.cursor,
    remoteHead,
    pendingIn: facts.syncing
      ? (live?.pendingIn ?? null)
      : (remoteHead === null ? null : Math.max(0, remoteHead - facts.cursor)),
    pendingOut: facts.toSend,
    lastError: live?.lastError ?? null,
    waitingForSchema: facts.waitingForSchema
  }
}
