// A large POST's encryption started before its body is parsed and validated. The envelope's bytes
// do not depend on the parse when the body is already canonical JSON (envelope-bytes.ts): they are
// the schema's URL, the scope and collectedAt around the body as it came. So the worker encrypts
// while the main thread parses and validates; nothing is stored until validation passed (the
// pieces wait in the pool), and invalid data only costs the worker's time (the job is abandoned).
import { DEFAULT_MAX_JSON_VALUES } from '../protocol/bounded-json.js'
import { canonicalTokenLimit, isCanonicalJson } from '../protocol/canonical-json.js'
import { ENVELOPE_VERSION, serializeEnvelopeWithData, type Envelope } from '../protocol/envelope.js'
import { CHUNK_SIZE } from '../storage/cid.js'
import type { Encryptor } from './encryptor.js'
import type { EncryptionPart } from './encryption-job.js'

/** An encryption already running for the envelope `bytes` of a body stamped `collectedAt`. */
export interface EarlyEncryption {
  definitionUrl: string
  collectedAt: string
  bytes: Uint8Array
  /** The ciphertext pieces, for the one consumer that stores them. */
  pieces: AsyncIterable<Uint8Array | EncryptionPart>
  /** Drops the job when its pieces are not used (a failed validation, a taken file name). */
  cancel (): void
}

const shared = (size: number): Uint8Array => new Uint8Array(new SharedArrayBuffer(size))

/**
 * Starts encrypting the envelope a canonical large body will be stored as; null for any other body.
 * `maxJsonValues` (ingest.maxJsonValues) bounds the canonical check's tokens (canonicalTokenLimit).
 */
export function startEarlyEncryption (encryptor: Encryptor, body: Uint8Array, head: { definitionUrl: string; scope: string; collectedAt: string }, passwordHex: string, maxJsonValues = DEFAULT_MAX_JSON_VALUES): EarlyEncryption | null {
  if (body.byteLength <= CHUNK_SIZE || !isCanonicalJson(body, canonicalTokenLimit(maxJsonValues))) return null
  const env = { $schema: head.definitionUrl, version: ENVELOPE_VERSION, scope: head.scope, collectedAt: head.collectedAt } as Envelope
  const bytes = serializeEnvelopeWithData(env, body, shared)
  const it = encryptor.encryptChunks(bytes, passwordHex)[Symbol.asyncIterator]()
  // asking for the first piece is what queues the job; its failure is met by the consumer
  const first = it.next()
  first.catch(() => {})
  let taken = false
  return {
    definitionUrl: head.definitionUrl,
    collectedAt: head.collectedAt,
    bytes,
    pieces: {
      [Symbol.asyncIterator]: () => {
        if (taken) throw new Error('the early encryption\'s pieces are read once')
        taken = true
        return (async function * () {
          try {
            for (let r = await first; r.done !== true; r = await it.next()) yield r.value
          } finally {
            // a consumer that stopped early (a failed store) releases the job's pieces now
            await it.return?.()
          }
        })()
      }
    },
    cancel () {
      if (taken) return
      taken = true
      void first.then(async () => await it.return?.(), () => {}).catch(() => {})
    }
  }
}
