// The proxy as the daemon holds it: the same `Proxy`, but its ~19 modules (the forwarder, the
// image jobs and queue, the login flow, the cache) load only when they are needed — at start when
// `upstream.baseUrl` is set, otherwise on the first call that needs them (a passthrough request
// answers UPSTREAM_UNAVAILABLE without loading anything). An idle daemon without an upstream
// keeps their memory (README, "Idle memory").
import type { CredentialStore } from './credentials.js'
import { createCredentialStore } from './credentials.js'
import { proxyConfigured, upstreamNotConfigured } from './basics.js'
import type { Proxy, ProxyDeps } from './index.js'

export function createLazyProxy (deps: ProxyDeps): Proxy {
  const configured = proxyConfigured(deps.config)
  // light, and shared with the loaded proxy, so storing or clearing a token loads nothing
  const credentials: CredentialStore = deps.credentials ?? createCredentialStore({ identityDir: deps.home.identity })
  let loading: Promise<Proxy> | null = null
  const loaded = async (): Promise<Proxy> => {
    loading ??= import('./index.js').then(({ createProxy }) => createProxy({ ...deps, credentials }))
    return await loading
  }
  const ifConfigured = async (): Promise<Proxy> => {
    if (!configured) throw upstreamNotConfigured()
    return await loaded()
  }
  return {
    name: 'upstream',
    configured,
    credentials,
    login: {
      start: async (email) => { await (await ifConfigured()).login.start(email) },
      finish: async (email, code) => await (await ifConfigured()).login.finish(email, code)
    },
    handle: async (req, res, ctx) => await (await ifConfigured()).handle(req, res, ctx),
    listImages: async () => await (await loaded()).listImages(),
    getImage: async (id) => await (await loaded()).getImage(id),
    cachedConversations: async () => await (await loaded()).cachedConversations(),
    status: async () => await (await loaded()).status(),
    async start () {
      if (configured) await (await loaded()).start()
    },
    async stop () {
      if (loading !== null) await (await loading).stop()
    },
    async settled () {
      if (loading !== null) await (await loading).settled()
    }
  }
}
