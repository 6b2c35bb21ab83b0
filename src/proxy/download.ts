// Copies of a finished job's output files in <home>/images/<jobId>/, so the owner keeps them
// after the upstream's signed URLs expire. Each file is streamed to a temp name, its size checked
// against what the job announced, then renamed into place; a manifest records what is there.
import { createWriteStream } from 'node:fs'
import { mkdir, rename, rm, writeFile } from 'node:fs/promises'
import { basename, join } from 'node:path'
import { createHash, randomUUID } from 'node:crypto'
import { Transform } from 'node:stream'
import { pipeline } from 'node:stream/promises'
import { HearthError } from '../errors.js'
import type { HttpTransport } from './upstream.js'

export interface OutputFile {
  name: string
  url: string
  /** Announced size in bytes; checked when present. */
  size?: number
}

export interface LocalFile {
  name: string
  size: number
  sha256: string
  path: string
}

/** A file name that stays inside the job folder, unique among `taken`. */
export function safeFileName (raw: string, index: number, taken: Set<string>): string {
  let name = basename(raw.replace(/\\/g, '/')).replace(/[^A-Za-z0-9._-]/g, '_').replace(/^\.+/, '')
  if (name.length === 0 || name === 'manifest.json') name = `output-${index}`
  if (name.length > 120) name = name.slice(-120)
  let candidate = name
  for (let n = 1; taken.has(candidate); n++) candidate = `${n}-${name}`
  taken.add(candidate)
  return candidate
}

/** Output files of a job answer (`outputFiles`) or of a synchronous `output: [url]` answer. */
export function outputFilesOf (job: unknown, synchronousOutput?: unknown): OutputFile[] {
  const files: OutputFile[] = []
  const list = (job as { outputFiles?: unknown } | null)?.outputFiles
  if (Array.isArray(list)) {
    for (const f of list) {
      const o = (f ?? {}) as Record<string, unknown>
      if (typeof o.url !== 'string') continue
      files.push({ name: typeof o.name === 'string' ? o.name : new URL(o.url, 'http://x').pathname, url: o.url, ...(typeof o.size === 'number' ? { size: o.size } : {}) })
    }
  }
  if (files.length === 0 && Array.isArray(synchronousOutput)) {
    for (const u of synchronousOutput) if (typeof u === 'string') files.push({ name: new URL(u, 'http://x').pathname, url: u })
  }
  return files
}

export interface Downloader {
  /** Download every file into `dir`; throws on any failure (nothing partial is left as final). */
  downloadAll (dir: string, files: OutputFile[]): Promise<LocalFile[]>
}

export function createDownloader (deps: { transport: HttpTransport, baseUrl: string, timeoutMs: number, bearer: () => Promise<string | null> }): Downloader {
  const upstreamOrigin = new URL(deps.baseUrl).origin

  async function downloadOne (dir: string, file: OutputFile, name: string): Promise<LocalFile> {
    const url = new URL(file.url, deps.baseUrl)
    const headers: Record<string, string> = {}
    // Signed URLs carry their own authority; the token goes only to the upstream's own origin.
    if (url.origin === upstreamOrigin) {
      const token = await deps.bearer()
      if (token !== null) headers.authorization = `Bearer ${token}`
    }
    const res = await deps.transport.send({ method: 'GET', url, headers, timeoutMs: deps.timeoutMs })
    if (res.status < 200 || res.status >= 300) {
      res.abort()
      throw new HearthError('UPSTREAM_BAD_RESPONSE', `output file ${name} could not be downloaded (status ${res.status})`, { upstreamStatus: res.status })
    }
    const tmp = join(dir, `.${name}.${randomUUID()}.part`)
    const hash = createHash('sha256')
    let size = 0
    const counter = new Transform({
      transform (chunk: Buffer, _enc, cb) { size += chunk.length; hash.update(chunk); cb(null, chunk) }
    })
    try {
      await pipeline(res.message, counter, createWriteStream(tmp, { mode: 0o600 }))
      if (!res.message.complete) throw new HearthError('UPSTREAM_BAD_RESPONSE', `output file ${name} broke off while downloading`)
      if (file.size !== undefined && file.size !== size) {
        throw new HearthError('UPSTREAM_BAD_RESPONSE', `output file ${name} has ${size} bytes, the job announced ${file.size}`, { expected: file.size, actual: size })
      }
      const path = join(dir, name)
      await rename(tmp, path)
      return { name, size, sha256: hash.digest('hex'), path }
    } catch (err) {
      await rm(tmp, { force: true })
      if (err instanceof HearthError) throw err
      throw new HearthError('UPSTREAM_BAD_RESPONSE', `output file ${name} broke off while downloading`)
    }
  }

  return {
    async downloadAll (dir, files) {
      await mkdir(dir, { recursive: true, mode: 0o700 })
      const taken = new Set<string>()
      const out: LocalFile[] = []
      for (const [i, f] of files.entries()) out.push(await downloadOne(dir, f, safeFileName(f.name, i, taken)))
      return out
    }
  }
}

export async function writeManifest (dir: string, manifest: unknown): Promise<void> {
  const tmp = join(dir, `.manifest.${randomUUID()}.part`)
  await writeFile(tmp, JSON.stringify(manifest, null, 2) + '\n', { mode: 0o600 })
  await rename(tmp, join(dir, 'manifest.json'))
}
