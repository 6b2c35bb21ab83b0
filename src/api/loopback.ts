// The TCP listeners are for this machine only. A host is checked by what it resolves to, not by
// how it is spelled: `localhost` is fine, `0` (which resolves to 0.0.0.0, every interface) is not,
// and a name that does not resolve (`127.0.0.1.`) is a configuration error, not an INTERNAL one.
import { lookup as dnsLookup } from 'node:dns/promises'
import { isIP } from 'node:net'
import { HearthError } from '../errors.js'

export type HostLookup = (host: string) => Promise<Array<{ address: string }>>

const systemLookup: HostLookup = async (host) => await dnsLookup(host, { all: true, verbatim: true })

export function isLoopbackAddress (address: string): boolean {
  if (isIP(address) === 4) return address.startsWith('127.')
  const lower = address.toLowerCase()
  return lower === '::1' || (lower.startsWith('::ffff:') && isIP(lower.slice(7)) === 4 && lower.slice(7).startsWith('127.'))
}

/** The address to bind for `host`: every address it resolves to must be loopback (else CONFIG_INVALID naming `configKey`). */
export async function resolveLoopback (host: string, configKey: string, lookup: HostLookup = systemLookup): Promise<string> {
  const shown = JSON.stringify(host.slice(0, 80))
  if (host.length === 0 || host.length > 253 || /[\s\x00-\x1f\x7f/]/.test(host)) {
    throw new HearthError('CONFIG_INVALID', `${configKey} ${shown} is not a host name or IP address`, { key: configKey })
  }
  let addresses: string[]
  if (isIP(host) !== 0) {
    addresses = [host]
  } else {
    try {
      addresses = (await lookup(host)).map((a) => a.address)
    } catch (err) {
      throw new HearthError('CONFIG_INVALID', `${configKey} ${shown} does not resolve (${(err as NodeJS.ErrnoException).code ?? 'lookup failed'}); use a loopback address such as 127.0.0.1 or ::1`, { key: configKey })
    }
  }
  const outside = addresses.filter((a) => !isLoopbackAddress(a))
  if (addresses.length === 0 || outside.length > 0) {
    throw new HearthError('CONFIG_INVALID', `${configKey} must be a loopback address; ${shown} resolves to ${addresses.join(', ') || 'nothing'}`, { key: configKey, addresses })
  }
  return addresses[0]!
}
