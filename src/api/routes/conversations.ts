// GET /v1/conversations: the conversation list as the upstream last gave it through the proxy,
// kept for reading offline (the dashboard's Images page lists it).
import type { Proxy } from '../../proxy/index.js'
import { ok } from '../http.js'
import type { Router } from '../router.js'

export function addConversationRoutes (router: Router, proxy: Pick<Proxy, 'cachedConversations'>): void {
  router.get('/v1/conversations', async () => {
    const cached = await proxy.cachedConversations()
    const list = (cached?.body as { conversations?: unknown } | undefined)?.conversations
    return ok({ conversations: Array.isArray(list) ? list : [], fetchedAt: cached === undefined ? null : new Date(cached.fetchedAt).toISOString() })
  })
}
