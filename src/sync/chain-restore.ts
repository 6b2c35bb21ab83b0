// Sync through the chain (docs/protocol.md §3.4): the owner's FileAddedV2 records name every file any of
// their devices registered. Each one not held here is fetched (local storage, then the owner's
// connected devices, then configured gateways: storage/block-sources.ts), its schema resolved,
// decrypted, validated and written into the data folder by the normal pipeline. Used by
// `hearth restore` on a new device and, in the background, to pick up other devices' files.
// Resumable (the last fully handled block is persisted) and idempotent (files are matched by
// CID and by fileId, so a repeated round writes nothing twice).
import { HearthError, isHearthError } from '../errors.js'
import type { Logger } from '../log.js'
import type { Kv } from '../db/database.js'
import type { FileIndex } from '../db/file-index.js'
import type { CiphertextFetcher, FetchAttempt } from '../storage/block-sources.js'
import type { ReceivedFile } from '../ingest/pipeline.js'

export interface RestoreProgress {
  fromBlock: string
  toBlock: string
  scannedBlock: string
  found: number
  written: number
  present: number
  failed: number
  done: boolean
}

export interface RestoreFailure {
  fileId: string
  url: string
  errorCode: string
  message: string
  /** For a ciphertext no source had: what each source answered. */
  tried?: FetchAttempt[]
}

export interface RestoreResult extends RestoreProgress { failures: RestoreFailure[] }

/** A file registration as the chain reports it (FileAddedV2). */
export interface RegisteredFileEvent { fileId: bigint; url: string; schemaId: bigint }

/** What restore reads from the chain; the chain client provides it, sync does not depend on it. */
export interface RestoreChain {
  fileAddedEvents (query: { owner: `0x${string}`; fromBlock: bigint; toBlock: bigint }): Promise<RegisteredFileEvent[]>
  blockNumber (): Promise<bigint>
}

export interface ChainRestoreDeps {
  chain: RestoreChain
  owner: `0x${string}`
  index: Pick<FileIndex, 'byCid' | 'byFileId' | 'get' | 'put'>
  /** Local storage first, then remote sources; what it returns is verified, stored and pinned. */
  ciphertexts: Pick<CiphertextFetcher, 'fetch'>
  /** The pipeline's receive: decrypt, validate, write, index (origin 'chain', never re-registered). */
  receive (ciphertext: Uint8Array, meta: ReceivedFile): Promise<'written' | 'exists'>
  state: Kv<unknown>
  logger: Logger
  /** Blocks per log query. */
  blockRange?: number
}

const LAST_BLOCK = 'restore:lastBlock'
/**
 * Failures of a service that may come back (a lying source may be followed by an honest one):
 * the block range is scanned again next round.
 */
const RETRY_LATER = new Set(['STORAGE_UNAVAILABLE', 'STORAGE_NOT_FOUND', 'STORAGE_VERIFY_FAILED', 'STORAGE_FULL', 'SCHEMA_NOT_FOUND', 'TIMEOUT', 'CHAIN_UNAVAILABLE', 'DEFINITION_UNAVAILABLE'])

export async function restoreFromChain (deps: ChainRestoreDeps, opts: { onProgress?: (p: RestoreProgress) => void; signal?: AbortSignal } = {}): Promise<RestoreResult> {
  const range = BigInt(deps.blockRange ?? 5_000)
  const saved = await deps.state.get(LAST_BLOCK)
  const start = typeof saved === 'string' ? BigInt(saved) + 1n : 0n
  const head = await deps.chain.blockNumber()
  const progress: RestoreProgress = { fromBlock: start.toString(), toBlock: head.toString(), scannedBlock: (start - 1n).toString(), found: 0, written: 0, present: 0, failed: 0, done: false }
  const failures: RestoreFailure[] = []
  for (let from = start; from <= head; from += range) {
    if (opts.signal?.aborted === true) break
    const to = from + range - 1n < head ? from + range - 1n : head
    const events = await deps.chain.fileAddedEvents({ owner: deps.owner, fromBlock: from, toBlock: to })
    let rangeComplete = true
    for (const event of events) {
      progress.found++
      const fileId = event.fileId.toString()
      const cid = event.url.startsWith('ipfs://') ? event.url.slice('ipfs://'.length) : null
      try {
        if (cid === null) throw new HearthError('INVALID_ARGUMENT', `file ${fileId} has a non-IPFS url ${event.url}`)
        const known = await deps.index.byFileId(fileId) ?? (await deps.index.byCid(cid))[0] ?? null
        if (known !== null) {
          // ours already (this device or a peer); remember its on-chain id if it lacked one
          if (known.fileId == null) await deps.index.put({ ...known, fileId, state: 'registered', updatedAt: Date.now() })
          progress.present++
          continue
        }
        const { bytes: ciphertext } = await deps.ciphertexts.fetch(cid, { signal: opts.signal })
        const outcome = await deps.receive(ciphertext, { cid, schemaId: event.schemaId.toString(), fileId, origin: 'chain' })
        if (outcome === 'written') progress.written++; else progress.present++
      } catch (err) {
        progress.failed++
        const errorCode = isHearthError(err) ? err.code : 'INTERNAL'
        const tried = isHearthError(err) && Array.isArray(err.details?.tried) ? { tried: err.details.tried as FetchAttempt[] } : {}
        failures.push({ fileId, url: event.url, errorCode, message: (err as Error).message, ...tried })
        // storage or schema source down: come back to this range; a bad file stays failed
        if (RETRY_LATER.has(errorCode)) rangeComplete = false
        deps.logger.warn({ fileId, url: event.url, errorCode, err: (err as Error).message }, 'restore of a file failed')
      }
    }
    progress.scannedBlock = to.toString()
    if (rangeComplete && failures.every((f) => !RETRY_LATER.has(f.errorCode))) {
      await deps.state.put(LAST_BLOCK, to.toString())
    }
    opts.onProgress?.({ ...progress })
  }
  progress.done = true
  opts.onProgress?.({ ...progress })
  return { ...progress, failures }
}
