// Which upstream operation (docs/protocol.md §4) an `/api/v0/...` request is. Pure: the path (after /api/v0) and the
// method decide; the proxy's behaviour (cache, stream, queue, follow) hangs off the kind.

export type RouteKind =
  | 'auth'                // /auth/*: forwarded without the owner's token
  | 'conversations-list'  // GET /conversations
  | 'conversation-create' // POST /conversations
  | 'conversation-get'    // GET /conversations/:id
  | 'chat'                // POST /conversations/:id/chat
  | 'chat-stream'         // POST /conversations/:id/chat/stream
  | 'clear'               // POST /conversations/:id/clear
  | 'images'              // POST /images
  | 'job'                 // GET /jobs/:id
  | 'models'              // GET /characters/:id/images/models
  | 'other'               // anything else: forwarded unchanged, body not inspected

export interface Route {
  kind: RouteKind
  /** Conversation, job or character id when the path carries one (already URL-decoded). */
  id?: string
}

/** Routes whose answer is JSON by contract: a non-JSON answer is the upstream's fault (502). */
export function isJsonRoute (kind: RouteKind): boolean {
  return kind !== 'other' && kind !== 'chat-stream'
}

/** GET routes whose last good answer is kept for offline reads. */
export function isCacheableRoute (kind: RouteKind): boolean {
  return kind === 'conversations-list' || kind === 'conversation-get' || kind === 'job' || kind === 'models'
}

export function classifyRoute (method: string, path: string): Route {
  const m = method.toUpperCase()
  const parts = path.split('/').filter((p) => p.length > 0)
  const id = parts[1] !== undefined ? safeDecode(parts[1]) : undefined
  if (parts[0] === 'auth') return { kind: 'auth' }
  if (parts[0] === 'conversations') {
    if (parts.length === 1) {
      if (m === 'GET') return { kind: 'conversations-list' }
      if (m === 'POST') return { kind: 'conversation-create' }
    }
    if (parts.length === 2 && m === 'GET' && id !== undefined) return { kind: 'conversation-get', id }
    if (parts.length === 3 && m === 'POST' && parts[2] === 'chat' && id !== undefined) return { kind: 'chat', id }
    if (parts.length === 3 && m === 'POST' && parts[2] === 'clear' && id !== undefined) return { kind: 'clear', id }
    if (parts.length === 4 && m === 'POST' && parts[2] === 'chat' && parts[3] === 'stream' && id !== undefined) return { kind: 'chat-stream', id }
  }
  if (parts[0] === 'images' && parts.length === 1 && m === 'POST') return { kind: 'images' }
  if (parts[0] === 'jobs' && parts.length === 2 && m === 'GET' && id !== undefined) return { kind: 'job', id }
  if (parts[0] === 'characters' && parts.length === 4 && parts[2] === 'images' && parts[3] === 'models' && m === 'GET' && id !== undefined) {
    return { kind: 'models', id }
  }
  return { kind: 'other' }
}

function safeDecode (s: string): string | undefined {
  try { return decodeURIComponent(s) } catch { return undefined }
}
