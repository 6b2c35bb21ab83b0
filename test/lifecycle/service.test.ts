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

/** A part whose start finishes only once `release` is called (and says it began). */
function held (log: string[], name: string, opts: { failStart?: boolean } = {}): { part: Service; began: Promise<void>; release: () => void } {
  let release = (): void => {}
  let began = (): void => {}
  const releasing = new Promise<void>((resolve) => { release = resolve })
  const beginning = new Promise<void>((resolve) => { began = resolve })
  const part = service(name, {
    async start () {
      log.push(`start ${name}`)
      began()
      await releasing
      if (opts.failStart === true) throw new Error(`${name} cannot start`)
    },
    async stop () { log.push(`stop ${name}`) }
  })
  return { part, began: beginning, release }
}

test('services started together start side by side, are kept in the order given and stop in reverse', async () => {
  const log: string[] = []
  const stack = new ServiceStack(silentLogger())
  await stack.start(service('home', { async start () { log.push('start home') }, async stop () { log.push('stop home') } }))
  const database = held(log, 'database')
  const storage = held(log, 'storage')
  const together = stack.startTogether(database.part, storage.part)
  // storage begins before database has finished: one after another, this would wait forever
  await Promise.all([database.began, storage.began])
  assert.deepEqual(stack.progress(), { started: ['home'], starting: 'database, storage' })
  storage.release()
  database.release()
  assert.deepEqual((await together).map((s) => s.name), ['database', 'storage'])
  assert.deepEqual(stack.progress(), { started: ['home', 'database', 'storage'], starting: null })
  await stack.stopAll()
  assert.deepEqual(log.filter((l) => l.startsWith('stop')), ['stop storage', 'stop database', 'stop home'])
})

test('when one of the services started together fails, the others finish starting and every one is stopped', async () => {
  const log: string[] = []
  const stack = new ServiceStack(silentLogger())
  const database = held(log, 'database', { failStart: true })
  const storage = held(log, 'storage')
  const together = stack.startTogether(database.part, storage.part)
  database.release()
  await new Promise((resolve) => setTimeout(resolve, 10))
  assert.ok(!log.includes('stop storage'), 'storage is not stopped while it still starts')
  storage.release()
  await assert.rejects(together, /database cannot start/)
  assert.deepEqual(log.filter((l) => l.startsWith('stop')).sort(), ['stop database', 'stop storage'])
  assert.deepEqual(stack.services, [])
})

test('stopAll during a start side by side waits for every one of them and stops them all', async () => {
  const log: string[] = []
  const stack = new ServiceStack(silentLogger())
  const database = held(log, 'database')
  const storage = held(log, 'storage')
  const together = stack.startTogether(database.part, storage.part)
  database.release()
  const stopping = stack.stopAll()
  let stopped = false
  void stopping.then(() => { stopped = true })
  await new Promise((resolve) => setTimeout(resolve, 10))
  assert.equal(stopped, false, 'stopAll waits for storage, still starting')
  storage.release()
  await assert.rejects(together, (err: unknown) => (err as { code?: string }).code === 'DAEMON_STOPPED')
  await stopping
  assert.deepEqual(log.filter((l) => l.startsWith('stop')).sort(), ['stop database', 'stop storage'])
  await assert.rejects(stack.startTogether(held(log, 'later').part), /the daemon is stopping/)
})
