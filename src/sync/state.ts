// What the sync engine persists, in one key-value namespace of the Hearth database:
//   cursor/<peerId>   last seq of that peer's change log handled here (advanced entry by entry)
//   peer/<peerId>     { lastSyncAt } for `hearth peers`
//   addr/<multiaddr>  addresses added with `hearth peers add`, redialled on every start
//   settled/<cid>     CIDs this device decided about without indexing them (rejected, same file
//                     already present, deleted), so no peer makes it fetch them again
//   parked/<cid>      entries whose schema is not known yet; the ciphertext is in local storage
//                     and the entry is retried without refetching
//   local-scan        how far the local change log has been scanned for local deletions
import type { Kv } from '../db/database.js'
import type { LiveEntry } from './protocol.js'

export type SettledOutcome = 'rejected' | 'exists' | 'deleted'

export interface PeerInfoValue { lastSyncAt: number | null }
export interface SettledValue { outcome: SettledOutcome; at: number }
export interface ParkedValue { entry: LiveEntry; peerId: string; at: number }

export interface SyncState {
  cursor (peerId: string): Promise<number>
  setCursor (peerId: string, seq: number): Promise<void>
  peerInfo (peerId: string): Promise<PeerInfoValue | null>
  setPeerInfo (peerId: string, value: PeerInfoValue): Promise<void>
  /** Peer ids that have a cursor or peer info here. */
  knownPeers (): Promise<string[]>
  addAddress (address: string): Promise<void>
  addresses (): Promise<string[]>
  removeAddress (address: string): Promise<void>
  /** Drop what is known about a peer (cursor, last sync); a later session starts over. */
  forgetPeer (peerId: string): Promise<void>
  settled (cid: string): Promise<SettledValue | null>
  settle (cid: string, outcome: SettledOutcome): Promise<void>
  parked (cid: string): Promise<ParkedValue | null>
  park (entry: LiveEntry, peerId: string): Promise<void>
  unpark (cid: string): Promise<void>
  allParked (): AsyncIterable<ParkedValue>
  localScan (): Promise<number>
  setLocalScan (seq: number): Promise<void>
}

export function syncState (kv: Kv<unknown>): SyncState {
  async function keysWithPrefix (prefix: string): Promise<string[]> {
    const out: string[] = []
    for await (const [key] of kv.entries({ prefix })) out.push(key.slice(prefix.length))
    return out
  }
  return {
    async cursor (peerId) {
      const v = await kv.get(`cursor/${peerId}`)
      return typeof v === 'number' && Number.isSafeInteger(v) && v >= 0 ? v : 0
    },
    async setCursor (peerId, seq) { await kv.put(`cursor/${peerId}`, seq) },
    async peerInfo (peerId) { return (await kv.get(`peer/${peerId}`) as PeerInfoValue | undefined) ?? null },
    async setPeerInfo (peerId, value) { await kv.put(`peer/${peerId}`, value) },
    async knownPeers () {
      return [...new Set([...await keysWithPrefix('cursor/'), ...await keysWithPrefix('peer/')])].sort()
    },
    async addAddress (address) { await kv.put(`addr/${address}`, { addedAt: Date.now() }) },
    async addresses () { return await keysWithPrefix('addr/') },
    async removeAddress (address) { await kv.del(`addr/${address}`) },
    async forgetPeer (peerId) {
      await kv.del(`cursor/${peerId}`)
      await kv.del(`peer/${peerId}`)
    },
    async settled (cid) { return (await kv.get(`settled/${cid}`) as SettledValue | undefined) ?? null },
    async settle (cid, outcome) { await kv.put(`settled/${cid}`, { outcome, at: Date.now() } satisfies SettledValue) },
    async parked (cid) { return (await kv.get(`parked/${cid}`) as ParkedValue | undefined) ?? null },
    async park (entry, peerId) { await kv.put(`parked/${entry.cid}`, { entry, peerId, at: Date.now() } satisfies ParkedValue) },
    async unpark (cid) { await kv.del(`parked/${cid}`) },
    async * allParked () {
      for await (const [, value] of kv.entries({ prefix: 'parked/' })) yield value as ParkedValue
    },
    async localScan () {
      const v = await kv.get('local-scan')
      return typeof v === 'number' ? v : 0
    },
    async setLocalScan (seq) { await kv.put('local-scan', seq) }
  }
}
