// The pinning services' state per CID (`pinning.services`): GET /v1/storage/pins, paged by CID.
import { HearthError } from '../../errors.js'
import { ok } from '../http.js'
import { intParam, stringParam } from '../query.js'
import type { Router } from '../router.js'

const STATES = ['queued', 'pinning', 'pinned', 'failed', 'removing'] as const
type State = typeof STATES[number]

export interface PinRouteDeps {
  status (): Promise<unknown>
  pins (query: { service?: string; state?: State; after?: string; limit: number }): Promise<unknown[]>
}

export function addPinRoutes (router: Router, pinning: PinRouteDeps): void {
  router.get('/v1/storage/pins', async (req) => {
    const state = stringParam(req.url, 'state', 16)
    if (state !== null && !(STATES as readonly string[]).includes(state)) {
      throw new HearthError('INVALID_ARGUMENT', `state must be one of ${STATES.join(', ')}`)
    }
    const service = stringParam(req.url, 'service', 32) ?? undefined
    const after = stringParam(req.url, 'after', 512) ?? undefined
    const limit = intParam(req.url, 'limit', 100, 1000)
    const pins = await pinning.pins({ service, state: (state ?? undefined) as State | undefined, after, limit })
    return ok({ services: (await pinning.status() as { services?: unknown } | undefined)?.services ?? [], pins })
  })
}
