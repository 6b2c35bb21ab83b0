// Imports over HTTP, for the dashboard (the CLI's `hearth import` reads the export where it is):
//   POST /v1/imports?name=<file name>   body: the archive bytes → the job, probing which connectors fit
//   GET  /v1/imports                    → {imports: [...]}, newest first
//   GET  /v1/imports/:id                → the job: state, suggestions, live counts, the summary at the end
//   POST /v1/imports/:id/parts?name=<file name>  body: another archive of the same export (platforms
//                                       send large exports in parts) → the job, probing all its parts
//   POST /v1/imports/:id/start {connector, with?} → runs that connector over the archive(s), with its optional scopes named in `with`
import { HearthError } from '../../errors.js'
import type { ImportJobs } from '../../connectors/import-jobs.js'
import { ok } from '../http.js'
import { stringParam } from '../query.js'
import type { Router } from '../router.js'

/** The query and headers of an archive upload. */
function uploadMeta (req: { url: URL; raw: { headers: Record<string, string | string[] | undefined> } }): { name: string; declaredBytes: number | null; modifiedAt: number | null } {
  const name = stringParam(req.url, 'name', 200) ?? 'export.zip'
  const modified = stringParam(req.url, 'modifiedAt', 20)
  const declared = Number(req.raw.headers['content-length'])
  return { name, declaredBytes: Number.isFinite(declared) ? declared : null, modifiedAt: modified !== null && /^\d{1,15}$/.test(modified) ? Number(modified) : null }
}

export function addImportRoutes (router: Router, deps: { jobs: ImportJobs }): void {
  router.post('/v1/imports', async (req) => ok(await deps.jobs.upload(req.raw, uploadMeta(req)), 202))

  router.post('/v1/imports/:id/parts', async (req) => ok(await deps.jobs.addPart(req.params.id!, req.raw, uploadMeta(req)), 202))

  router.get('/v1/imports', async () => ok({ imports: deps.jobs.list() }))

  router.get('/v1/imports/:id', async (req) => {
    const job = deps.jobs.get(req.params.id!)
    if (job === null) throw new HearthError('NOT_FOUND', `no import ${req.params.id!}`)
    return ok(job)
  })

  router.post('/v1/imports/:id/start', async (req) => {
    const body = await req.json() as { connector?: unknown; with?: unknown } | null
    const include = body?.with ?? []
    if (typeof body !== 'object' || body === null || typeof body.connector !== 'string' || body.connector.length > 100 ||
      !Array.isArray(include) || include.length > 20 || !include.every((s) => typeof s === 'string' && s.length <= 200)) {
      throw new HearthError('INVALID_BODY', 'expected {"connector": "<connector id>", "with"?: ["<optional scope>", …]}')
    }
    return ok(deps.jobs.run(req.params.id!, body.connector, include as string[]), 202)
  })
}
