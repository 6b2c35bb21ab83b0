// The encryption worker thread's module, started by encryptor.ts through the worker pool.
import { serveWorkerJobs } from '../lifecycle/worker-job.js'
import { runEncryptionJob } from './encryption-job.js'

serveWorkerJobs(runEncryptionJob)
