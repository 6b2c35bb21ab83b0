// Structured JSON logs (pino). Secrets are redacted by path so a careless log call cannot leak them.
import { pino, type Logger, type DestinationStream } from 'pino'

export type { Logger }

export const REDACT_PATHS = [
  'signature', 'masterKey', 'privateKey', 'mnemonic', 'token', 'password', 'scopeKey',
  '*.signature', '*.masterKey', '*.privateKey', '*.mnemonic', '*.token', '*.password', '*.scopeKey',
  'headers.authorization', '*.headers.authorization', 'req.headers.authorization'
]

export function createLogger (opts: { level?: string; name?: string; destination?: DestinationStream } = {}): Logger {
  return pino({
    name: opts.name ?? 'hearth',
    level: opts.level ?? process.env.HEARTH_LOG_LEVEL ?? 'info',
    redact: { paths: REDACT_PATHS, censor: '[redacted]' }
  }, opts.destination ?? pino.destination(2))
}

/** A logger that drops everything, for tests and library use. */
export function silentLogger (): Logger {
  return pino({ level: 'silent' })
}
