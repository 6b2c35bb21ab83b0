// The decryption worker thread's module, started through the worker pool of decryptor.ts.
import { serveWorkerJobs } from '../lifecycle/worker-job.js'
import { parseEnvelopeBytes } from '../protocol/envelope.js'
import { decryptReceived, type DecryptJob, type DecryptedFile } from './decryptor.js'

serveWorkerJobs(async function * (input) {
  const { ciphertext, passwordHex, maxJsonValues } = input as DecryptJob
  const { plaintext, sha256 } = await decryptReceived(ciphertext, passwordHex)
  // a plaintext that does not parse fails the job with the parse's own error (INVALID_JSON, …)
  const envelope = parseEnvelopeBytes(plaintext, maxJsonValues !== undefined ? { maxValues: maxJsonValues } : {})
  // moved, not copied, unless it is a view into a buffer shared with something else
  const own = plaintext.byteOffset === 0 && plaintext.byteLength === plaintext.buffer.byteLength ? plaintext : plaintext.slice()
  const value: DecryptedFile = { plaintext: own, sha256, envelope }
  yield { value, transfer: [own.buffer as ArrayBuffer] }
})
