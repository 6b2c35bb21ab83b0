// `GET /v1/search?q=&scope=&since=&until=&limit=&cursor=`: the owner's search over every stored
// version (docs/protocol.md §3.5). The route only reads the query string; the search answers.
import type { Search } from '../../search/types.js'
import { ok } from '../http.js'
import { intParam, stringParam } from '../query.js'
import type { Router } from '../router.js'
import { MAX_LIMIT, MAX_QUERY_CHARS } from '../../search/query.js'

export function addSearchRoutes (router: Router, search: Search): void {
  router.get('/v1/search', async (req) => {
    const param = (name: string, max = 64): string | undefined => stringParam(req.url, name, max) ?? undefined
    return ok(await search.search({
      q: param('q', MAX_QUERY_CHARS) ?? '',
      scope: param('scope', 140),
      since: param('since'),
      until: param('until'),
      limit: intParam(req.url, 'limit', 20, MAX_LIMIT),
      cursor: param('cursor', 200)
    }))
  })
}
