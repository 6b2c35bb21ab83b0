// Image jobs the daemon followed and downloaded: GET /v1/images and GET /v1/images/{jobId}
// (an upstream job id or a `local-…` id of a request queued offline), and one downloaded output
// file, GET /v1/images/{jobId}/files/{name} (the dashboard's gallery).
import { readFile } from 'node:fs/promises'
import { extname, resolve, sep } from 'node:path'
import { HearthError } from '../../errors.js'
import type { Proxy } from '../../proxy/index.js'
import { ok } from '../http.js'
import type { Router } from '../router.js'

export type ImageRouteDeps = Pick<Proxy, 'listImages' | 'getImage'>

const IMAGE_TYPES: Record<string, string> = { '.png': 'image/png', '.jpg': 'image/jpeg', '.jpeg': 'image/jpeg', '.webp': 'image/webp', '.gif': 'image/gif' }

export function addImageRoutes (router: Router, proxy: ImageRouteDeps): void {
  router.get('/v1/images', async () => ok(await proxy.listImages()))

  router.get('/v1/images/:id', async (req) => {
    const id = req.params.id!
    if (id.length > 256) throw new HearthError('INVALID_ARGUMENT', 'an image job id is at most 256 characters')
    const view = await proxy.getImage(id)
    if (view === null) throw new HearthError('NOT_FOUND', `no image job ${id}`)
    return ok(view)
  })

  router.get('/v1/images/:id/files/:name', async (req) => {
    const { id, name } = req.params as { id: string; name: string }
    const missing = new HearthError('NOT_FOUND', `no downloaded file ${name.slice(0, 100)} of image job ${id.slice(0, 100)}`)
    const image = await proxy.getImage(id)
    const file = image?.files.find((f) => f.name === name)
    // only a file inside the job's own download folder, whatever its record says
    if (image?.dir == null || file === undefined || !resolve(file.path).startsWith(resolve(image.dir) + sep)) throw missing
    let bytes: Buffer
    try { bytes = await readFile(file.path) } catch { throw missing }
    const type = IMAGE_TYPES[extname(name).toLowerCase()]
    return {
      status: 200,
      body: bytes,
      headers: {
        'content-type': type ?? 'application/octet-stream',
        // anything but a plain raster image is only ever downloaded, never rendered
        'content-disposition': `${type !== undefined ? 'inline' : 'attachment'}; filename="${name.replace(/[^A-Za-z0-9._-]/g, '_')}"`,
        'x-content-type-options': 'nosniff'
      }
    }
  })
}
