// What the proxy keeps of the upstream's answers, so reading works offline (docs/protocol.md §4): the last
// good answer of each cacheable GET, and the chat exchanges seen through the proxy (merged into a
// cached conversation when it is read offline). Stored in the daemon's persistent KV.
import { createHash, randomBytes } from 'node:crypto'
import type { ProxyKv } from './types.js'
import type { Route } from './routes.js'
import { withExchanges, withoutMessages, type ConversationExchange } from './conversation-shape.js'

export interface CachedAnswer {
  body: unknown
  /** ms since epoch when the upstream gave this answer (or when the cache last changed it). */
  fetchedAt: number
}

export interface ProxyCache {
  /** Keep a good answer; `raw` (its bytes) lets an unchanged answer skip the write. */
  remember (route: Route, body: unknown, now?: number, raw?: Buffer): Promise<void>
  /** The answer to give offline, with exchanges newer than a cached conversation merged in. */
  recall (route: Route): Promise<CachedAnswer | undefined>
  recordExchange (conversationId: string, exchange: ConversationExchange): Promise<void>
  /** After a successful clear: no cached messages or exchanges remain for the conversation. */
  forgetMessages (conversationId: string, now?: number): Promise<void>
}

const PREFIX = 'cache/'
const EXCHANGES = 'exchange/'

function answerKey (route: Route): string | null {
  switch (route.kind) {
    case 'conversations-list': return `${PREFIX}conversations`
    case 'conversation-get': return `${PREFIX}conversation/${route.id ?? ''}`
    case 'job': return `${PREFIX}job/${route.id ?? ''}`
    case 'models': return `${PREFIX}models/${route.id ?? ''}`
    default: return null
  }
}

const exchangePrefix = (conversationId: string): string => `${EXCHANGES}${conversationId}/`

/** An unchanged answer is written again only this long after the last write (keeps cached-at honest enough). */
const REFRESH_UNCHANGED_MS = 60_000
const MAX_REMEMBERED_DIGESTS = 10_000

export function createProxyCache (deps: { kv: ProxyKv }): ProxyCache {
  const { kv } = deps
  // key → digest and time of the last write: polling apps re-read the same answers, and a database
  // write per read would be most of the proxy's cost.
  const written = new Map<string, { digest: string, at: number }>()
  // Writes run one after another, and reads wait for the writes before them: the proxy answers the
  // app first and writes afterwards, yet a read never misses what an earlier request saw.
  let writes: Promise<void> = Promise.resolve()
  const serially = (fn: () => Promise<void>): Promise<void> => {
    const run = writes.then(fn)
    writes = run.catch(() => {})
    return run
  }

  async function exchangesOf (conversationId: string): Promise<Array<[string, ConversationExchange]>> {
    const out: Array<[string, ConversationExchange]> = []
    for await (const [key, value] of kv.entries({ prefix: exchangePrefix(conversationId) })) out.push([key, value as ConversationExchange])
    return out
  }

  return {
    async remember (route, body, now = Date.now(), raw) {
      const key = answerKey(route)
      if (key === null) return
      const digest = raw !== undefined ? createHash('sha1').update(raw).digest('base64') : null
      const last = written.get(key)
      if (digest !== null && last !== undefined && last.digest === digest && now - last.at < REFRESH_UNCHANGED_MS) return
      if (written.size >= MAX_REMEMBERED_DIGESTS) written.clear()
      if (digest !== null) written.set(key, { digest, at: now })
      await serially(async () => {
        await kv.put(key, { body, fetchedAt: now } satisfies CachedAnswer)
        if (route.kind === 'conversation-get' && route.id !== undefined) {
          // The fresh detail already holds every earlier exchange: keep only newer ones.
          for (const [k, ex] of await exchangesOf(route.id)) if (ex.at <= now) await kv.del(k)
        }
      })
    },

    async recall (route) {
      const key = answerKey(route)
      if (key === null) return undefined
      await writes
      const cached = await kv.get(key) as CachedAnswer | undefined
      if (cached === undefined || route.kind !== 'conversation-get' || route.id === undefined) return cached
      const newer = (await exchangesOf(route.id)).map(([, ex]) => ex).filter((ex) => ex.at > cached.fetchedAt)
      return { body: withExchanges(cached.body, newer), fetchedAt: cached.fetchedAt }
    },

    async recordExchange (conversationId, exchange) {
      // Zero-padded time first so entries() returns them in order; random suffix for same-ms replies.
      const key = `${exchangePrefix(conversationId)}${String(exchange.at).padStart(15, '0')}-${randomBytes(4).toString('hex')}`
      await serially(async () => { await kv.put(key, exchange) })
    },

    async forgetMessages (conversationId, now = Date.now()) {
      const key = `${PREFIX}conversation/${conversationId}`
      written.delete(key)
      await serially(async () => {
        for (const [k] of await exchangesOf(conversationId)) await kv.del(k)
        const cached = await kv.get(key) as CachedAnswer | undefined
        if (cached !== undefined) await kv.put(key, { body: withoutMessages(cached.body), fetchedAt: now })
      })
    }
  }
}
