// What this device offers its peers (pure): a change of the local file index becomes a wire entry
// only when it stands for ciphertext that exists here (stored or registered) or for the deletion
// of such ciphertext. Files still waiting for their schema, rejected files and anything without a
// CID stay local. Nothing of the path or the scope is copied into the entry.
import type { ChangeEntry } from '../db/file-index.js'
import type { FileRecord } from '../db/types.js'
import { checkEntry, isCidString, type WireEntry } from './protocol.js'

/** States whose ciphertext is in local storage and may be served to peers. */
export const SERVABLE_STATES: ReadonlySet<FileRecord['state']> = new Set(['stored', 'registered'])

export function isServable (record: FileRecord): boolean {
  return SERVABLE_STATES.has(record.state) && isCidString(record.cid)
}

/**
 * The wire form of one local change, or null when the change is not offered. A candidate that
 * would fail the receiver's strict validation (an odd schemaId, say) is not offered either: one
 * such entry must not make a whole page unreadable and stall sync for everything behind it.
 */
export function toWireEntry (change: ChangeEntry): WireEntry | null {
  const candidate = candidateEntry(change)
  if (candidate === null) return null
  try {
    return checkEntry(candidate)
  } catch {
    return null
  }
}

function candidateEntry (change: ChangeEntry): WireEntry | null {
  if (change.deleted) {
    return isCidString(change.cid) ? { seq: change.seq, cid: change.cid, deleted: true } : null
  }
  const r = change.record
  if (r.state === 'deleted') return isCidString(r.cid) ? { seq: change.seq, cid: r.cid, deleted: true } : null
  if (!isServable(r) || r.schemaId === null || r.collectedAt === null) return null
  return {
    seq: change.seq,
    cid: r.cid as string,
    schemaId: r.schemaId,
    collectedAt: r.collectedAt,
    // advisory: the blob header of a fetch carries the authoritative size
    size: r.encryptedSize ?? 0,
    fileId: r.fileId ?? null
  }
}
