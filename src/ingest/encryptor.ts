// Who encrypts a file: the main thread, or the encryption workers (a WorkerPool on the second core,
// so a 10 MB file's encryption leaves the main thread free to answer requests). The pipeline asks
// an Encryptor; the composition root decides which one it gets (`ingest.encryptionWorkers`).
// Both give the same messages (docs/protocol.md §2.4): `encrypt` whole (small files), and
// `encryptChunks` as storage-chunk-sized pieces (large files: stored while the rest is encrypted).
// The small-file path may use the workers too; for a 1 KB file the hand-over costs about what
// the encryption does, so it pays only when the main thread is the bottleneck.
import { HearthError } from '../errors.js'
import { createWorkerPool, type WorkerPool } from '../lifecycle/worker-pool.js'
import type { Logger } from '../log.js'
import { service, type Service } from '../lifecycle/service.js'
import { createByteBudget, type ByteBudget } from '../lifecycle/byte-budget.js'
import { encryptEnvelopeBytes, encryptEnvelopeChunks, type EncryptOptions } from '../protocol/encryption.js'
import { CHUNK_SIZE } from '../storage/cid.js'
import type { EncryptionJob, EncryptionPart } from './encryption-job.js'

export interface Encryptor {
  /** The whole message. */
  encrypt (plaintext: Uint8Array, passwordHex: string): Promise<Uint8Array>
  /**
   * The message in pieces of CHUNK_SIZE bytes (the last one shorter), in order; from the workers
   * each with its SHA-256, followed by the plaintext's (EncryptionPart).
   */
  encryptChunks (plaintext: Uint8Array, passwordHex: string): AsyncIterable<Uint8Array | EncryptionPart>
  /**
   * encryptChunks of a plaintext still arriving in shared memory (body-arrival.ts: `arrival` is its
   * control words): what has arrived is encrypted while the rest comes. Only a worker can wait
   * for the rest, so only the workers' Encryptor has it.
   */
  encryptArriving? (plaintext: Uint8Array, passwordHex: string, arrival: Int32Array, signal?: AbortSignal): AsyncIterable<EncryptionPart>
  /** Whether a job given now would start at once (a worker free, nothing waiting). */
  free? (): boolean
  /** A large file is on its way (its body is being read): get a worker ready for it. */
  expectLarge? (): void
}

/** Encryption on the calling thread (the CLI, tests, and `ingest.encryptionWorkers: 0`). */
export function inThreadEncryptor (opts: EncryptOptions = {}): Encryptor {
  return {
    encrypt: (plaintext, passwordHex) => encryptEnvelopeBytes(plaintext, passwordHex, opts),
    encryptChunks: (plaintext, passwordHex) => encryptEnvelopeChunks(plaintext, passwordHex, { ...opts, pieceBytes: CHUNK_SIZE })
  }
}

export interface EncryptionWorkersOptions {
  /** Worker threads at most. */
  size: number
  /** Files waiting for a worker at most (beyond those being encrypted). */
  maxQueued: number
  /** The largest plaintext a worker takes. */
  maxFileBytes: number
  logger?: Logger
  /** The worker module; tests give one that misbehaves. */
  script?: URL
}

/** The encryption workers, a service for the composition root to start and stop. */
export function createEncryptionWorkers (opts: EncryptionWorkersOptions): WorkerPool {
  const self = import.meta.url
  const script = opts.script ?? new URL(`./encryption-worker${self.endsWith('.ts') ? '.ts' : '.js'}`, self)
  return createWorkerPool({ name: 'encryptionWorkers', script, size: opts.size, maxQueued: opts.maxQueued, maxJobBytes: opts.maxFileBytes, logger: opts.logger })
}

/** Below this many bytes `workerEncryptor` encrypts whole messages in-thread (the hand-over would cost more). */
export const DEFAULT_MIN_WORKER_BYTES = 64 * 1024

/**
 * Encryption on the pool's workers; the plaintext is copied to the worker, the ciphertext moved
 * back. Whole messages under `minWorkerBytes` stay in-thread (0: every message goes to a worker).
 */
export function workerEncryptor (pool: WorkerPool, opts: EncryptOptions & { minWorkerBytes?: number } = {}): Encryptor {
  const inThread = inThreadEncryptor(opts.s2k !== undefined ? { s2k: opts.s2k } : {})
  const minWorkerBytes = opts.minWorkerBytes ?? DEFAULT_MIN_WORKER_BYTES
  const job = <Part>(op: EncryptionJob['op'], plaintext: Uint8Array, passwordHex: string, arrival?: Int32Array, signal?: AbortSignal): AsyncIterable<Part> => {
    if (!(plaintext instanceof Uint8Array)) throw new HearthError('INVALID_ARGUMENT', 'plaintext must be a Uint8Array')
    const input: EncryptionJob = { op, plaintext, passwordHex, pieceBytes: CHUNK_SIZE, ...(opts.s2k !== undefined ? { s2k: opts.s2k } : {}), ...(arrival !== undefined ? { arrival } : {}) }
    return pool.run<Part>(input, { bytes: plaintext.byteLength, ...(signal !== undefined ? { signal } : {}) })
  }
  return {
    async encrypt (plaintext, passwordHex) {
      if (plaintext.byteLength < minWorkerBytes) return await inThread.encrypt(plaintext, passwordHex)
      // read to the job's end, so it is counted finished, not cancelled by a consumer that left
      let message: Uint8Array | undefined
      for await (const part of job<Uint8Array>('whole', plaintext, passwordHex)) message ??= part
      if (message === undefined) throw new HearthError('INTERNAL', 'the encryption worker answered nothing')
      return message
    },
    encryptChunks: (plaintext, passwordHex) => job<EncryptionPart>('chunks', plaintext, passwordHex),
    encryptArriving: (plaintext, passwordHex, arrival, signal) => job<EncryptionPart>('chunks', plaintext, passwordHex, arrival, signal),
    free: () => pool.free(),
    expectLarge: () => { pool.warm() }
  }
}

/** Room for the envelope around the largest body or file, in the workers' job limit. */
const ENVELOPE_ALLOWANCE = 64 * 1024
/** Files waiting for an encryption worker at most; one more is WORKERS_BUSY. */
const ENCRYPTION_QUEUE = 32

/**
 * Large request bodies being handled at once, in bytes: each costs about five times its size in
 * memory until it is stored (body, parsed data, envelope, ciphertext pieces, OpenPGP's buffers),
 * so 32 MiB bounds that at roughly 160 MB. Two cores gain nothing from more at once.
 */
export const LARGE_BODIES_IN_FLIGHT_BYTES = 32 * 1024 * 1024
/** Large requests waiting for room at most; one more is WORKERS_BUSY. */
const LARGE_BODIES_WAITING = 64

/**
 * What the composition root wires: the workers `ingest.encryptionWorkers` asks for as a service
 * (its status includes the large-body budget's), the Encryptor the pipeline uses (in-thread when
 * there are none), and the budget large request bodies wait in before they are read.
 */
export function encryptionFor (settings: { workers: number; maxFileBytes: number; logger?: Logger }): { service: Service; encryptor: Encryptor; admission: ByteBudget } {
  const admission = createByteBudget({ name: 'large bodies', limitBytes: LARGE_BODIES_IN_FLIGHT_BYTES, maxWaiting: LARGE_BODIES_WAITING })
  if (settings.workers === 0) {
    return { service: service('encryptionWorkers', { status: async () => ({ workers: 0, largeBodies: admission.status() }) }), encryptor: inThreadEncryptor(), admission }
  }
  const pool = createEncryptionWorkers({ size: settings.workers, maxQueued: ENCRYPTION_QUEUE, maxFileBytes: settings.maxFileBytes + ENVELOPE_ALLOWANCE, logger: settings.logger })
  const withBudget: Service = { name: pool.name, start: async () => { await pool.start() }, stop: async () => { await pool.stop() }, status: async () => ({ ...await pool.status(), largeBodies: admission.status() }) }
  return { service: withBudget, encryptor: workerEncryptor(pool), admission }
}
