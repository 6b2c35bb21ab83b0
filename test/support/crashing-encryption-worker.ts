// An encryption worker that dies mid-job when the plaintext contains CRASH_MARKER (after handing
// over its first piece), and otherwise encrypts like the real one: for the worker-crash tests.
import { serveWorkerJobs } from '../../src/lifecycle/worker-job.js'
import { runEncryptionJob, type EncryptionJob } from '../../src/ingest/encryption-job.js'

const CRASH_MARKER = 'crash-the-encryption-worker'

serveWorkerJobs(async function * (input) {
  const crash = Buffer.from((input as EncryptionJob).plaintext).includes(CRASH_MARKER)
  for await (const part of runEncryptionJob(input)) {
    yield part
    if (crash) process.exit(7)
  }
})
