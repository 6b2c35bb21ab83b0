// Fetching the document at a schema's definitionUrl (DESIGN 3.2): `ipfs://<cid>` through the
// storage backend, `http(s)://` with a deadline and a size limit enforced while streaming, so a
// hostile or broken URL registered on chain can neither hang resolution nor exhaust memory.
import { CID } from 'multiformats/cid'
import { HearthError, isHearthError } from '../errors.js'
import type { StorageBackend } from '../storage/types.js'
import { untilAborted } from './abort.js'
import { BodyTooLargeError, readBodyLimited } from './http-body.js'

export type DefinitionFetcher = (url: string, opts?: { signal?: AbortSignal }) => Promise<Uint8Array>

export interface DefinitionFetcherOptions {
  storage: Pick<StorageBackend, 'get'>
  /** Deadline for one fetch, storage or HTTP. Default 10 s. */
  timeoutMs?: number
  /** Largest definition accepted. Default 1 MiB. */
  maxBytes?: number
  /** The fetch implementation; global fetch by default. */
  fetch?: typeof globalThis.fetch
}

export function createDefinitionFetcher (opts: DefinitionFetcherOptions): DefinitionFetcher {
  const timeoutMs = opts.timeoutMs ?? 10_000
  const maxBytes = opts.maxBytes ?? 1024 * 1024
  const doFetch = opts.fetch ?? globalThis.fetch

  async function fromIpfs (url: string, rest: string, signal: AbortSignal): Promise<Uint8Array> {
    // A bare CID only: definitions are single documents, and a path would need a directory walk.
    let cid: string
    try {
      cid = CID.parse(rest).toString()
    } catch {
      throw unavailable(url, 'not an ipfs://<cid> URL with a valid CID')
    }
    let bytes: Uint8Array
    try {
      // Raced against the deadline as well: a backend that ignores the signal must not hang us.
      bytes = await untilAborted(opts.storage.get(cid, { signal }), signal)
    } catch (err) {
      if (signal.aborted) throw unavailable(url, `no answer from storage within ${timeoutMs} ms`, err)
      // STORAGE_NOT_FOUND / STORAGE_UNAVAILABLE say precisely what happened; keep them.
      if (isHearthError(err)) throw err
      throw unavailable(url, `storage failed: ${(err as Error).message}`, err)
    }
    if (bytes.byteLength > maxBytes) throw tooLarge(url, maxBytes)
    return bytes
  }

  async function fromHttp (url: string, signal: AbortSignal): Promise<Uint8Array> {
    let response: Response
    try {
      response = await doFetch(url, { signal, redirect: 'follow', headers: { accept: 'application/json' } })
    } catch (err) {
      throw unavailable(url, signal.aborted ? `no answer within ${timeoutMs} ms` : `request failed: ${causeText(err)}`, err)
    }
    if (!response.ok) {
      await response.body?.cancel().catch(() => {})
      throw unavailable(url, `HTTP ${response.status}`, undefined, response.status === 404 ? 'not-found' : undefined)
    }
    try {
      return await readBodyLimited(response, maxBytes)
    } catch (err) {
      if (err instanceof BodyTooLargeError) throw tooLarge(url, maxBytes)
      throw unavailable(url, signal.aborted ? `no complete answer within ${timeoutMs} ms` : `read failed: ${causeText(err)}`, err)
    }
  }

  return async function fetchDefinition (url, callOpts = {}) {
    const signal = callOpts.signal === undefined
      ? AbortSignal.timeout(timeoutMs)
      : AbortSignal.any([callOpts.signal, AbortSignal.timeout(timeoutMs)])
    const scheme = /^([a-z][a-z0-9+.-]*):\/\//i.exec(url)?.[1]?.toLowerCase()
    if (scheme === 'ipfs') return await fromIpfs(url, url.slice('ipfs://'.length), signal)
    if (scheme === 'https' || scheme === 'http') return await fromHttp(url, signal)
    throw unavailable(url, 'unsupported URL scheme (ipfs://, https:// and http:// are supported)')
  }
}

function unavailable (url: string, reason: string, cause?: unknown, kind?: 'not-found'): HearthError {
  return new HearthError('DEFINITION_UNAVAILABLE', `cannot fetch schema definition ${url}: ${reason}`,
    { url, reason, ...(kind !== undefined ? { kind } : {}) }, cause !== undefined ? { cause } : undefined)
}

function tooLarge (url: string, maxBytes: number): HearthError {
  const reason = `the definition is larger than ${maxBytes} bytes`
  return new HearthError('INVALID_SCHEMA_DEFINITION', `schema definition ${url}: ${reason}`, { url, reasons: [reason] })
}

function causeText (err: unknown): string {
  const cause = (err as { cause?: { code?: string; message?: string } }).cause
  return cause?.code ?? cause?.message ?? (err as Error).message
}
