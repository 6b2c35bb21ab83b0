// Device sync and restore endpoints: peers, a forced round, restore through the chain.
import { HearthError } from '../../errors.js'
import type { SyncParts } from '../../daemon/sync-setup.js'
import { ok } from '../http.js'
import type { Router } from '../router.js'

function requireEngine (sync: SyncParts): NonNullable<SyncParts['engine']> {
  if (sync.engine === null) throw new HearthError('CONFLICT', 'sync is disabled (sync.enabled is false)')
  return sync.engine
}

export function addSyncRoutes (router: Router, sync: SyncParts): void {
  router.get('/v1/peers', async () => ok(await sync.status()))

  router.post('/v1/peers', async (req) => {
    const body = await req.json() as { multiaddr?: unknown }
    if (typeof body !== 'object' || body === null || typeof body.multiaddr !== 'string' || body.multiaddr.length > 512) {
      throw new HearthError('INVALID_BODY', 'expected {"multiaddr": "/ip4/…/tcp/…/p2p/…"}')
    }
    try {
      await requireEngine(sync).addPeer(body.multiaddr)
    } catch (err) {
      if (err instanceof HearthError) throw err
      throw new HearthError('INVALID_ARGUMENT', `not a usable peer address: ${(err as Error).message}`)
    }
    return ok({ added: body.multiaddr }, 201)
  })

  router.delete('/v1/peers/:peer', async (req) => ok({ removed: await requireEngine(sync).removePeer(req.params.peer!) }))

  router.post('/v1/sync', async () => ok({ rounds: await requireEngine(sync).syncNow() }))

  router.post('/v1/restore', async () => ok(await sync.restore()))
}
