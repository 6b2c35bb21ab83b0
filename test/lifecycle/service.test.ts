import test from 'node:test'
import assert from 'node:assert/strict'
import { ServiceStack, beginBackground, service, type Service } from '../../src/lifecycle/service.js'
import { silentLogger } from '../../src/log.js'

function recorder (): { log: string[]; part: (name: string, opts?: { failStart?: boolean; failStop?: boolean; status?: unknown }) => Service } {
  const log: string[] = []
  return {
    log,
    part: (name, opts = {}) => service(name, {
      async start () {
        log.push(`start ${name}`)
        if (opts.failStart === true) throw new Error(`${name} cannot start`)
      },
      async stop () {
        log.push(`stop ${name}`)
        if (opts.failStop === true) throw new Error(`${name} cannot stop`)
      },
      async status () { return opts.status }
    })
  }
}

test('services start in order and stop in reverse', async () => {
  const { log, part } = recorder()
  const stack = new ServiceStack(silentLogger())
  for (const name of ['a', 'b', 'c']) await stack.start(part(name))
  assert.deepEqual(stack.services.map((s) => s.name), ['a', 'b', 'c'])
  await stack.stopAll()
  assert.deepEqual(log, ['start a', 'start b', 'start c', 'stop c', 'stop b', 'stop a'])
  await stack.stopAll() // nothing left to stop
  assert.equal(log.length, 6)
})

test('a service that fails to start is stopped itself, and stopAll stops what started before it', async () => {
  const { log, part } = recorder()
  const stack = new ServiceStack(silentLogger())
  await assert.rejects(async () => {
    try {
      await stack.start(part('lock'))
      await stack.start(part('database'))
      await stack.start(part('listener', { failStart: true }))
      await stack.start(part('never'))
    } catch (err) {
      await stack.stopAll()
      throw err
    }
  }, /listener cannot start/)
  assert.deepEqual(log, ['start lock', 'start database', 'start listener', 'stop listener', 'stop database', 'stop lock'])
})

test('a stop that fails does not keep the others running', async () => {
  const { log, part } = recorder()
  const stack = new ServiceStack(silentLogger())
  await stack.start(part('a'))
  await stack.start(part('b', { failStop: true }))
  await stack.start(part('c'))
  await stack.stopAll()
  assert.deepEqual(log.filter((l) => l.startsWith('stop')), ['stop c', 'stop b', 'stop a'])
})

test('status collects the reports of started services by name, skipping those with none', async () => {
  const { part } = recorder()
  const stack = new ServiceStack(silentLogger())
  await stack.start(part('lock'))
  await stack.start(part('storage', { status: { ok: true } }))
  await stack.start({ name: 'broken', start: async () => {}, stop: async () => {}, status: async () => { throw new Error('no answer') } })
  await stack.start(part('sync', { status: { enabled: false } }))
  assert.deepEqual(await stack.status(), { storage: { ok: true }, broken: { error: 'no answer' }, sync: { enabled: false } })
  assert.deepEqual(Object.keys(await stack.status()), ['storage', 'broken', 'sync'])
})

test('background work begins at once without a gate, once its gate resolves with one, never when stopped before or when the gate never resolves', async () => {
  const begun: string[] = []
  beginBackground(undefined, () => false, () => { begun.push('ungated') })
  assert.deepEqual(begun, ['ungated'], 'at once')
  let open = (): void => {}
  const gate = new Promise<void>((resolve) => { open = resolve })
  let stopped = false
  beginBackground(gate, () => false, () => { begun.push('gated') })
  beginBackground(gate, () => stopped, () => { begun.push('stopped meanwhile') })
  beginBackground(new Promise<void>(() => {}), () => false, () => { begun.push('never') })
  await new Promise((resolve) => setTimeout(resolve, 20))
  assert.deepEqual(begun, ['ungated'], 'nothing gated begins before its gate')
  stopped = true
  open()
  await gate
  await new Promise((resolve) => setImmediate(resolve))
  assert.deepEqual(begun, ['ungated', 'gated'])
})
