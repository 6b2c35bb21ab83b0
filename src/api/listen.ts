// The `host:port` of a listener's config key (`ui.listen`, `builders.listen`, `mcp.listen`).
import { HearthError } from '../errors.js'

/** `host:port` (IPv6 in brackets) → its parts; CONFIG_INVALID naming `configKey` otherwise. */
export function parseListen (value: string, configKey: string): { host: string; port: number } {
  const m = /^(?:\[([0-9a-fA-F:.]+)\]|([^:\s[\]]+)):(\d{1,5})$/.exec(value.trim())
  const port = m === null ? NaN : Number(m[3])
  if (m === null || port > 65535) throw new HearthError('CONFIG_INVALID', `${configKey} must be host:port (e.g. 127.0.0.1:8470), got ${JSON.stringify(value.slice(0, 80))}`, { key: configKey })
  return { host: m[1] ?? m[2]!, port }
}
