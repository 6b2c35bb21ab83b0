// Which headers cross the proxy. Pure. Hop-by-hop headers (RFC 9110 7.6.1) belong to one
// connection; the app's own credentials (authorization, cookie) are for the daemon, never the
// upstream; the upstream's cookies are not the app's business either.
import type { IncomingHttpHeaders, OutgoingHttpHeaders } from 'node:http'

const HOP_BY_HOP = new Set([
  'connection', 'keep-alive', 'proxy-authenticate', 'proxy-authorization', 'proxy-connection',
  'te', 'trailer', 'transfer-encoding', 'upgrade'
])

const NEVER_UPSTREAM = new Set(['host', 'authorization', 'cookie', 'content-length', 'expect', 'accept-encoding'])
const NEVER_DOWNSTREAM = new Set(['set-cookie', 'content-length'])

/** Headers named by the Connection header are hop-by-hop too. */
function connectionTokens (headers: IncomingHttpHeaders): Set<string> {
  const raw = headers.connection
  const out = new Set<string>()
  if (typeof raw === 'string') for (const t of raw.split(',')) out.add(t.trim().toLowerCase())
  return out
}

function filter (headers: IncomingHttpHeaders, drop: Set<string>): OutgoingHttpHeaders {
  const extra = connectionTokens(headers)
  const out: OutgoingHttpHeaders = {}
  for (const [name, value] of Object.entries(headers)) {
    const n = name.toLowerCase()
    if (value === undefined || HOP_BY_HOP.has(n) || drop.has(n) || extra.has(n) || n.startsWith('x-hearth-')) continue
    out[n] = value
  }
  return out
}

/** Request headers to send upstream (the bearer token is added by the caller). */
export function upstreamRequestHeaders (appHeaders: IncomingHttpHeaders): OutgoingHttpHeaders {
  // accept-encoding is dropped so answers arrive as identity: the proxy inspects JSON bodies and
  // forwards stream frames as they come, which a compressed body would prevent.
  return filter(appHeaders, NEVER_UPSTREAM)
}

/** Response headers to pass back to the app (content-length is set by whoever writes the body). */
export function downstreamResponseHeaders (upstreamHeaders: IncomingHttpHeaders): OutgoingHttpHeaders {
  return filter(upstreamHeaders, NEVER_DOWNSTREAM)
}
