// Imports over HTTP, for the dashboard (the CLI's `hearth import` reads the export where it is):
//   POST /v1/imports?name=<file name>   body: the archive bytes → the job, probing which connectors fit
//   GET  /v1/imports                    → {imports: [...]}, newest first
//   GET  /v1/imports/:id                → the job: state, suggestions, live counts, the summary at the end
//   POST /v1/imports/:id/parts?name=<file name>  body: another archive of the same export (platforms
//                                       send large exports in parts) → the job, probing all its parts
//   POST /v1/imports/:id/start {connector, with?} → runs that connector over the archive(s), with its optional scopes named in `with`
//   POST /v1/imports/finished {name, connectorId, startedAt, total, failure?} → `hearth import` records an import it ran (201)
import { HearthError } from '../../errors.js'
import type { FinishedImport, ImportJobs } from '../../connectors/import-jobs.js'
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

  router.post('/v1/imports/finished', async (req) => ok(deps.jobs.recordFinished(finishedImport(await req.json())), 201))

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

const FINISHED_SHAPE = '{"name", "connectorId", "startedAt": "<ISO time>", "total": {"items", "stored", "duplicate", "rejected", "waiting"}, "failure"?: {"code", "message"}}'
const COUNTS = ['items', 'stored', 'duplicate', 'rejected', 'waiting'] as const

/** A finished import's report, checked field by field (every problem named). */
function finishedImport (body: unknown): FinishedImport {
  const reasons: string[] = []
  const b = (typeof body === 'object' && body !== null && !Array.isArray(body) ? body : {}) as Record<string, unknown>
  if (b !== body) reasons.push('the body is not an object')
  for (const key of Object.keys(b)) if (!['name', 'connectorId', 'startedAt', 'total', 'failure'].includes(key)) reasons.push(`unknown field ${JSON.stringify(key.slice(0, 60))}`)
  const text = (v: unknown, what: string, max: number): string => {
    if (typeof v !== 'string' || v === '' || v.length > max) reasons.push(`${what} must be a string of 1 to ${max} characters`)
    return String(v)
  }
  const name = text(b.name, 'name', 300)
  const connectorId = text(b.connectorId, 'connectorId', 100)
  const startedAt = text(b.startedAt, 'startedAt', 40)
  if (!Number.isFinite(Date.parse(startedAt))) reasons.push('startedAt must be an ISO time')
  const total = (typeof b.total === 'object' && b.total !== null ? b.total : {}) as Record<string, unknown>
  for (const k of COUNTS) if (!Number.isSafeInteger(total[k]) || (total[k] as number) < 0) reasons.push(`total.${k} must be a count (an integer ≥ 0)`)
  let failure: FinishedImport['failure']
  if (b.failure !== undefined) {
    const f = (typeof b.failure === 'object' && b.failure !== null ? b.failure : {}) as Record<string, unknown>
    failure = { code: text(f.code, 'failure.code', 60), message: text(f.message, 'failure.message', 2000) }
  }
  if (reasons.length > 0) throw new HearthError('INVALID_BODY', `${reasons.join('; ')} (expected ${FINISHED_SHAPE})`, { reasons: reasons.slice(0, 20) })
  const counts = Object.fromEntries(COUNTS.map((k) => [k, total[k] as number])) as FinishedImport['total']
  return { name, connectorId, startedAt: new Date(startedAt).toISOString(), total: counts, ...(failure !== undefined ? { failure } : {}) }
}
