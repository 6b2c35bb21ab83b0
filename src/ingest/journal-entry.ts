// How an ingest journal entry (journal.ts) is kept in LevelDB, written by `entry` and `intend` and
// read back by replay: binary, the bytes as they are; the JSON form (base64) of earlier versions still reads.
import type { JournalEntry, ReceivedRecord } from './journal.js'

/** A journal entry as read back: what `entry` or `intend` committed. */
export interface StoredEntry { path: string; data?: Uint8Array; ciphertext?: Uint8Array; cid?: string; received?: ReceivedRecord; link?: JournalEntry['link'] }

/**
 * An entry's value: the format byte 1, the length of a JSON head (4 bytes, little-endian), the
 * head `{path, cid?, received?, link?, data?, ciphertext?}` (the last two: byte lengths), then
 * the data file's bytes and the ciphertext's, as they are. Entries written before this format
 * are JSON text (the same fields, the bytes in base64; first byte `{`) and still replay.
 */
const BINARY_ENTRY = 1
const JSON_ENTRY = 0x7b // '{'

interface EntryHead { path: string; cid?: string; received?: ReceivedRecord; link?: JournalEntry['link']; data?: number; ciphertext?: number }

export function encodeJournalEntry (entry: StoredEntry): Uint8Array {
  const head: EntryHead = { path: entry.path }
  if (entry.cid !== undefined) head.cid = entry.cid
  if (entry.received !== undefined) head.received = entry.received
  if (entry.link !== undefined) head.link = entry.link
  if (entry.data !== undefined) head.data = entry.data.byteLength
  if (entry.ciphertext !== undefined) head.ciphertext = entry.ciphertext.byteLength
  const json = JSON.stringify(head)
  const headBytes = Buffer.byteLength(json)
  const out = Buffer.allocUnsafe(5 + headBytes + (head.data ?? 0) + (head.ciphertext ?? 0))
  out[0] = BINARY_ENTRY
  out.writeUInt32LE(headBytes, 1)
  out.write(json, 5, 'utf8')
  let at = 5 + headBytes
  if (entry.data !== undefined) { out.set(entry.data, at); at += entry.data.byteLength }
  if (entry.ciphertext !== undefined) out.set(entry.ciphertext, at)
  return out
}

/** An entry's value read back, in either format; throws on a value that is neither. */
export function decodeJournalEntry (value: Uint8Array): StoredEntry {
  const bytes = Buffer.from(value.buffer, value.byteOffset, value.byteLength)
  if (bytes[0] === JSON_ENTRY) {
    const old = JSON.parse(bytes.toString('utf8')) as Omit<StoredEntry, 'data' | 'ciphertext'> & { data?: string; ciphertext?: string }
    const entry: StoredEntry = { path: old.path }
    if (old.data !== undefined) entry.data = Buffer.from(old.data, 'base64')
    if (old.ciphertext !== undefined) entry.ciphertext = Buffer.from(old.ciphertext, 'base64')
    return withHead(entry, old)
  }
  if (bytes[0] !== BINARY_ENTRY || bytes.byteLength < 5) throw new Error('not an ingest journal entry')
  const headEnd = 5 + bytes.readUInt32LE(1)
  const head = JSON.parse(bytes.toString('utf8', 5, headEnd)) as EntryHead
  if (typeof head.path !== 'string' || headEnd + (head.data ?? 0) + (head.ciphertext ?? 0) !== bytes.byteLength) throw new Error('a torn ingest journal entry')
  const entry: StoredEntry = { path: head.path }
  let at = headEnd
  if (head.data !== undefined) { entry.data = bytes.subarray(at, at + head.data); at += head.data }
  if (head.ciphertext !== undefined) entry.ciphertext = bytes.subarray(at, at + head.ciphertext)
  return withHead(entry, head)
}

function withHead (entry: StoredEntry, head: Pick<StoredEntry, 'cid' | 'received' | 'link'>): StoredEntry {
  if (head.cid !== undefined) entry.cid = head.cid
  if (head.received !== undefined) entry.received = head.received
  if (head.link !== undefined) entry.link = head.link
  return entry
}
