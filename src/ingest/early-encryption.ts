// A large POST's encryption started before its body is parsed and validated, while the body is
// still arriving. The envelope's bytes do not depend on the parse when the body is already
// canonical JSON (envelope-bytes.ts): they are the schema's URL, the scope and collectedAt around
// the body as it came. So before the body is read, its envelope's head is written into shared
// memory just before where the body will lie, and the encryption worker encrypts each part of the
// body as soon as the socket delivered it (body-arrival.ts); once the whole body is there it is
// checked for canonical form, and the main thread parses and validates it while the worker
// finishes. Nothing is stored until validation passed (the pieces wait in the pool); a body that
// is not canonical, fails validation or stops arriving only costs the worker's time (its job is
// cancelled). While other files keep the workers busy, or other large bodies are arriving too
// (each then arrives slower, sharing the socket reads), the job is given once the body is all there
// instead, so a worker never waits on one body's arrival while another body is complete; a body
// that arrives too slowly gives its worker back and is given again the same way, once it is all
// there, still before the parse.
import { DEFAULT_MAX_JSON_VALUES } from '../protocol/bounded-json.js'
import { canonicalTokenLimit, isCanonicalJson } from '../protocol/canonical-json.js'
import { ENVELOPE_VERSION, serializeEnvelopeWithData, withEnvelopeRoom, type Envelope } from '../protocol/envelope.js'
import { CHUNK_SIZE } from '../storage/cid.js'
import { HearthError } from '../errors.js'
import { createArrival, MAX_ARRIVAL_BYTES } from './body-arrival.js'
import type { Encryptor } from './encryptor.js'
import type { EncryptionPart } from './encryption-job.js'
import type { StoredCiphertext } from './encrypt-store.js'
import type { EarlyStore } from './early-store.js'

/** An encryption already running for the envelope `bytes` of a body stamped `collectedAt`. */
export interface EarlyEncryption {
  definitionUrl: string
  collectedAt: string
  /** The envelope's bytes, the body among them (final once `complete` said yes). */
  bytes: Uint8Array
  /** Where the body is to be read (api/http.ts readBody's `into`): its declared length, in `bytes`. */
  room: Buffer
  /** The first `bytes` bytes of the body are in `room`. */
  received (bytes: number): void
  /**
   * The body as read: whether it is the one being encrypted (read whole into `room`, and
   * canonical). When not, the job is cancelled and the body is stored the ordinary way.
   */
  complete (body: Uint8Array): boolean
  /** The ciphertext pieces, for the one consumer that stores them (when `commit` says null). */
  pieces: AsyncIterable<Uint8Array | EncryptionPart>
  /**
   * The ciphertext stored as it came (opts.stage, early-store.ts), now made content of the
   * store; null when it was not staged (read `pieces` instead). Once, after `complete`.
   */
  commit (): Promise<StoredCiphertext> | null
  /**
   * Drops the job when its pieces are not used (a failed validation, a taken file name, a client
   * gone), and what it staged; resolves once that is removed. Nothing once they were taken.
   */
  cancel (): Promise<void>
}

/**
 * A body arriving slower than this (on average, after the first STALL_GRACE_MS) gives its worker
 * back: the worker would otherwise wait on a slow client while other files queue behind it. Its
 * job is given again once the body is all there (`complete`).
 */
const MIN_ARRIVAL_BYTES_PER_MS = 16 * 1024 * 1024 / 1000
const STALL_GRACE_MS = 20
const STALL_CHECK_MS = 20

/**
 * Starts encrypting the envelope a large body of `declaredBytes` will be stored as, before the body
 * is read; null when it cannot (a small body, an in-thread encryptor). `maxJsonValues`
 * (ingest.maxJsonValues) bounds the canonical check's tokens (canonicalTokenLimit); `alone`: no
 * other large body is being handled (else the job waits for the whole body); `stage`: stores a
 * job's parts as they come (early-store.ts), from the job's start on.
 */
export function startEarlyEncryption (encryptor: Encryptor, declaredBytes: number, head: { definitionUrl: string; scope: string; collectedAt: string }, passwordHex: string, opts: { maxJsonValues?: number; alone?: boolean; stage?: (parts: AsyncIterable<Uint8Array | EncryptionPart>) => EarlyStore | null } = {}): EarlyEncryption | null {
  const maxJsonValues = opts.maxJsonValues ?? DEFAULT_MAX_JSON_VALUES
  if (encryptor.encryptArriving === undefined || !(declaredBytes > CHUNK_SIZE && declaredBytes < MAX_ARRIVAL_BYTES / 2)) return null
  const room = withEnvelopeRoom(declaredBytes)
  const env = { $schema: head.definitionUrl, version: ENVELOPE_VERSION, scope: head.scope, collectedAt: head.collectedAt } as Envelope
  // the head is written before the room and the closing brace after it; the body comes in between
  const bytes = serializeEnvelopeWithData(env, room)
  if (bytes.buffer !== room.buffer) return null // a head too long for the room: the ordinary way
  const headBytes = room.byteOffset - bytes.byteOffset
  // the bytes there so far, for the job reading them as they come; a job given the worker back
  // leaves its arrival abandoned, and the next job reads a new one
  let arrival = createArrival()
  arrival.arrived(headBytes)
  const encryptArriving = encryptor.encryptArriving.bind(encryptor)
  let job: { it: AsyncIterator<Uint8Array | EncryptionPart>; first: Promise<IteratorResult<Uint8Array | EncryptionPart>>; abort: AbortController } | null = null
  let taken = false
  let cancelled = false
  let received = 0
  let stall: NodeJS.Timeout | undefined
  /** The current job's parts being stored as they come (opts.stage), until committed or dropped. */
  let staging: EarlyStore | null = null
  /** Staged parts of dropped jobs being removed. */
  let discarding: Promise<void> = Promise.resolve()

  /** A job's parts in order, its first one asked for already; read once. */
  async function * partsOf (it: AsyncIterator<Uint8Array | EncryptionPart>, first: Promise<IteratorResult<Uint8Array | EncryptionPart>>): AsyncGenerator<Uint8Array | EncryptionPart> {
    try {
      for (let r = await first; r.done !== true; r = await it.next()) yield r.value
    } finally {
      // a consumer that stopped early (a failed store) releases the job's pieces now
      await it.return?.()
    }
  }

  function start (): void {
    const abort = new AbortController()
    const it = encryptArriving(bytes, passwordHex, arrival.control, abort.signal)[Symbol.asyncIterator]()
    // asking for the first piece is what queues the job; its failure is met by the consumer
    job = { it, first: it.next(), abort }
    job.first.catch(() => {})
    staging = opts.stage?.(partsOf(it, job.first)) ?? null
  }

  /** Stops the job running (its worker is free at once) and removes what it staged; `why` is what its pieces would throw. */
  function dropJob (why: string): void {
    arrival.abandon()
    job?.abort.abort(new HearthError('INVALID_ARGUMENT', why))
    job = null
    const dropped = staging
    staging = null
    // a removal that fails leaves the files to the next start's sweep (staged-import.ts)
    if (dropped !== null) discarding = Promise.all([discarding, dropped.discard().catch(() => {})]).then(() => {})
  }

  async function cancel (): Promise<void> {
    cancelled = true
    clearInterval(stall)
    if (taken) { arrival.abandon(); await discarding; return } // its consumer ends the job (encrypt-store.ts)
    taken = true
    dropJob('the early encryption was not used')
    await discarding
  }

  /** The body comes too slowly for a worker to wait on it: the worker is given back, and the job given again at `complete`. */
  function giveBack (): void {
    clearInterval(stall)
    dropJob('the body arrived too slowly: its worker was given back')
    arrival = createArrival()
    arrival.arrived(headBytes + received)
  }

  if (opts.alone !== false && encryptor.free?.() !== false) {
    start()
    // a worker waiting on this body is given back when the body comes too slowly
    const since = performance.now()
    stall = setInterval(() => {
      const ms = performance.now() - since
      if (ms > STALL_GRACE_MS && received < (ms - STALL_GRACE_MS) * MIN_ARRIVAL_BYTES_PER_MS) giveBack()
    }, STALL_CHECK_MS)
    stall.unref()
  }

  return {
    definitionUrl: head.definitionUrl,
    collectedAt: head.collectedAt,
    bytes,
    room,
    received (n) {
      received = n
      arrival.arrived(headBytes + n)
    },
    complete (body) {
      clearInterval(stall)
      const whole = !cancelled && body.buffer === room.buffer && body.byteOffset === room.byteOffset && body.byteLength === room.byteLength
      if (!whole || !isCanonicalJson(body, canonicalTokenLimit(maxJsonValues))) {
        cancel()
        return false
      }
      arrival.complete(bytes.byteLength)
      if (job === null) start()
      return true
    },
    pieces: {
      [Symbol.asyncIterator]: () => {
        if (taken) throw new Error('the early encryption\'s pieces are read once')
        if (staging !== null) throw new Error('the early encryption\'s pieces are being staged: commit them')
        taken = true
        if (job === null) throw new Error('the early encryption\'s pieces are read once it is complete')
        return partsOf(job.it, job.first)
      }
    },
    commit () {
      if (staging === null) return null
      if (taken) throw new Error('the early encryption\'s pieces are stored once')
      taken = true
      return staging.commit()
    },
    cancel
  }
}
