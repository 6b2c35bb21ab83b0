// A worker module for the worker-pool tests: each job's `mode` says how it behaves.
import { serveWorkerJobs } from '../../src/lifecycle/worker-job.js'
import { HearthError } from '../../src/errors.js'

interface TestJob { mode: 'echo' | 'fail' | 'fail-plain' | 'exit' | 'throw-async' | 'sleep' | 'endless' | 'lockstep' | 'taken'; parts?: unknown[]; ms?: number; signal?: Int32Array }

serveWorkerJobs(async function * (input, ctx) {
  const job = input as TestJob
  switch (job.mode) {
    case 'echo':
      for (const value of job.parts ?? []) yield { value }
      return
    case 'fail':
      throw new HearthError('INVALID_ARGUMENT', 'this job is refused', { why: 'test' })
    case 'fail-plain':
      throw new Error('a plain error')
    case 'exit':
      yield { value: 'before the end' }
      await new Promise((resolve) => setTimeout(resolve, 20))
      process.exit(3)
      break
    case 'throw-async':
      yield { value: 'before the crash' }
      setTimeout(() => { throw new Error('uncaught in the worker') }, 20)
      await new Promise(() => {})
      break
    case 'endless': // parts until the pool cancels the job
      for (let i = 0; ; i++) {
        await new Promise((resolve) => setImmediate(resolve))
        yield { value: i }
      }
    case 'lockstep': // each part once the consumer has taken the one before (or a failure after 5 s)
      for (let i = 0; i < 4; i++) {
        for (let waited = 0; ctx.taken() < i; waited++) {
          if (waited > 5000) throw new Error(`the consumer never took part ${i - 1}`)
          await new Promise((resolve) => setTimeout(resolve, 1))
        }
        yield { value: i }
      }
      return
    case 'taken': // how many of its parts the consumer took, once the test sets `signal[0]` (or a failure after 10 s)
      for (let waited = 0; Atomics.load(job.signal!, 0) === 0; waited++) {
        if (waited > 10_000) throw new Error('the test never signalled')
        await new Promise((resolve) => setTimeout(resolve, 1))
      }
      yield { value: ctx.taken() }
      return
    case 'sleep':
      await new Promise((resolve) => setTimeout(resolve, job.ms ?? 200))
      yield { value: 'slept' }
  }
})
