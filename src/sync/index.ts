// Device-to-device sync (docs/protocol.md §3.4), the surface the daemon uses:
//   const node = await createSyncNode({ networkKey: privateNetworkKey(master), peerKeyFile, listen, mdns, bootstrapPeers, logger })
//   const engine = createSyncEngine({ node, ownerAddress, index, storage, state: openKv(db, 'sync'), receive, applyTombstone, learnFileId, logger })
//   await engine.start(); await node.start()        … engine.notifyLocalChange() after every local write or delete …
//   await engine.stop(); await node.stop()
export { createSyncNode, addressPeerId, loadOrCreatePeerKey, swarmKeyFile, DEFAULT_SYNC_LISTEN, MDNS_SERVICE_TAG } from './node.js'
export type { SyncNode, SyncNodeOptions } from './node.js'
export { createSyncEngine } from './engine.js'
export type {
  SyncEngine, SyncEngineOptions, WaitingSummary, SyncProgress, SyncRoundResult, SyncStats, PeerStatus, RetryResult,
  ReceiveHook, ReceiveOutcome, TombstoneHook, FileIdHook, PeerContext, LiveEntry, TombstoneEntry, WireEntry
} from './engine.js'
export { SYNC_PROTOCOL_ID, SYNC_PROTOCOL_VERSION } from './protocol.js'
