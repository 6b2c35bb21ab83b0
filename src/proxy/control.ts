// The daemon's own endpoints for the upstream link (used by the CLI):
//   POST   /v1/upstream/login/start   {email}         → the upstream mails a code
//   POST   /v1/upstream/login/finish  {email, code}   → token stored; {success, email, expiresAt}
//   POST   /v1/upstream/token         {token}         → token stored; {success, expiresAt}
//   DELETE /v1/upstream/token                         → token forgotten
//   GET    /v1/upstream/status                        → ProxyStatus
//   GET    /v1/images                                 → {images: ImageView[]}
//   GET    /v1/images/:id                             → ImageView (upstream or local job id)
// Tokens go in, never out.
import type { IncomingMessage, ServerResponse } from 'node:http'
import { HearthError } from '../errors.js'
import type { CredentialStore, TokenInfo } from './credentials.js'
import type { LoginFlow } from './login.js'
import type { ImageJobRecord } from './image-jobs.js'
import { parseAppJson, readRequestBody, sendError, sendJson } from './respond.js'

export interface ImageView {
  jobId: string | null
  localJobId: string | null
  state: ImageJobRecord['state']
  status: string | null
  prompt: string | null
  createdAt: string
  updatedAt: string
  dir: string | null
  files: Array<{ name: string, size: number, sha256: string, path: string }>
  error?: string
}

export function imageView (r: ImageJobRecord): ImageView {
  return {
    jobId: r.jobId, localJobId: r.localJobId, state: r.state, status: r.status, prompt: r.prompt,
    createdAt: new Date(r.createdAt).toISOString(), updatedAt: new Date(r.updatedAt).toISOString(),
    dir: r.dir, files: r.files, ...(r.error !== undefined ? { error: r.error } : {})
  }
}

export function tokenView (info: TokenInfo): Record<string, unknown> {
  return { present: info.present, expired: info.expired, expiresAt: info.expiresAt === null ? null : new Date(info.expiresAt).toISOString(), ...(info.email !== undefined ? { email: info.email } : {}) }
}

export interface ControlDeps {
  credentials: CredentialStore
  login: LoginFlow
  listImages: () => Promise<{ images: ImageView[] }>
  getImage: (id: string) => Promise<ImageView | null>
  status: () => Promise<unknown>
  maxBodyBytes: number
}

export function createControl (deps: ControlDeps): { handle (req: IncomingMessage, res: ServerResponse, url: URL): Promise<void> } {
  async function route (req: IncomingMessage, res: ServerResponse, url: URL): Promise<void> {
    const method = req.method ?? 'GET'
    const path = url.pathname.replace(/\/+$/, '')
    const body = async (): Promise<Record<string, unknown>> => parseAppJson(await readRequestBody(req, Math.min(deps.maxBodyBytes, 64 * 1024)))
    const only = (m: string): void => { if (method !== m) throw new HearthError('METHOD_NOT_ALLOWED', `${method} is not allowed on ${path}`) }

    if (path === '/v1/upstream/login/start') {
      only('POST')
      const { email } = await body()
      await deps.login.start(email as string)
      sendJson(res, 200, { success: true, email })
      return
    }
    if (path === '/v1/upstream/login/finish') {
      only('POST')
      const { email, code } = await body()
      const info = await deps.login.finish(email as string, code as string)
      sendJson(res, 200, { success: true, ...tokenView(info) })
      return
    }
    if (path === '/v1/upstream/token') {
      if (method === 'DELETE') { await deps.credentials.clear(); sendJson(res, 200, { success: true }); return }
      only('POST')
      const { token } = await body()
      if (typeof token !== 'string') throw new HearthError('INVALID_ARGUMENT', 'body must be {"token": "<upstream token>"}')
      const info = await deps.credentials.save(token.trim())
      sendJson(res, 200, { success: true, ...tokenView(info) })
      return
    }
    if (path === '/v1/upstream/status') { only('GET'); sendJson(res, 200, await deps.status()); return }
    if (path === '/v1/images') { only('GET'); sendJson(res, 200, await deps.listImages()); return }
    if (path.startsWith('/v1/images/')) {
      only('GET')
      const id = decodeURIComponent(path.slice('/v1/images/'.length))
      const view = await deps.getImage(id)
      if (view === null) throw new HearthError('NOT_FOUND', `no image job ${id}`)
      sendJson(res, 200, view)
      return
    }
    throw new HearthError('NOT_FOUND', `no such endpoint: ${method} ${path}`)
  }

  return {
    async handle (req, res, url) {
      try { await route(req, res, url) } catch (err) {
        sendError(res, err instanceof URIError ? new HearthError('INVALID_PATH', 'bad percent-encoding in the path') : err)
      }
    }
  }
}
