// POST /v1/ui/login-link: a one-time link that opens the dashboard (`hearth ui`). Only the
// owner's socket (or bearer TCP listener) may ask: a dashboard session does not mint more logins.
import { HearthError } from '../../errors.js'
import { ok } from '../http.js'
import type { Router } from '../router.js'

/** What the route needs of the dashboard (src/ui/dashboard.ts, built on this API). */
export interface LoginLinks {
  loginLink (): { url: string; expiresAt: string }
}

export function addUiRoutes (router: Router, deps: { dashboard: LoginLinks | null }): void {
  router.post('/v1/ui/login-link', async (req) => {
    if (req.listener === 'dashboard') throw new HearthError('FORBIDDEN', 'login links are made with `hearth ui` on the owner socket')
    if (deps.dashboard === null) throw new HearthError('CONFLICT', 'the dashboard is off (ui.enabled is false)')
    return ok(deps.dashboard.loginLink(), 201)
  })
}
