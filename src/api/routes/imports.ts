// Imports over HTTP, for the dashboard (the CLI's `hearth import` reads the export where it is):
//   POST /v1/imports?name=<file name>   body: the archive bytes → the job, probing which connectors fit
//   GET  /v1/imports                    → {imports: [...]}, newest first
//   GET  /v1/imports/:id                → the job: state, suggestions, live counts, the summary at the end
//   POST /v1/imports/:id/start {connector} → runs that connector over the archive
import { HearthError } from '../../errors.js'
import type { ImportJobs } from '../../connectors/import-jobs.js'
import { ok } from '../http.js'
import { stringParam } from '../query.js'
import type { Router } from '../router.js'

export function addImportRoutes (router: Router, deps: { jobs: ImportJobs }): void {
  router.post('/v1/imports', async (req) => {
    const name = stringParam(req.url, 'name', 200) ?? 'export.zip'
    const modified = stringParam(req.url, 'modifiedAt', 20)
    const modifiedAt = modified !== null && /^\d{1,15}$/.test(modified) ? Number(modified) : null
    const declared = Number(req.raw.headers['content-length'])
    const job = await deps.jobs.upload(req.raw, { name, declaredBytes: Number.isFinite(declared) ? declared : null, modifiedAt })
    return ok(job, 202)
  })

  router.get('/v1/imports', async () => ok({ imports: deps.jobs.list() }))

  router.get('/v1/imports/:id', async (req) => {
    const job = deps.jobs.get(req.params.id!)
    if (job === null) throw new HearthError('NOT_FOUND', `no import ${req.params.id!}`)
    return ok(job)
  })

  router.post('/v1/imports/:id/start', async (req) => {
    const body = await req.json() as { connector?: unknown } | null
    if (typeof body !== 'object' || body === null || typeof body.connector !== 'string' || body.connector.length > 100) {
      throw new HearthError('INVALID_BODY', 'expected {"connector": "<connector id>"}')
    }
    return ok(deps.jobs.run(req.params.id!, body.connector), 202)
  })
}
