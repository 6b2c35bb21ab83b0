// Where a missing ciphertext can come from, tried in order: local storage, then the remote
// sources the caller lists (the owner's connected devices over sync, then configured IPFS
// gateways). Restore and `hearth doctor` use the same fetcher.
//
// Nothing a remote source sends is trusted: the whole content is checked against the CID (the
// CID `add` gives those bytes, docs/protocol.md §3.3) before anything is stored, so a source that
// sends other bytes is refused with STORAGE_VERIFY_FAILED and the next one is tried, and nothing
// wrong ever reaches the blockstore. Verified content is stored and pinned through the backend's
// own `add`, which writes exactly the blocks of that CID.
import { HearthError, isHearthError, type ErrorCode } from '../errors.js'
import type { Logger } from '../log.js'
import { canonicalCid } from './cid.js'
import type { StorageBackend } from './types.js'
import { verifyContent } from './verified-reads.js'

export type BlockSourceKind = 'device' | 'gateway'

/** One remote place content can come from. */
export interface BlockSource {
  readonly kind: BlockSourceKind
  /** For people: "device 12D3Koo…", "gateway http://127.0.0.1:8080". */
  readonly name: string
  /**
   * The whole content of `cid`, or null when this source does not have it. May throw
   * STORAGE_VERIFY_FAILED (it sent bytes that are not the content), TIMEOUT, STORAGE_UNAVAILABLE
   * or FILE_TOO_LARGE; the fetcher checks the bytes again whatever the source did.
   */
  fetch (cid: string, opts: { signal: AbortSignal; maxBytes: number }): Promise<Uint8Array | null>
}

/** What one source answered for one CID. */
export interface FetchAttempt {
  source: string
  /** `missing` or the error code of the failure. */
  outcome: 'missing' | ErrorCode
  message?: string
}

export interface FetchedContent {
  bytes: Uint8Array
  /** `local storage` or the name of the remote source that had it. */
  source: string
  attempts: FetchAttempt[]
}

export interface CiphertextFetcher {
  /**
   * The content of `cid`, from local storage or else from the first remote source that has it
   * (then stored and pinned locally). When none has it: STORAGE_NOT_FOUND, or
   * STORAGE_VERIFY_FAILED when a source sent wrong bytes; `details.tried` lists every attempt and
   * the message says what would bring it.
   */
  fetch (cid: string, opts?: { signal?: AbortSignal }): Promise<FetchedContent>
}

export interface FetcherDeps {
  storage: Pick<StorageBackend, 'get' | 'add' | 'pin' | 'unpin'>
  /** The remote sources to try, in order, asked afresh for every CID (connected devices change). */
  remote: () => BlockSource[]
  /** Largest content accepted from a remote source. */
  maxBytes: number
  /** Longest one remote source may take for one CID. */
  sourceTimeoutMs: number
  /**
   * A source that timed out or could not be reached is not asked again for this long (default
   * 60 s), so a round over many missing files does not wait out its deadline once per file.
   */
  downForMs?: number
  logger: Logger
}

/** Outcomes that say the source itself is down, not that it lacks one CID. */
const SOURCE_DOWN = new Set<FetchAttempt['outcome']>(['TIMEOUT', 'STORAGE_UNAVAILABLE'])

export function createCiphertextFetcher (deps: FetcherDeps): CiphertextFetcher {
  const down = new Map<string, { until: number; outcome: FetchAttempt['outcome'] }>()
  return {
    async fetch (cidText, opts = {}) {
      const cid = canonicalCid(cidText)
      const attempts: FetchAttempt[] = []
      try {
        const bytes = await deps.storage.get(cid, { signal: opts.signal })
        await deps.storage.pin(cid).catch(() => {})
        return { bytes, source: 'local storage', attempts }
      } catch (err) {
        // damaged here counts as missing here: a verified copy from elsewhere replaces it
        if (!isHearthError(err, 'STORAGE_NOT_FOUND') && !isHearthError(err, 'STORAGE_VERIFY_FAILED')) throw err
        attempts.push({ source: 'local storage', outcome: isHearthError(err, 'STORAGE_NOT_FOUND') ? 'missing' : 'STORAGE_VERIFY_FAILED', ...(isHearthError(err, 'STORAGE_VERIFY_FAILED') ? { message: err.message } : {}) })
      }
      const sources = deps.remote()
      for (const source of sources) {
        opts.signal?.throwIfAborted()
        const wasDown = down.get(source.name)
        if (wasDown !== undefined && wasDown.until > Date.now()) {
          attempts.push({ source: source.name, outcome: wasDown.outcome, message: `not asked: it failed with ${wasDown.outcome} moments ago (asked again after ${new Date(wasDown.until).toISOString()})` })
          continue
        }
        down.delete(source.name)
        const attempt = await fromSource(deps, source, cid, opts.signal)
        if ('bytes' in attempt) {
          await store(deps, cid, attempt.bytes, attempts[0]?.outcome === 'STORAGE_VERIFY_FAILED')
          deps.logger.info({ cid, source: source.name, bytes: attempt.bytes.byteLength }, 'fetched a missing ciphertext')
          return { bytes: attempt.bytes, source: source.name, attempts }
        }
        attempts.push(attempt)
        if (SOURCE_DOWN.has(attempt.outcome)) down.set(source.name, { until: Date.now() + (deps.downForMs ?? 60_000), outcome: attempt.outcome })
      }
      throw notFound(cid, attempts, sources)
    }
  }
}

/** The verified content from one source, or what it answered instead. */
async function fromSource (deps: FetcherDeps, source: BlockSource, cid: string, outer?: AbortSignal): Promise<{ bytes: Uint8Array } | FetchAttempt> {
  const timeout = AbortSignal.timeout(deps.sourceTimeoutMs)
  const signal = outer === undefined ? timeout : AbortSignal.any([outer, timeout])
  try {
    const bytes = await source.fetch(cid, { signal, maxBytes: deps.maxBytes })
    if (bytes === null) return { source: source.name, outcome: 'missing' }
    if (bytes.byteLength > deps.maxBytes) throw new HearthError('FILE_TOO_LARGE', `${source.name} sent more than ${deps.maxBytes} bytes`)
    await verifyContent(cid, bytes)
    return { bytes }
  } catch (err) {
    if (outer?.aborted === true) throw err
    if (timeout.aborted && !isHearthError(err)) {
      return { source: source.name, outcome: 'TIMEOUT', message: `no complete answer within ${deps.sourceTimeoutMs} ms` }
    }
    const outcome = isHearthError(err) ? err.code : 'STORAGE_UNAVAILABLE'
    const message = (err as Error)?.message ?? String(err)
    if (outcome === 'STORAGE_VERIFY_FAILED') deps.logger.warn({ cid, source: source.name }, 'a source sent bytes that do not match the CID; refused, nothing stored')
    else deps.logger.debug({ cid, source: source.name, outcome, err: message }, 'a source could not provide a ciphertext')
    return { source: source.name, outcome, message }
  }
}

/**
 * Store and pin verified content here; a failure of this device's storage goes to the caller
 * (it is no source's fault). `add` leaves a pinned block of the right size alone, so a damaged
 * copy loses its pin first (its blocks are then written again) and is read back to be sure.
 */
async function store (deps: FetcherDeps, cid: string, bytes: Uint8Array, damagedHere: boolean): Promise<void> {
  if (damagedHere) await deps.storage.unpin(cid).catch(() => {})
  const stored = await deps.storage.add(bytes)
  if (stored !== cid) throw new HearthError('STORAGE_VERIFY_FAILED', `verified content of ${cid} was stored as ${stored}`, { cid })
  if (!damagedHere) return
  try {
    await deps.storage.get(cid)
  } catch (err) {
    if (!isHearthError(err, 'STORAGE_VERIFY_FAILED')) throw err
    throw new HearthError('STORAGE_VERIFY_FAILED', `a verified copy of ${cid} was fetched, but the damaged one in local storage could not be replaced`, { cid })
  }
}

function notFound (cid: string, attempts: FetchAttempt[], sources: BlockSource[]): HearthError {
  const lied = attempts.some((a) => a.outcome === 'STORAGE_VERIFY_FAILED' && a.source !== 'local storage')
  const tried = attempts.map((a) => `${a.source}: ${a.outcome}`).join('; ')
  return new HearthError(lied ? 'STORAGE_VERIFY_FAILED' : 'STORAGE_NOT_FOUND',
    `no source had ${cid} (${tried}); ${nextStep(sources)}`, { cid, tried: attempts, next: nextStep(sources) })
}

/** What would bring a ciphertext no source had, given which kinds of sources were tried. */
export function nextStep (sources: readonly Pick<BlockSource, 'kind'>[]): string {
  const steps: string[] = []
  steps.push(sources.some((s) => s.kind === 'device')
    ? 'start the device that holds it, connected to this one'
    : 'connect a device that holds it (`hearth peers add <its address>`)')
  steps.push(sources.some((s) => s.kind === 'gateway')
    ? 'configure another IPFS gateway that has it (`restore.gateways`)'
    : 'configure an IPFS gateway that has it (`restore.gateways`)')
  steps.push('or run on a Kubo node that has it (`hearth storage migrate --to kubo`)')
  return steps.join(', ')
}
