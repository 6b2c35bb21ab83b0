// What the daemon shows of image jobs and the upstream token. Tokens go in, never out: a view
// says whether one is present and when it expires, never the token.
import type { TokenInfo } from './credentials.js'
import type { ImageJobRecord } from './image-jobs.js'

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
