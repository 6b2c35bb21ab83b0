// Logs: readable lines on a terminal, JSON lines anywhere else or when asked; secrets redacted in both.
import assert from 'node:assert/strict'
import { Writable } from 'node:stream'
import { test } from 'node:test'
import { createLogger, type LogFormat } from '../src/log.js'

function capture (): { stream: Writable, text: () => string } {
  let out = ''
  const stream = new Writable({ write (chunk, _enc, done) { out += chunk.toString(); done() } })
  return { stream, text: () => out }
}

function logOnce (format: LogFormat, isTTY: boolean): string {
  const sink = capture()
  const logger = createLogger({ level: 'info', format, isTTY, destination: sink.stream as never })
  logger.info({ peer: 'p1', token: 'secret-token' }, 'sync peer connected')
  logger.debug('routine detail')
  return sink.text()
}

test('auto: pino-pretty lines on a terminal, JSON otherwise; either can be forced', () => {
  for (const [format, isTTY, pretty] of [['auto', true, true], ['auto', false, false], ['pretty', false, true], ['json', true, false]] as const) {
    const out = logOnce(format, isTTY)
    assert.equal(out.trim().split('\n').length, 1, `${format}/${String(isTTY)}: one line, debug dropped at info`)
    assert.ok(!out.includes('secret-token'), 'redacted')
    if (pretty) {
      assert.throws(() => JSON.parse(out))
      assert.match(out, /^\[\d\d:\d\d:\d\d\.\d{3}\] INFO: sync peer connected/)
      assert.match(out, /"peer":"p1"/)
    } else {
      const line = JSON.parse(out)
      assert.equal(line.msg, 'sync peer connected')
      assert.equal(line.token, '[redacted]')
    }
  }
})
