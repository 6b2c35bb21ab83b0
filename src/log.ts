// Logs (pino). Secrets are redacted by path, and every line is scrubbed of credentials written
// inside text (a URL's ?token=, a Bearer value, a cookie: log-redact.ts), so a careless log
// call cannot leak them. On a
// terminal they are readable lines (pino-pretty, in-process and synchronous); anywhere else
// (systemd's journal, a file, a pipe) one JSON object a line, for machines.
import { createRequire } from 'node:module'
import { pino, type Logger, type DestinationStream } from 'pino'
import type { PinoPretty } from 'pino-pretty'
import { Writable } from 'node:stream'
import { resilientDestination } from './log-destination.js'
import { redactSecrets } from './log-redact.js'

// pino-pretty is loaded only for a terminal: a daemon under systemd writes JSON and never needs it
const requirePretty = (): typeof PinoPretty => (createRequire(import.meta.url)('pino-pretty') as { PinoPretty: typeof PinoPretty }).PinoPretty

export type { Logger }

export type LogFormat = 'auto' | 'pretty' | 'json'

export const REDACT_PATHS = [
  'signature', 'masterKey', 'privateKey', 'mnemonic', 'token', 'password', 'scopeKey',
  '*.signature', '*.masterKey', '*.privateKey', '*.mnemonic', '*.token', '*.password', '*.scopeKey',
  'headers.authorization', '*.headers.authorization', 'req.headers.authorization',
  'headers.cookie', '*.headers.cookie', 'req.headers.cookie', 'headers["set-cookie"]', '*.headers["set-cookie"]'
]

/** `destination` behind a scrub of every line (synchronous, like the destination itself). */
function scrubbed (destination: DestinationStream): Writable {
  return new Writable({
    write (chunk: Buffer | string, _encoding, callback) {
      destination.write(redactSecrets(chunk.toString()))
      callback()
    }
  })
}

export interface LoggerOptions {
  level?: string
  name?: string
  /** Where lines go; default stderr (fd 2). */
  destination?: DestinationStream
  /** auto (default): pretty when `isTTY`, JSON otherwise. */
  format?: LogFormat
  /** Whether the reader is a terminal; default: stderr, where the lines go, is one (stdout is the commands' own). */
  isTTY?: boolean
}

export function createLogger (opts: LoggerOptions = {}): Logger {
  const format = opts.format ?? 'auto'
  const isTTY = opts.isTTY ?? (opts.destination === undefined && process.stderr.isTTY === true)
  const pretty = format === 'pretty' || (format === 'auto' && isTTY)
  // never pino.destination: it retries a failed write forever (stderr on a full disk froze the daemon)
  const destination = scrubbed(opts.destination ?? resilientDestination(2))
  const options = {
    name: opts.name ?? 'hearth',
    level: opts.level ?? process.env.HEARTH_LOG_LEVEL ?? 'info',
    redact: { paths: REDACT_PATHS, censor: '[redacted]' }
  }
  if (!pretty) return pino(options, destination)
  return pino(options, requirePretty()({
    destination,
    colorize: isTTY && opts.destination === undefined,
    translateTime: 'SYS:HH:MM:ss.l',
    ignore: 'pid,hostname,name',
    singleLine: true,
    sync: true
  }))
}

/** A logger that drops everything, for tests and library use. */
export function silentLogger (): Logger {
  return pino({ level: 'silent' })
}
