// The bytes a POST's envelope is stored as. For a body already in the form JSON.stringify writes
// (what nearly every client sends), the body itself becomes the envelope's `data` instead of being
// serialised again: the same bytes serializeEnvelope would give, without a stringify and UTF-8
// encoding of the data on the main thread (10 MB for a large POST; for a 1 KB one a microsecond
// and a copy of it as a string less). A large file's bytes are put in shared memory either way
// (built around the body or serialised again), so the encryption worker reads them where they are
// instead of receiving a copy (a 10 MB postMessage copy costs the main thread 25 ms or more); a
// small file's stay in ordinary memory, like serializeEnvelope's.
import { DEFAULT_MAX_JSON_VALUES } from '../protocol/bounded-json.js'
import { canonicalTokenLimit, isCanonicalJson } from '../protocol/canonical-json.js'
import { serializeEnvelope, serializeEnvelopeWithData, type Envelope } from '../protocol/envelope.js'
import { CHUNK_SIZE } from '../storage/cid.js'

/** Bodies over one storage chunk are the streamed, worker-encrypted files. */
const SHARED_MIN_BYTES = CHUNK_SIZE + 1

const shared = (size: number): Uint8Array => new Uint8Array(new SharedArrayBuffer(size))

/** How to serialise envelopes of the data this body (the request's JSON text, parsed already within `maxJsonValues`) holds. */
export function envelopeSerializer (body?: Uint8Array, maxJsonValues = DEFAULT_MAX_JSON_VALUES): (env: Envelope) => Uint8Array {
  if (body === undefined) return serializeEnvelope
  const large = body.byteLength >= SHARED_MIN_BYTES
  if (!isCanonicalJson(body, canonicalTokenLimit(maxJsonValues))) return large ? (env) => serializeEnvelope(env, shared) : serializeEnvelope
  if (!large) return (env) => serializeEnvelopeWithData(env, body)
  return (env) => serializeEnvelopeWithData(env, body, shared)
}
