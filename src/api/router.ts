// The one route table of the daemon. Every route says who may call it (`access`); each listener
// (see server.ts) authenticates its caller and serves only the routes whose access it grants.
//
// Adding a route set (a feature's endpoints):
//
//   export function addThingRoutes (router: Router, deps: ThingDeps): void {
//     router.get('/v1/things/:id', async (req) => ok(await deps.things.get(req.params.id)))   // owner only
//     router.post('/v1/builder/things', handler, { access: ['builder'] })                     // a builder may call it
//     router.get('/v1/ui/things', handler, { access: ['ui-session', 'owner'] })               // dashboard and owner
//   }
//
// `access` names are open strings: a listener defines what its callers hold (server.ts), the
// router only intersects the two. The default is `['owner']`, so a route added without thought
// is never reachable from the builder or dashboard listeners. Matching: exact segments and
// `:param` segments (percent-decoded). Unknown paths are NOT_FOUND, a known path with another
// method is METHOD_NOT_ALLOWED with the allowed methods; both in the one error shape. Paths with
// `.`/`..` segments never reach matching (server.ts refuses them on every listener).
import { HearthError } from '../errors.js'
import type { Handler } from './http.js'

/** Who may call a route: `owner`, `builder`, `ui-session`, `public`, … (defined by the listeners). */
export type Access = string

export const OWNER: readonly Access[] = ['owner']

export interface RouteOptions {
  /** Callers holding any of these may call the route (default `['owner']`). */
  access?: readonly Access[]
}

interface Route { method: string; segments: string[]; handler: Handler; access: readonly Access[] }

export interface Match { handler: Handler; params: Record<string, string>; access: readonly Access[] }

export function splitPath (pathname: string): string[] {
  return pathname.split('/').filter((s) => s.length > 0)
}

export class Router {
  private readonly routes: Route[] = []
  /** Bumped by every `add`: the routes by listener below are rebuilt after one. */
  private generation = 0
  /** The routes a listener serves (by its `serves` list), by segment count, in table order: a request looks only at those. */
  private readonly served = new WeakMap<readonly Access[], { generation: number; bySize: Map<number, Route[]> }>()
  private everyRoute: { generation: number; bySize: Map<number, Route[]> } | null = null

  add (method: string, pattern: string, handler: Handler, opts: RouteOptions = {}): this {
    const access = opts.access ?? OWNER
    if (access.length === 0) throw new Error(`route ${method} ${pattern} must name who may call it`)
    this.routes.push({ method: method.toUpperCase(), segments: splitPath(pattern), handler, access })
    this.generation++
    return this
  }

  private candidates (serves: readonly Access[] | undefined, segments: number): readonly Route[] {
    let built = serves === undefined ? this.everyRoute : this.served.get(serves) ?? null
    if (built === null || built.generation !== this.generation) {
      const bySize = new Map<number, Route[]>()
      for (const route of this.routes) {
        if (serves !== undefined && !route.access.some((a) => serves.includes(a))) continue
        const list = bySize.get(route.segments.length)
        if (list === undefined) bySize.set(route.segments.length, [route])
        else list.push(route)
      }
      built = { generation: this.generation, bySize }
      if (serves === undefined) this.everyRoute = built
      else this.served.set(serves, built)
    }
    return built.bySize.get(segments) ?? NO_ROUTES
  }

  get (p: string, h: Handler, opts?: RouteOptions): this { return this.add('GET', p, h, opts) }
  post (p: string, h: Handler, opts?: RouteOptions): this { return this.add('POST', p, h, opts) }
  put (p: string, h: Handler, opts?: RouteOptions): this { return this.add('PUT', p, h, opts) }
  patch (p: string, h: Handler, opts?: RouteOptions): this { return this.add('PATCH', p, h, opts) }
  delete (p: string, h: Handler, opts?: RouteOptions): this { return this.add('DELETE', p, h, opts) }

  /**
   * The route for `method` and `pathname` among those a listener serves (`serves`: the access
   * names it can grant; omitted = every route). Routes outside `serves` do not exist on that
   * listener (NOT_FOUND). Whether this caller holds the route's access is checked by the server.
   * Throws NOT_FOUND / METHOD_NOT_ALLOWED (details.allow) / INVALID_PATH.
   */
  match (method: string, pathname: string, serves?: readonly Access[]): Match {
    const parts = splitPath(pathname)
    let allowed: Set<string> | null = null
    for (const route of this.candidates(serves, parts.length)) {
      const params = matchSegments(route.segments, parts)
      if (params === null) continue
      if (route.method === method || (method === 'HEAD' && route.method === 'GET')) return { handler: route.handler, params, access: route.access }
      allowed ??= new Set()
      allowed.add(route.method)
    }
    if (allowed !== null) {
      if (allowed.has('GET')) allowed.add('HEAD')
      throw new HearthError('METHOD_NOT_ALLOWED', `${method} is not allowed on ${pathname}`, { allow: [...allowed] })
    }
    throw new HearthError('NOT_FOUND', `no route for ${method} ${pathname}`)
  }
}

const NO_ROUTES: readonly Route[] = []

function matchSegments (pattern: string[], parts: string[]): Record<string, string> | null {
  if (pattern.length !== parts.length) return null
  // made at the first `:param`: a route that differs in a literal segment before it makes none
  let params: Record<string, string> | null = null
  for (let i = 0; i < pattern.length; i++) {
    const p = pattern[i]!
    if (p.charCodeAt(0) === 0x3a) { // `:name`
      try {
        params ??= {}
        params[p.slice(1)] = decodeURIComponent(parts[i]!)
      } catch {
        throw new HearthError('INVALID_PATH', `path segment ${JSON.stringify(parts[i])} is not valid percent-encoding`)
      }
    } else if (p !== parts[i]) {
      return null
    }
  }
  return params ?? {}
}
