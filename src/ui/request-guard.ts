// What the dashboard listener checks before anything else (pure): the Host header must name this
// listener by a loopback name (a DNS-rebinding page reaches us under its own host name), and an
// Origin, when a browser sends one, must be this listener too. Requests that change state must
// carry a matching Origin (cross-site request forgery; browsers always send it on such fetches).
import { HearthError } from '../errors.js'

const LOOPBACK_NAMES = ['localhost', '127.0.0.1', '[::1]']
const SAFE_METHODS = new Set(['GET', 'HEAD'])

/** The `host:port` values that address this listener. */
export function allowedHosts (boundHost: string, port: number): Set<string> {
  const names = new Set(LOOPBACK_NAMES)
  names.add(boundHost.includes(':') && !boundHost.startsWith('[') ? `[${boundHost}]` : boundHost)
  const hosts = new Set<string>()
  for (const name of names) {
    hosts.add(`${name}:${port}`)
    if (port === 80) hosts.add(name)
  }
  return hosts
}

export function isSafeMethod (method: string): boolean {
  return SAFE_METHODS.has(method)
}

/** Null when the request may go on; otherwise the error to answer with. */
export function checkRequestOrigin (req: { method: string; host: string | undefined; origin: string | undefined }, hosts: ReadonlySet<string>): HearthError | null {
  const host = req.host?.toLowerCase()
  if (host === undefined || !hosts.has(host)) {
    return new HearthError('HOST_NOT_ALLOWED', `the dashboard answers only to a loopback address (Host ${JSON.stringify(req.host ?? null)} is not one of its names)`)
  }
  if (req.origin === undefined) {
    if (isSafeMethod(req.method)) return null
    return new HearthError('ORIGIN_NOT_ALLOWED', `${req.method} requests to the dashboard must come from the dashboard page (no Origin header)`)
  }
  const origin = req.origin.toLowerCase()
  if (!origin.startsWith('http://') || !hosts.has(origin.slice('http://'.length))) {
    return new HearthError('ORIGIN_NOT_ALLOWED', `requests from ${JSON.stringify(req.origin.slice(0, 200))} are not allowed; only the dashboard page itself may call it`)
  }
  return null
}
