// What the daemon's parts announce to each other through the event hub. Emitters and listeners
// know only these names and payloads; the composition root connects emitters to the hub, and
// each listening service subscribes when it starts and unsubscribes when it stops.
import type { FileRecord } from '../db/types.js'
import type { ResolvedSchema } from '../registry/types.js'
import { createEventHub, type EventHub } from './event-hub.js'

export type { EventSink, EventSource } from './event-hub.js'
import type { Logger } from '../log.js'

export interface HearthEvents {
  /** A file written on this device was encrypted, pinned and indexed (its registration is due). */
  'file.stored': FileRecord
  /** Any new version was indexed, local or received (peers may pull it). */
  'file.indexed': FileRecord
  /**
   * Just before its `file.indexed`: a new version's envelope `data` as parsed from the JSON that
   * was stored (exactly what reading the version back would give), when ingest had it. Up to a
   * file's whole size: a listener takes what it needs and does not keep `data`.
   */
  'version.data': { record: FileRecord; data: unknown }
  /** A whole scope was deleted through the API (peers learn of it through tombstones). */
  'scope.deleted': { scope: string }
  /** A schema was added to the local registry through the API (its chain registration is due). */
  'schema.added': ResolvedSchema
  /** A schema registered on chain replaced its local id everywhere. */
  'schema.registered': { localId: string; chainId: string }
  /** A peer's file was handled: written, already held, rejected, or waiting for its schema. */
  'peer.file.received': { cid: string; peerId: string; outcome: 'written' | 'exists' | 'rejected' | 'waiting-schema' }
}

export type HearthEventHub = EventHub<HearthEvents>

export function createHearthEvents (logger: Logger): HearthEventHub {
  return createEventHub<HearthEvents>(logger)
}
