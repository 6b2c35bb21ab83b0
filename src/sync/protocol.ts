// The device-to-device sync protocol (pure: message shapes, encoding and strict validation; the
// stream I/O is in wire.ts). One stream is one session:
//
//   dialer                                   listener
//   hello {protocolVersion, ownerAddress, head, cursor}  →
//                                           ← hello {...}   (or error, then the stream is closed)
//   then any number of requests, in order; requests may be pipelined, answers come in order:
//   changes-request {since, limit}            → ← changes {entries, next, done}
//   fetch {cid}                               → ← blob {cid, size} + ceil(size / CHUNK) raw frames
//                                               ← missing {cid}
//   poke {head}                               →   (no answer: "I have changes up to head, pull")
//   ack {cursor}                              →   (no answer: "I have handled your log up to cursor")
//
// `head` is the sender's latest change-log seq and `cursor` how far the sender has handled the
// receiver's log, so each side learns what is pending in both directions from the greeting alone.
//
// Every frame is length-prefixed (unsigned varint). Control frames are UTF-8 JSON objects; the
// frames following a `blob` header are raw ciphertext. Entries never carry a scope, a path or any
// plaintext: the receiver learns the scope only by resolving schemaId and decrypting.
import { CID } from 'multiformats/cid'
import { HearthError } from '../errors.js'
import { MAX_BLOB_BYTES } from '../storage/cid.js'

export const SYNC_PROTOCOL_ID = '/hearth/sync/1.0.0'
export const SYNC_PROTOCOL_VERSION = 1

/** Largest frame either side accepts (control or data). */
export const MAX_FRAME_BYTES = 1024 * 1024
/** Ciphertext is sent in frames of this size. */
export const BLOB_CHUNK_BYTES = 256 * 1024
/** Largest ciphertext accepted from a peer (storage's bound: verified reads size nothing over it). */
export { MAX_BLOB_BYTES }
/** Most entries one `changes` answer may carry (keeps a page well under MAX_FRAME_BYTES). */
export const MAX_CHANGES_LIMIT = 1000

export interface LiveEntry {
  seq: number
  cid: string
  schemaId: string
  collectedAt: string
  /** Ciphertext size in bytes: exactly what a fetch transfers. */
  size: number
  fileId: string | null
}

export interface TombstoneEntry {
  seq: number
  cid: string
  deleted: true
}

export type WireEntry = LiveEntry | TombstoneEntry

export type HelloMessage = { type: 'hello'; protocolVersion: number; ownerAddress: string; head: number; cursor: number }
export type ChangesRequestMessage = { type: 'changes-request'; since: number; limit: number }
export type ChangesMessage = { type: 'changes'; entries: WireEntry[]; next: number; done: boolean }
export type FetchMessage = { type: 'fetch'; cid: string }
export type BlobMessage = { type: 'blob'; cid: string; size: number }
export type MissingMessage = { type: 'missing'; cid: string }
export type PokeMessage = { type: 'poke'; head: number }
export type AckMessage = { type: 'ack'; cursor: number }
export type ErrorMessage = { type: 'error'; code: string; message: string }

export type SyncMessage =
  | HelloMessage | ChangesRequestMessage | ChangesMessage | FetchMessage | BlobMessage
  | MissingMessage | PokeMessage | AckMessage | ErrorMessage

export type SyncMessageType = SyncMessage['type']

export function isTombstone (entry: WireEntry): entry is TombstoneEntry {
  return 'deleted' in entry
}

const ADDRESS = /^0x[0-9a-fA-F]{40}$/
const SCHEMA_ID = /^[A-Za-z0-9:._-]{1,200}$/
const FILE_ID = /^[0-9]{1,78}$/
const ISO_UTC = /^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}(?:\.\d{1,9})?Z$/
const MAX_CID_LENGTH = 128
const MAX_ERROR_TEXT = 1000

function violation (message: string): HearthError {
  return new HearthError('SYNC_PROTOCOL_ERROR', `malformed sync message: ${message}`)
}

type Obj = Record<string, unknown>

function exactKeys (o: Obj, required: readonly string[], optional: readonly string[] = []): void {
  for (const k of required) if (!(k in o)) throw violation(`missing field ${k}`)
  for (const k of Object.keys(o)) {
    if (!required.includes(k) && !optional.includes(k)) throw violation(`unexpected field ${JSON.stringify(k.slice(0, 40))}`)
  }
}

function counter (v: unknown, name: string): number {
  if (typeof v !== 'number' || !Number.isSafeInteger(v) || v < 0) throw violation(`${name} must be a non-negative integer`)
  return v
}

function text (v: unknown, name: string, pattern: RegExp): string {
  if (typeof v !== 'string' || !pattern.test(v)) throw violation(`${name} is not valid`)
  return v
}

/** A CIDv1 string (what every Hearth storage backend produces). */
export function isCidString (v: unknown): v is string {
  if (typeof v !== 'string' || v.length === 0 || v.length > MAX_CID_LENGTH) return false
  try {
    return CID.parse(v).version === 1
  } catch {
    return false
  }
}

/** A CIDv1 in its canonical (base32) spelling, the one the index and the storage backends use. */
function cid (v: unknown, name = 'cid'): string {
  if (!isCidString(v)) throw violation(`${name} is not a CIDv1`)
  return CID.parse(v).toString()
}

/** Strictly validate one change entry; throws SYNC_PROTOCOL_ERROR. */
export function checkEntry (v: unknown, i = 0): WireEntry {
  if (typeof v !== 'object' || v === null || Array.isArray(v)) throw violation(`entries[${i}] is not an object`)
  const o = v as Obj
  if ('deleted' in o) {
    exactKeys(o, ['seq', 'cid', 'deleted'])
    if (o.deleted !== true) throw violation(`entries[${i}].deleted must be true`)
    return { seq: counter(o.seq, `entries[${i}].seq`), cid: cid(o.cid, `entries[${i}].cid`), deleted: true }
  }
  exactKeys(o, ['seq', 'cid', 'schemaId', 'collectedAt', 'size', 'fileId'])
  const size = counter(o.size, `entries[${i}].size`)
  if (size > MAX_BLOB_BYTES) throw violation(`entries[${i}].size exceeds ${MAX_BLOB_BYTES}`)
  return {
    seq: counter(o.seq, `entries[${i}].seq`),
    cid: cid(o.cid, `entries[${i}].cid`),
    schemaId: text(o.schemaId, `entries[${i}].schemaId`, SCHEMA_ID),
    collectedAt: text(o.collectedAt, `entries[${i}].collectedAt`, ISO_UTC),
    size,
    fileId: o.fileId === null ? null : text(o.fileId, `entries[${i}].fileId`, FILE_ID)
  }
}

/** Strictly validate a decoded JSON value as a sync message; throws SYNC_PROTOCOL_ERROR. */
export function checkMessage (value: unknown): SyncMessage {
  if (typeof value !== 'object' || value === null || Array.isArray(value)) throw violation('not a JSON object')
  const o = value as Obj
  switch (o.type) {
    case 'hello':
      exactKeys(o, ['type', 'protocolVersion', 'ownerAddress', 'head', 'cursor'])
      return {
        type: 'hello',
        protocolVersion: counter(o.protocolVersion, 'protocolVersion'),
        ownerAddress: text(o.ownerAddress, 'ownerAddress', ADDRESS),
        head: counter(o.head, 'head'),
        cursor: counter(o.cursor, 'cursor')
      }
    case 'changes-request': {
      exactKeys(o, ['type', 'since', 'limit'])
      const limit = counter(o.limit, 'limit')
      if (limit < 1 || limit > MAX_CHANGES_LIMIT) throw violation(`limit must be 1..${MAX_CHANGES_LIMIT}`)
      return { type: 'changes-request', since: counter(o.since, 'since'), limit }
    }
    case 'changes': {
      exactKeys(o, ['type', 'entries', 'next', 'done'])
      if (!Array.isArray(o.entries)) throw violation('entries must be an array')
      if (o.entries.length > MAX_CHANGES_LIMIT) throw violation(`more than ${MAX_CHANGES_LIMIT} entries`)
      if (typeof o.done !== 'boolean') throw violation('done must be a boolean')
      const entries = o.entries.map(checkEntry)
      const next = counter(o.next, 'next')
      let last = -1
      for (const e of entries) {
        if (e.seq <= last) throw violation('entries must be in increasing seq order')
        last = e.seq
      }
      if (last > next) throw violation('next is behind the last entry')
      return { type: 'changes', entries, next, done: o.done }
    }
    case 'fetch':
      exactKeys(o, ['type', 'cid'])
      return { type: 'fetch', cid: cid(o.cid) }
    case 'blob': {
      exactKeys(o, ['type', 'cid', 'size'])
      const size = counter(o.size, 'size')
      if (size > MAX_BLOB_BYTES) throw violation(`blob larger than ${MAX_BLOB_BYTES} bytes`)
      return { type: 'blob', cid: cid(o.cid), size }
    }
    case 'missing':
      exactKeys(o, ['type', 'cid'])
      return { type: 'missing', cid: cid(o.cid) }
    case 'poke':
      exactKeys(o, ['type', 'head'])
      return { type: 'poke', head: counter(o.head, 'head') }
    case 'ack':
      exactKeys(o, ['type', 'cursor'])
      return { type: 'ack', cursor: counter(o.cursor, 'cursor') }
    case 'error':
      exactKeys(o, ['type', 'code', 'message'])
      if (typeof o.code !== 'string' || typeof o.message !== 'string') throw violation('error code and message must be strings')
      return { type: 'error', code: o.code.slice(0, 100), message: o.message.slice(0, MAX_ERROR_TEXT) }
    default:
      throw violation(`unknown type ${JSON.stringify(String(o.type).slice(0, 40))}`)
  }
}

const utf8 = new TextDecoder('utf-8', { fatal: true })
const encoder = new TextEncoder()

/** Decode one control frame. Throws SYNC_PROTOCOL_ERROR for anything that is not a valid message. */
export function decodeMessage (frame: Uint8Array): SyncMessage {
  if (frame.byteLength > MAX_FRAME_BYTES) throw violation('frame too large')
  let value: unknown
  try {
    value = JSON.parse(utf8.decode(frame))
  } catch {
    throw violation('not UTF-8 JSON')
  }
  return checkMessage(value)
}

export function encodeMessage (message: SyncMessage): Uint8Array {
  const bytes = encoder.encode(JSON.stringify(message))
  if (bytes.byteLength > MAX_FRAME_BYTES) throw new HearthError('INTERNAL', `sync message ${message.type} exceeds the frame limit`)
  return bytes
}

/** Owner addresses compare case-insensitively (EIP-55 checksums are a display form). */
export function sameOwner (a: string, b: string): boolean {
  return a.toLowerCase() === b.toLowerCase()
}

/** A peer's greeting must speak our version and belong to our owner; throws PEER_REJECTED. */
export function checkPeerHello (hello: HelloMessage, ownerAddress: string): void {
  if (hello.protocolVersion !== SYNC_PROTOCOL_VERSION) {
    throw new HearthError('PEER_REJECTED', `peer speaks sync protocol version ${hello.protocolVersion}, this device ${SYNC_PROTOCOL_VERSION}`)
  }
  if (!sameOwner(hello.ownerAddress, ownerAddress)) {
    throw new HearthError('PEER_REJECTED', 'peer belongs to another owner', { peerOwner: hello.ownerAddress })
  }
}
