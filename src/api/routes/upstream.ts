// The daemon's own endpoints for the upstream link (used by `hearth login`, `hearth status`):
//   POST   /v1/upstream/login/start   {email}         → the upstream mails a code
//   POST   /v1/upstream/login/finish  {email, code}   → token stored; {success, email, expiresAt, …}
//   POST   /v1/upstream/token         {token}         → token stored; {success, present, expiresAt, …}
//   DELETE /v1/upstream/token                         → token forgotten
//   GET    /v1/upstream/status                        → the proxy's status
// Tokens go in, never out. The `/api/v0/` passthrough itself is a raw mount (server.ts).
import type { Proxy } from '../../proxy/index.js'
import { tokenView } from '../../proxy/views.js'
import { objectBody } from '../body.js'
import { ok } from '../http.js'
import type { Router } from '../router.js'

export type UpstreamRouteDeps = Pick<Proxy, 'login' | 'credentials' | 'status'>

const EMAIL = { type: 'string', maxLength: 320 } as const

export function addUpstreamRoutes (router: Router, proxy: UpstreamRouteDeps): void {
  router.post('/v1/upstream/login/start', async (req) => {
    const { email } = objectBody(await req.json(), { email: EMAIL }, '{"email": "me@example.org"}')
    await proxy.login.start(email)
    return ok({ success: true, email })
  })

  router.post('/v1/upstream/login/finish', async (req) => {
    const { email, code } = objectBody(await req.json(), { email: EMAIL, code: { type: 'string', maxLength: 32 } }, '{"email": "…", "code": "123456"}')
    const info = await proxy.login.finish(email, code)
    return ok({ success: true, ...tokenView(info) })
  })

  router.post('/v1/upstream/token', async (req) => {
    const { token } = objectBody(await req.json(), { token: { type: 'string', maxLength: 16 * 1024 } }, '{"token": "<upstream token>"}')
    return ok({ success: true, ...tokenView(await proxy.credentials.save(token.trim())) })
  })

  router.delete('/v1/upstream/token', async () => {
    await proxy.credentials.clear()
    return ok({ success: true })
  })

  router.get('/v1/upstream/status', async () => ok(await proxy.status()))
}
