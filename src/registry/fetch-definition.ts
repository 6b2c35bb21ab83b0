// Fetching the document at a schema's definitionUrl (docs/protocol.md §3.2): `ipfs://<cid>` through
// the storage backend, `https://` with a deadline and a size limit enforced while streaming, so a
// hostile or broken URL registered on chain can neither hang resolution nor exhaust memory.
// Anyone can register a URL, so by default a fetch never reaches this machine or its network
// (loopback, private, link-local... addresses are refused, checked on the address connected to
// and again on every redirect), and plain `http://` is refused; both can be allowed for a
// registry on the owner's own network (`schemas.allowPrivateDefinitionUrls`, `allowHttpDefinitionUrls`).
import { isIP } from 'node:net'
import { CID } from 'multiformats/cid'
import type { Agent } from 'undici'
import { HearthError, isHearthError } from '../errors.js'
import type { StorageBackend } from '../storage/types.js'
import { untilAborted } from './abort.js'
import { BodyTooLargeError, readBodyLimited } from './http-body.js'
import { InternalAddressError, isInternalAddress, publicOnlyLookup } from './address-policy.js'

export type DefinitionFetcher = (url: string, opts?: { signal?: AbortSignal }) => Promise<Uint8Array>

export interface DefinitionFetcherOptions {
  storage: Pick<StorageBackend, 'get'>
  /** Deadline for one fetch, storage or HTTP. Default 10 s. */
  timeoutMs?: number
  /** Largest definition accepted. Default 1 MiB. */
  maxBytes?: number
  /** Allow `http://` definition URLs (default false: ipfs:// and https:// only). */
  allowHttp?: boolean
  /** Allow loopback, private and other internal addresses (default false). */
  allowPrivateAddresses?: boolean
  /** The fetch implementation; undici's fetch with the address check by default. */
  fetch?: typeof globalThis.fetch
}

const MAX_REDIRECTS = 3

// One connection pool for all definition fetches that checks every address it connects to.
let publicAgent: Agent | undefined

export function createDefinitionFetcher (opts: DefinitionFetcherOptions): DefinitionFetcher {
  const timeoutMs = opts.timeoutMs ?? 10_000
  const maxBytes = opts.maxBytes ?? 1024 * 1024
  const allowHttp = opts.allowHttp ?? false
  const allowPrivate = opts.allowPrivateAddresses ?? false
  const doFetch: typeof globalThis.fetch = opts.fetch ?? (allowPrivate
    ? globalThis.fetch
    : (async (url: string | URL | Request, init?: RequestInit) => {
        // undici loads with the first definition fetch, not with the daemon
        const undici = await import('undici')
        return await undici.fetch(url as string, {
          ...(init as object),
          dispatcher: (publicAgent ??= new undici.Agent({ connect: { lookup: publicOnlyLookup } }))
        }) as unknown as Response
      }) as typeof globalThis.fetch)

  /** Why `url` may not be fetched, or null. Checked for the URL given and every redirect. */
  function refusal (url: URL): string | null {
    if (url.protocol !== 'https:' && !(url.protocol === 'http:' && allowHttp)) {
      return allowHttp ? 'unsupported URL scheme (ipfs://, https:// and http:// are allowed)' : 'unsupported URL scheme (ipfs:// and https:// are allowed; http:// only with schemas.allowHttpDefinitionUrls)'
    }
    const host = url.hostname.replace(/^\[|\]$/g, '')
    if (!allowPrivate && isIP(host) !== 0 && isInternalAddress(host)) {
      return `${host} is an internal address (allowed only with schemas.allowPrivateDefinitionUrls)`
    }
    return null
  }

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
    let target: URL
    try {
      target = new URL(url)
    } catch {
      throw unavailable(url, 'not a valid URL')
    }
    for (let hop = 0; ; hop++) {
      const refused = refusal(target)
      if (refused !== null) throw unavailable(url, hop === 0 ? refused : `redirected to ${target.href}: ${refused}`, undefined, 'refused')
      try {
        response = await doFetch(target.href, { signal, redirect: 'manual', headers: { accept: 'application/json' } })
      } catch (err) {
        const internal = findInternalAddressError(err)
        if (internal !== null) throw unavailable(url, `${internal.message} (allowed only with schemas.allowPrivateDefinitionUrls)`, err, 'refused')
        throw unavailable(url, signal.aborted ? `no answer within ${timeoutMs} ms` : `request failed: ${causeText(err)}`, err)
      }
      const location = response.headers.get('location')
      if (response.status < 300 || response.status > 399 || location === null) break
      await response.body?.cancel().catch(() => {})
      if (hop >= MAX_REDIRECTS) throw unavailable(url, `more than ${MAX_REDIRECTS} redirects`)
      target = new URL(location, target)
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
    throw unavailable(url, 'unsupported URL scheme (ipfs:// and https:// are allowed)', undefined, 'refused')
  }
}

function findInternalAddressError (err: unknown): InternalAddressError | null {
  for (let e = err, depth = 0; e !== null && e !== undefined && depth < 5; e = (e as { cause?: unknown }).cause, depth++) {
    if (e instanceof InternalAddressError || (e as { code?: string }).code === 'EINTERNALADDRESS') return e as InternalAddressError
  }
  return null
}

function unavailable (url: string, reason: string, cause?: unknown, kind?: 'not-found' | 'refused'): HearthError {
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
