// Image jobs the daemon followed and downloaded: GET /v1/images and GET /v1/images/{jobId}
// (an upstream job id or a `local-…` id of a request queued offline).
import { HearthError } from '../../errors.js'
import type { Proxy } from '../../proxy/index.js'
import { ok } from '../http.js'
import type { Router } from '../router.js'

export type ImageRouteDeps = Pick<Proxy, 'listImages' | 'getImage'>

export function addImageRoutes (router: Router, proxy: ImageRouteDeps): void {
  router.get('/v1/images', async () => ok(await proxy.listImages()))

  router.get('/v1/images/:id', async (req) => {
    const id = req.params.id!
    if (id.length > 256) throw new HearthError('INVALID_ARGUMENT', 'an image job id is at most 256 characters')
    const view = await proxy.getImage(id)
    if (view === null) throw new HearthError('NOT_FOUND', `no image job ${id}`)
    return ok(view)
  })
}
