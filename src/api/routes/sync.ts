// Device sync and restore endpoints: peers, a forced round, restore through the chain. The route
// set names only what it calls (the daemon passes its sync parts, which have this shape).
import { HearthError } from '../../errors.js'
import { objectBody } from '../body.js'
import { ok } from '../http.js'
import type { Router } from '../router.js'

export interface SyncRouteDeps {
  /** null when sync.enabled is false. */
  engine: { addPeer (multiaddr: string): Promise<void>; removePeer (peerOrAddress: string): Promise<unknown>; syncNow (): Promise<unknown> } | null
  restore (): Promise<unknown>
  status (): Promise<unknown>
}

function requireEngine (sync: SyncRouteDeps): NonNullable<SyncRouteDeps['engine']> {
  if (sync.engine === null) throw new HearthError('CONFLICT', 'sync is disabled (sync.enabled is false)')
  return sync.engine
}

export function addSyncRoutes (router: Router, sync: SyncRouteDeps): void {
  router.get('/v1/peers', async () => ok(await sync.status()))

  router.post('/v1/peers', async (req) => {
    const { multiaddr } = objectBody(await req.json(), { multiaddr: { type: 'string', maxLength: 512 } }, '{"multiaddr": "/ip4/…/tcp/…/p2p/…"}')
    try {
      await requireEngine(sync).addPeer(multiaddr)
    } catch (err) {
      if (err instanceof HearthError) throw err
      throw new HearthError('INVALID_ARGUMENT', `not a usable peer address: ${(err as Error).message}`)
    }
    return ok({ added: multiaddr }, 201)
  })

  router.delete('/v1/peers/:peer', async (req) => ok({ removed: await requireEngine(sync).removePeer(req.params.peer!) }))

  router.post('/v1/sync', async () => ok({ rounds: await requireEngine(sync).syncNow() }))

  router.post('/v1/restore', async () => ok(await sync.restore()))
}
