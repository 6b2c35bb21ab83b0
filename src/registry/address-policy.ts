// Which network addresses a schema definition may be fetched from. A definitionUrl comes from
// whoever registered the schema (anyone, on a public chain), so by default Hearth never lets one
// reach this machine or its network: loopback, private, link-local, carrier-grade NAT,
// unspecified, multicast and reserved ranges are refused, for IPv4, IPv6 and IPv4-mapped IPv6.
import { BlockList, isIP } from 'node:net'
import { lookup as dnsLookup } from 'node:dns'
import type { LookupFunction } from 'node:net'

const INTERNAL = new BlockList()
for (const [net, prefix] of [
  ['0.0.0.0', 8], ['10.0.0.0', 8], ['100.64.0.0', 10], ['127.0.0.0', 8], ['169.254.0.0', 16], ['172.16.0.0', 12],
  ['192.0.0.0', 24], ['192.0.2.0', 24], ['192.168.0.0', 16], ['198.18.0.0', 15], ['198.51.100.0', 24], ['203.0.113.0', 24],
  ['224.0.0.0', 4], ['240.0.0.0', 4]
] as const) INTERNAL.addSubnet(net, prefix, 'ipv4')
for (const [net, prefix] of [
  ['::', 128], ['::1', 128], ['64:ff9b::', 96], ['100::', 64], ['2001:db8::', 32], ['fc00::', 7], ['fe80::', 10], ['fec0::', 10], ['ff00::', 8]
] as const) INTERNAL.addSubnet(net, prefix, 'ipv6')

/** Whether an IP address is internal (not a public unicast address). */
export function isInternalAddress (address: string): boolean {
  const family = isIP(address)
  if (family === 4) return INTERNAL.check(address, 'ipv4')
  if (family === 6) {
    const mapped = /^::ffff:(\d+\.\d+\.\d+\.\d+)$/i.exec(address)?.[1]
    if (mapped !== undefined) return INTERNAL.check(mapped, 'ipv4')
    return INTERNAL.check(address, 'ipv6')
  }
  return true // not an address at all: never treat it as public
}

export class InternalAddressError extends Error {
  readonly code = 'EINTERNALADDRESS'
  constructor (host: string, address: string) {
    super(`${host} resolves to ${address}, an internal address`)
  }
}

/**
 * A `lookup` for sockets that resolves as usual and fails when any address is internal, so the
 * check holds for the address actually connected to (no DNS-rebinding window).
 */
export const publicOnlyLookup: LookupFunction = (hostname, options, callback) => {
  dnsLookup(hostname, { ...options, all: true }, (err, addresses) => {
    if (err !== null) { callback(err, '', 0); return }
    const internal = addresses.find((a) => isInternalAddress(a.address))
    if (internal !== undefined) { callback(new InternalAddressError(hostname, internal.address) as unknown as NodeJS.ErrnoException, '', 0); return }
    if ((options as { all?: boolean }).all === true) (callback as unknown as (e: null, a: typeof addresses) => void)(null, addresses)
    else callback(null, addresses[0]!.address, addresses[0]!.family)
  })
}
