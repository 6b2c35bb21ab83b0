import test from 'node:test'
import assert from 'node:assert/strict'
import { Writable } from 'node:stream'
import { pino } from 'pino'
import type { Logger } from '../../src/log.js'
import { createEventHub } from '../../src/lifecycle/event-hub.js'
import { silentLogger } from '../../src/log.js'

interface Events { 'file.stored': { path: string }; 'scope.deleted': { scope: string } }

function capturingLogger (): { logger: Logger; lines: () => Array<Record<string, unknown>> } {
  const chunks: string[] = []
  const sink = new Writable({ write (chunk, _enc, done) { chunks.push(String(chunk)); done() } })
  return { logger: pino({ level: 'error' }, sink) as Logger, lines: () => chunks.join('').split('\n').filter((l) => l !== '').map((l) => JSON.parse(l) as Record<string, unknown>) }
}

test('events reach every listener synchronously, in subscription order, with their payload', () => {
  const hub = createEventHub<Events>(silentLogger())
  const seen: string[] = []
  hub.on('file.stored', (p) => { seen.push(`first ${p.path}`) })
  hub.on('file.stored', (p) => { seen.push(`second ${p.path}`) })
  hub.on('scope.deleted', (p) => { seen.push(`deleted ${p.scope}`) })
  hub.emit('file.stored', { path: 'a/1.json' })
  assert.deepEqual(seen, ['first a/1.json', 'second a/1.json'])
  hub.emit('scope.deleted', { scope: 'a' })
  assert.deepEqual(seen.at(-1), 'deleted a')
})

test('an event nobody listens to is dropped, and unsubscribing stops delivery', () => {
  const hub = createEventHub<Events>(silentLogger())
  hub.emit('file.stored', { path: 'x' })
  let count = 0
  const off = hub.on('file.stored', () => { count++ })
  const fn = (): void => { count += 10 }
  const offTwice = hub.on('file.stored', fn)
  hub.on('file.stored', fn)
  assert.equal(hub.listenerCount('file.stored'), 3)
  hub.emit('file.stored', { path: 'x' })
  assert.equal(count, 21)
  off()
  off()
  offTwice()
  hub.emit('file.stored', { path: 'x' })
  assert.equal(count, 31, 'the same function subscribed twice is unsubscribed once')
  assert.equal(hub.listenerCount('file.stored'), 1)
})

test('a listener that throws or rejects is logged and does not reach the emitter or the others', async () => {
  const { logger, lines } = capturingLogger()
  const hub = createEventHub<Events>(logger)
  const seen: string[] = []
  hub.on('file.stored', () => { throw new Error('sync failure') })
  hub.on('file.stored', async () => { throw new Error('async failure') })
  hub.on('file.stored', (p) => { seen.push(p.path) })
  assert.doesNotThrow(() => hub.emit('file.stored', { path: 'a' }))
  assert.deepEqual(seen, ['a'])
  await new Promise((resolve) => setImmediate(resolve))
  const logged = lines()
  assert.equal(logged.length, 2)
  for (const line of logged) assert.equal(line.event, 'file.stored')
  assert.deepEqual(logged.map((l) => (l.err as { message: string }).message).sort(), ['async failure', 'sync failure'])
})

test('a listener that subscribes or unsubscribes during an emit does not change that round', () => {
  const hub = createEventHub<Events>(silentLogger())
  const seen: string[] = []
  let offB = (): void => {}
  hub.on('file.stored', () => {
    seen.push('a')
    offB()
    hub.on('file.stored', () => { seen.push('late') })
  })
  offB = hub.on('file.stored', () => { seen.push('b') })
  hub.emit('file.stored', { path: 'x' })
  assert.deepEqual(seen, ['a', 'b'])
})
