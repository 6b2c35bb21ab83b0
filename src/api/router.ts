// A small table router: exact segments and `:param` segments. Unknown paths are NOT_FOUND and a
// known path with another method is METHOD_NOT_ALLOWED (with Allow), both in the one error shape.
import { HearthError } from '../errors.js'
import type { Handler } from './http.js'

interface Route { method: string; segments: string[]; handler: Handler }

export interface Match { handler: Handler; params: Record<string, string> }

function splitPath (pathname: string): string[] {
  return pathname.split('/').filter((s) => s.length > 0)
}

export class Router {
  private readonly routes: Route[] = []

  add (method: string, pattern: string, handler: Handler): this {
    this.routes.push({ method: method.toUpperCase(), segments: splitPath(pattern), handler })
    return this
  }

  get (p: string, h: Handler): this { return this.add('GET', p, h) }
  post (p: string, h: Handler): this { return this.add('POST', p, h) }
  delete (p: string, h: Handler): this { return this.add('DELETE', p, h) }

  /** Throws NOT_FOUND / METHOD_NOT_ALLOWED / INVALID_PATH; params are percent-decoded. */
  match (method: string, pathname: string): Match {
    const parts = splitPath(pathname)
    const allowed = new Set<string>()
    for (const route of this.routes) {
      const params = matchSegments(route.segments, parts)
      if (params === null) continue
      if (route.method === method || (method === 'HEAD' && route.method === 'GET')) return { handler: route.handler, params }
      allowed.add(route.method)
    }
    if (allowed.size > 0) {
      throw new HearthError('METHOD_NOT_ALLOWED', `${method} is not allowed on ${pathname}`, { allow: [...allowed] })
    }
    throw new HearthError('NOT_FOUND', `no route for ${method} ${pathname}`)
  }
}

function matchSegments (pattern: string[], parts: string[]): Record<string, string> | null {
  if (pattern.length !== parts.length) return null
  const params: Record<string, string> = {}
  for (let i = 0; i < pattern.length; i++) {
    const p = pattern[i]
    if (p.startsWith(':')) {
      try {
        params[p.slice(1)] = decodeURIComponent(parts[i])
      } catch {
        throw new HearthError('INVALID_PATH', `path segment ${JSON.stringify(parts[i])} is not valid percent-encoding`)
      }
    } else if (p !== parts[i]) {
      return null
    }
  }
  return params
}
