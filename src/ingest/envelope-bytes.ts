// The bytes a POST's envelope is stored as. For a large body already in the form JSON.stringify
// writes (what nearly every client sends), the body itself becomes the envelope's `data` instead of
// being serialised again: the same bytes serializeEnvelope would give, without a 10 MB stringify
// and UTF-8 encoding on the main thread. They are put in shared memory, so the encryption worker
// reads them where they are instead of receiving a copy.
import { DEFAULT_MAX_JSON_VALUES } from '../protocol/bounded-json.js'
import { canonicalTokenLimit, isCanonicalJson } from '../protocol/canonical-json.js'
import { serializeEnvelope, serializeEnvelopeWithData, type Envelope } from '../protocol/envelope.js'
import { CHUNK_SIZE } from '../storage/cid.js'

/** Bodies over one storage chunk (the streamed, worker-encrypted files) are checked for canonical form. */
const REUSE_MIN_BYTES = CHUNK_SIZE + 1

const shared = (size: number): Uint8Array => new Uint8Array(new SharedArrayBuffer(size))

/** How to serialise envelopes of the data this body (the request's JSON text, parsed already within `maxJsonValues`) holds. */
export function envelopeSerializer (body?: Uint8Array, maxJsonValues = DEFAULT_MAX_JSON_VALUES): (env: Envelope) => Uint8Array {
  if (body === undefined || body.byteLength < REUSE_MIN_BYTES || !isCanonicalJson(body, canonicalTokenLimit(maxJsonValues))) return serializeEnvelope
  return (env) => serializeEnvelopeWithData(env, body, shared)
}
