// The decryption worker thread's module, started through the worker pool of decryptor.ts.
import { serveWorkerJobs } from '../lifecycle/worker-job.js'
import { decryptReceived, type DecryptJob } from './decryptor.js'

serveWorkerJobs(async function * (input) {
  const { ciphertext, passwordHex } = input as DecryptJob
  const { plaintext, sha256 } = await decryptReceived(ciphertext, passwordHex)
  // moved, not copied, unless it is a view into a buffer shared with something else
  const own = plaintext.byteOffset === 0 && plaintext.byteLength === plaintext.buffer.byteLength ? plaintext : plaintext.slice()
  yield { value: { plaintext: own, sha256 }, transfer: [own.buffer as ArrayBuffer] }
})
