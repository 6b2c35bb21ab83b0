// Who decrypts a received file: this thread, or a worker thread. A peer's 10 MB file costs the
// receiving main thread more in OpenPGP (AES-CFB, the MDC's SHA-1, its buffer copies) and in the
// plaintext's SHA-256 than anything else but the transport, so the sync service hands large files
// to a worker as soon as they are read off the stream (src/sync/pull-page.ts), and the receive
// finds the plaintext ready when their turn comes: the worker also parses it (bounded JSON, the
// envelope checked) and hands the envelope back, which costs this thread a structured-clone copy
// instead of the parse. Both give the same result, and the same errors.
import { createHash } from 'node:crypto'
import { HearthError, isHearthError } from '../errors.js'
import { createWorkerPool, type WorkerPool } from '../lifecycle/worker-pool.js'
import type { Logger } from '../log.js'
import { decryptEnvelopeBytes } from '../protocol/encryption.js'
import type { Envelope } from '../protocol/envelope.js'

/**
 * A received file's plaintext and its SHA-256 (hex), as its index record wants it; `envelope`:
 * the plaintext parsed (parseEnvelopeBytes with the receiver's limits), when the worker did it.
 */
export interface DecryptedFile { plaintext: Uint8Array; sha256: string; envelope?: Envelope }

/** `maxJsonValues`: the receiver's limit (ingest.maxJsonValues) for the parse. */
export type Decrypt = (ciphertext: Uint8Array, passwordHex: string, opts?: { maxJsonValues?: number }) => Promise<DecryptedFile>

export interface DecryptJob { ciphertext: Uint8Array; passwordHex: string; maxJsonValues?: number }

/** The work itself, on whichever thread runs it. */
export async function decryptReceived (ciphertext: Uint8Array, passwordHex: string): Promise<DecryptedFile> {
  const plaintext = await decryptEnvelopeBytes(ciphertext, passwordHex)
  return { plaintext, sha256: createHash('sha256').update(plaintext).digest('hex') }
}

/** The decryption workers (one is enough: the receiving main thread stays the busier side). */
export function createDecryptionWorkers (opts: { size?: number; maxQueued?: number; logger?: Logger; script?: URL } = {}): WorkerPool {
  const self = import.meta.url
  const script = opts.script ?? new URL(`./decrypt-worker${self.endsWith('.ts') ? '.ts' : '.js'}`, self)
  // received files are in memory already (the sync engine bounds them); the job limit adds nothing
  return createWorkerPool({ name: 'decryptionWorkers', script, size: opts.size ?? 1, maxQueued: opts.maxQueued ?? 256, maxJobBytes: Number.MAX_SAFE_INTEGER, logger: opts.logger })
}

/**
 * Decryption on the pool's worker: the ciphertext is copied to it (the caller still stores it),
 * the plaintext moved back.
 */
export function workerDecrypt (pool: WorkerPool): Decrypt {
  return async (ciphertext, passwordHex, opts = {}) => {
    const job: DecryptJob = { ciphertext, passwordHex, ...(opts.maxJsonValues !== undefined ? { maxJsonValues: opts.maxJsonValues } : {}) }
    let done: DecryptedFile | undefined
    try {
      // read to the job's end, so the worker is free (and the job counted) when this resolves
      for await (const part of pool.run<DecryptedFile>(job, { bytes: ciphertext.byteLength })) done ??= part
    } catch (err) {
      // more files waiting than the queue holds: this one is decrypted here (the receive parses it)
      if (isHearthError(err, 'WORKERS_BUSY')) return await decryptReceived(ciphertext, passwordHex)
      throw err
    }
    if (done === undefined) throw new HearthError('INTERNAL', 'the decryption worker answered nothing')
    return done
  }
}
